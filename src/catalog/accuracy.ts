/**
 * How far catalog predictions are from measurements, per stratum (`data/accuracy.yaml`): the
 * leave-one-model-out accuracy benchmark writes it (`npm run bench:accuracy -- --zero-shot
 * --write-accuracy data/accuracy.yaml`), and a replay, sweep or plan made from catalog factors
 * quotes the row of its stratum (`accuracy` in summary.json, and beside the console's figures).
 * A stratum is a backend and a model family (dense or MoE), optionally narrowed to one GPU
 * where the sample measured enough points on it, or to the closed loops whose load generator drew
 * their lengths the same way as the run's (every request the same, or spread). Rows of
 * `all_points: true` replay every point of the stratum with the given lengths, whatever its load
 * generator drew (each with its launch's caps), and are what a run of synthetic lengths quotes first.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import english from 'zod/v4/locales/en.js';
import { stringify } from 'yaml';
import { ConfigError, makeConfigIssue } from '../config/errors.js';
import { readYamlFile } from '../config/yaml.js';
import { packageRoot } from './load.js';

/**
 * How a closed loop's lengths were drawn: `fixed` (every request the requested prompt and output
 * length, as AIPerf's defaults send them) or `drawn` (spread around or below them, as a random range
 * ratio below 1 or a standard deviation draws them).
 */
export type LengthsKind = 'fixed' | 'drawn';

/** `drawn` when a range ratio below 1 or any standard deviation spreads the lengths, else `fixed`. */
export function lengthsKindOf(rangeRatio: number, ...stddevs: readonly number[]): LengthsKind {
  return rangeRatio < 1 || stddevs.some((sd) => sd > 0) ? 'drawn' : 'fixed';
}

/** One stratum's errors: MAPE of TTFT avg and ITL avg, in percent, over `points` measured points. */
export interface AccuracyRow {
  stratum: string;
  /** Narrowed to one GPU (absent: every GPU of the stratum). */
  hardware?: string;
  /** Narrowed to the closed loops of these lengths (absent: every point of the stratum). */
  lengths?: LengthsKind;
  /**
   * true: every point of the stratum, each replayed with `lengths` (fixed: every request the
   * requested lengths; drawn: in [0.8 L, L]) whatever its load generator drew; absent: the points
   * measured with `lengths`, each replayed as it was measured.
   */
  all_points?: true;
  ttft_mape: number;
  itl_mape: number;
  points: number;
  deployments: number;
}

/** What summary.json says of a prediction's accuracy. */
export interface AccuracyBlock {
  /** How the figures were obtained: `leave-one-model-out` (the model left out of the fit), or `none` (no evidence). */
  basis: string;
  stratum: string;
  /** MAPE in percent over the stratum's measured points; null where the stratum has no evidence. */
  ttft_mape: number | null;
  itl_mape: number | null;
  points: number;
}

/** The backends and families the strata are named with. */
export const BACKEND_NAMES: Readonly<Record<string, string>> = { vllm: 'vLLM', sglang: 'SGLang', trtllm: 'TensorRT-LLM' };

/** The stratum of a backend and model family: `vLLM dense`, `SGLang MoE`. */
export function stratumOf(backend: string, moe: boolean, disaggregated = false): string {
  return `${BACKEND_NAMES[backend] ?? backend} ${moe ? 'MoE' : 'dense'}${disaggregated ? ' disagg' : ''}`;
}

/** Fewest points a GPU- or lengths-narrowed row must have to be quoted instead of its stratum's. */
export const MIN_GPU_ROW_POINTS = 20;

/** How a run's lengths read as a stratum's narrowing: `vLLM dense, fixed lengths`. */
const LENGTHS_WORDS: Readonly<Record<LengthsKind, string>> = { fixed: 'fixed lengths', drawn: 'drawn lengths' };

const rowSchema = z.strictObject({
  stratum: z.string().check(z.minLength(1)),
  hardware: z.optional(z.string().check(z.minLength(1))),
  lengths: z.optional(z.enum(['fixed', 'drawn'])),
  all_points: z.optional(z.literal(true)),
  ttft_mape: z.number().check(z.minimum(0)),
  itl_mape: z.number().check(z.minimum(0)),
  points: z.int().check(z.minimum(0)),
  deployments: z.int().check(z.minimum(0)),
});
const fileSchema = z.strictObject({
  basis: z.string().check(z.minLength(1)),
  rows: z.array(rowSchema),
});
/**
 * zod's own texts (every message here is one): zod/mini sets no locale, and classic zod sets
 * English only once one of its schemas is made, so the parse names it.
 */
const zodTexts = english().localeError;

export type AccuracyTable = z.output<typeof fileSchema>;

export function accuracyFile(): string {
  return join(packageRoot(), 'data', 'accuracy.yaml');
}

let cached: AccuracyTable | null | undefined;

/** The shipped table, or null when there is none. */
export function loadAccuracyTable(file = accuracyFile()): AccuracyTable | null {
  if (file === accuracyFile() && cached !== undefined) return cached;
  let table: AccuracyTable | null = null;
  if (existsSync(file)) {
    const parsed = fileSchema.safeParse(readYamlFile(file, file, 'catalog file'), { reportInput: true, error: zodTexts });
    if (!parsed.success) {
      throw new ConfigError(parsed.error.issues.map((issue) => makeConfigIssue(file, issue.path.map(String).join('.'), issue.message)));
    }
    table = parsed.data;
  }
  if (file === accuracyFile()) cached = table;
  return table;
}

/**
 * The accuracy a catalog prediction of this backend, family and GPU can claim. A run of synthetic
 * lengths (`lengths` given) quotes, in order, the first of these with at least MIN_GPU_ROW_POINTS
 * points: every point of its stratum replayed with those lengths (`all_points`), the stratum's
 * points measured with those lengths, the GPU's row of its stratum; else the stratum's row. Basis
 * `none` when the table has none of them.
 */
export function accuracyFor(
  backend: string,
  moe: boolean,
  hardware: string,
  table = loadAccuracyTable(),
  disaggregated = false,
  lengths?: LengthsKind,
): AccuracyBlock {
  const stratum = stratumOf(backend, moe, disaggregated);
  const rows = table?.rows ?? [];
  const enough = (r: AccuracyRow) => r.points >= MIN_GPU_ROW_POINTS;
  const ofStratum = (r: AccuracyRow) => r.stratum === stratum && r.hardware === undefined;
  const lengthsRow = (all: boolean) =>
    lengths === undefined
      ? undefined
      : rows.find((r) => ofStratum(r) && r.lengths === lengths && (r.all_points === true) === all && enough(r));
  const gpuRow = rows.find(
    (r) => r.stratum === stratum && r.hardware === hardware && r.lengths === undefined && r.all_points === undefined && enough(r),
  );
  const row =
    lengthsRow(true) ??
    lengthsRow(false) ??
    gpuRow ??
    rows.find((r) => ofStratum(r) && r.lengths === undefined && r.all_points === undefined);
  if (table === null || row === undefined || row.points === 0) {
    return { basis: 'none', stratum: `${stratum}${gpuRow ? ` on ${hardware}` : ''}`, ttft_mape: null, itl_mape: null, points: 0 };
  }
  return {
    basis: table.basis,
    stratum:
      row.hardware !== undefined
        ? `${stratum} on ${row.hardware}`
        : row.lengths !== undefined
          ? row.all_points
            ? `${stratum}, replayed with ${LENGTHS_WORDS[row.lengths]}`
            : `${stratum}, ${LENGTHS_WORDS[row.lengths]}`
          : stratum,
    ttft_mape: row.ttft_mape,
    itl_mape: row.itl_mape,
    points: row.points,
  };
}

/** The console's words for an accuracy block: `zero-shot; vLLM dense: typical error TTFT 18 %, ITL 9 % (312 points)`. */
export function describeAccuracy(block: AccuracyBlock): string {
  if (block.ttft_mape === null || block.itl_mape === null) return `zero-shot; ${block.stratum}: no measured evidence, error unknown`;
  return `zero-shot; ${block.stratum}: typical error TTFT ${Math.round(block.ttft_mape)} %, ITL ${Math.round(block.itl_mape)} % (${block.points} measured points, ${block.basis})`;
}

/** The text of the table file: a header saying how it was made, then the rows. */
export function accuracyFileText(
  rows: readonly AccuracyRow[],
  made: { basis: string; overall: { ttft: number; itl: number; n: number } },
): string {
  const round = (v: number) => Math.round(v * 10) / 10;
  const header = [
    'How far catalog predictions are from measurements, per stratum (docs/hardware-and-models.md).',
    'Written by `npm run bench:accuracy -- --zero-shot --write-accuracy data/accuracy.yaml`; rerun it rather than editing by hand.',
    `Basis: ${made.basis}; overall TTFT avg MAPE ${round(made.overall.ttft)} %, ITL avg MAPE ${round(made.overall.itl)} % over ${made.overall.n} points.`,
  ];
  const table: AccuracyTable = {
    basis: made.basis,
    rows: rows.map((r) => ({ ...r, ttft_mape: round(r.ttft_mape), itl_mape: round(r.itl_mape) })),
  };
  return `${header.map((l) => `# ${l}`).join('\n')}\n${stringify(table, { lineWidth: 0 })}`;
}
