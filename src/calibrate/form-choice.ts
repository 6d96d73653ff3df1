/**
 * Which form `calibrate engine --form auto` fits (`data/engine-fit-forms.yaml`): per stratum
 * (backend x dense/MoE), the held-out errors of both forms on the engine-fit benchmark
 * (`npm run bench:accuracy -- --form compare --write-forms data/engine-fit-forms.yaml`: each
 * deployment fitted on its three lowest load points, every other point scored, saturated ones
 * included), the same on the check set (the deployments the benchmark does not use), and the form
 * chosen: the physics form where it is no worse than the linear form on either metric on both
 * sets, else the linear form, the simple fit (and the one for a stratum without evidence). Three
 * training points cannot decide it themselves: a
 * linear fit on two of them (leave one out) has four values for four to six constants.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { stringify } from 'yaml';
import { ConfigError, makeConfigIssue } from '../config/errors.js';
import { readYamlFile } from '../config/yaml.js';
import { packageRoot } from '../catalog/load.js';

const errorsSchema = z.strictObject({ ttft_mape: z.number().min(0), itl_mape: z.number().min(0) });
const checkSchema = z.strictObject({
  roofline: errorsSchema,
  linear: errorsSchema,
  points: z.int().min(0),
  deployments: z.int().min(0),
});
const rowSchema = z.strictObject({
  stratum: z.string().min(1),
  form: z.enum(['roofline', 'linear']),
  roofline: errorsSchema,
  linear: errorsSchema,
  points: z.int().min(0),
  deployments: z.int().min(0),
  /** The same comparison on the check set; absent when the check set has no deployment of the stratum. */
  check: checkSchema.optional(),
});
const fileSchema = z.strictObject({ basis: z.string().min(1), rows: z.array(rowSchema) });

export type FitFormsTable = z.output<typeof fileSchema>;
export type FitFormsRow = FitFormsTable['rows'][number];

export function fitFormsFile(): string {
  return join(packageRoot(), 'data', 'engine-fit-forms.yaml');
}

/** The table at `file`, or null when there is none. */
export function loadFitForms(file = fitFormsFile()): FitFormsTable | null {
  if (!existsSync(file)) return null;
  const parsed = fileSchema.safeParse(readYamlFile(file, file, 'catalog file'), { reportInput: true });
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => makeConfigIssue(file, issue.path.map(String).join('.'), issue.message)));
  }
  return parsed.data;
}

interface FormErrors {
  roofline: { ttft_mape: number; itl_mape: number };
  linear: { ttft_mape: number; itl_mape: number };
}

/**
 * The rule: the physics form where its held-out MAPE is no worse than the linear form's on TTFT
 * and on ITL, on the benchmark and on the check set (when it has the stratum), else linear.
 */
export function chooseForm(errors: FormErrors, check?: FormErrors): 'roofline' | 'linear' {
  const noWorse = (e: FormErrors) => e.roofline.ttft_mape <= e.linear.ttft_mape && e.roofline.itl_mape <= e.linear.itl_mape;
  return noWorse(errors) && (check === undefined || noWorse(check)) ? 'roofline' : 'linear';
}

/** Why `--form auto` picked a form: what fit.json's `form_choice` says. */
export interface FormChoice {
  requested: 'auto' | 'roofline' | 'linear';
  form: 'roofline' | 'linear';
  reason: string;
  evidence?: FitFormsRow;
}

/**
 * The form for a config: as asked when not `auto`; `linear` when the model or GPU is not in the
 * catalog; else the stratum's row of the table; the linear form where the table has no row (no
 * evidence that the physics form does better than the simple fit).
 */
export function autoForm(stratum: string | null, table: FitFormsTable | null = loadFitForms()): FormChoice {
  if (stratum === null)
    return { requested: 'auto', form: 'linear', reason: 'the model or the GPU is not in the catalog: the physics form needs both' };
  const row = table?.rows.find((r) => r.stratum === stratum);
  if (row === undefined) {
    return {
      requested: 'auto',
      form: 'linear',
      reason: `no benchmark evidence for ${stratum}: the linear form, as the physics form is not shown to do better there`,
    };
  }
  const c = row.check;
  const checkFigures =
    c === undefined
      ? ''
      : `; check set: physics ${c.roofline.ttft_mape} / ${c.roofline.itl_mape} %, linear ${c.linear.ttft_mape} / ${c.linear.itl_mape} % (${c.points} points of ${c.deployments} deployments)`;
  const figures = `held-out TTFT / ITL MAPE: physics ${row.roofline.ttft_mape} / ${row.roofline.itl_mape} %, linear ${row.linear.ttft_mape} / ${row.linear.itl_mape} % (${row.points} points of ${row.deployments} deployments)${checkFigures}`;
  return {
    requested: 'auto',
    form: row.form,
    reason:
      row.form === 'roofline'
        ? `${stratum}: the physics form is no worse than the linear one on the engine-fit benchmark${c === undefined ? '' : ' and its check set'}; ${figures}`
        : `${stratum}: the linear form did better on the engine-fit benchmark${c === undefined ? '' : ' or its check set'}; ${figures}`,
    evidence: row,
  };
}

/** The text of the table file. */
export function fitFormsFileText(rows: readonly FitFormsRow[], basis: string): string {
  const header = [
    'Which form `servesim calibrate engine --form auto` fits, per stratum (docs/calibration.md, "Two forms").',
    'Written by `npm run bench:accuracy -- --form compare --write-forms data/engine-fit-forms.yaml`; rerun it rather than editing by hand.',
    "Rule: the physics form (roofline) where its held-out MAPE is no worse than the linear form's on TTFT and on ITL, on the benchmark (roofline, linear) and on its check set (check: the deployments the benchmark does not use), else linear.",
  ];
  const round = (v: number) => Math.round(v * 10) / 10;
  const table: FitFormsTable = {
    basis,
    rows: rows.map((r) => ({
      ...r,
      roofline: { ttft_mape: round(r.roofline.ttft_mape), itl_mape: round(r.roofline.itl_mape) },
      linear: { ttft_mape: round(r.linear.ttft_mape), itl_mape: round(r.linear.itl_mape) },
      ...(r.check === undefined
        ? {}
        : {
            check: {
              ...r.check,
              roofline: { ttft_mape: round(r.check.roofline.ttft_mape), itl_mape: round(r.check.roofline.itl_mape) },
              linear: { ttft_mape: round(r.check.linear.ttft_mape), itl_mape: round(r.check.linear.itl_mape) },
            },
          }),
    })),
  };
  return `${header.map((l) => `# ${l}`).join('\n')}\n${stringify(table, { lineWidth: 0 })}`;
}
