/**
 * The three direct fits as the CLI runs them: read the input, fit, write the outputs
 * (`fit-output.ts`) and return the text to print. Paths in reports are as the user gave them.
 */
import { dirname } from 'node:path';
import { InputError } from '../config/errors.js';
import { readAiperfRun } from '../io/read-aiperf.js';
import { checkOutputDir } from '../io/write-output.js';
import { CalibrateUsageError, checkHoldout, refuseUntrusted } from './arguments.js';
import { fitDetokenization, readDetokenizationJobs, type DetokenizationModel } from './detokenization.js';
import { round6, formatFitText, writeFitReport, type FitReport } from './fit-output.js';
import type { LinearFit } from './fit-linear.js';
import { LINEAR_TERMS } from '../config/linear-timing.js';
import { fitPassTime, passRoleColumns, readPasses, type PassLayout } from './pass-time.js';
import { readTable, selectRows, type Table } from './read-table.js';
import { formatSelection, type ColumnSelection } from '../io/selection.js';
import { fitResponseOverhead, readAiperfGaps, readGapTable, singlePointReason, type ResponseGap } from './response-overhead.js';
import { rolePath } from '../config/roles.js';

export interface DirectFitCommon {
  /** Output folder; nothing is written when undefined. */
  out?: string;
  holdout?: number;
  /** role -> column renames. */
  mapping?: Record<string, string>;
  /** Write a fit that cannot be trusted (`--force`); refused otherwise. */
  force?: boolean;
}

/** What every direct fit checks before reading its input: the flags, and an output folder that can be one. */
function checkCommon(options: DirectFitCommon): void {
  checkHoldout(options.holdout);
  if (options.out !== undefined) checkOutputDir(options.out);
}

/** A table with a header and no rows is an input error naming the file. */
function requireRows(table: Table, what: string): Table {
  if (table.rows.length === 0) throw new InputError(table.file, 0, `has a header but no rows: nothing to fit ${what} on`);
  return table;
}

export interface DirectFitOutcome {
  report: FitReport;
  text: string;
  files: string[];
  /** The two-term fit reported beside a four-term one (detokenization). */
  companion?: LinearFit;
}

function valueOf(fit: LinearFit, name: string): number {
  return round6(fit.coefficients[name]?.value ?? 0);
}

async function finish(report: FitReport, featureNames: readonly string[], out: string | undefined): Promise<DirectFitOutcome> {
  const files = out === undefined ? [] : await writeFitReport(out, report, featureNames);
  return { report, text: formatFitText(report, out ?? null), files };
}

export async function runDetokenizationFit(
  options: DirectFitCommon & { input: string; model: DetokenizationModel },
): Promise<DirectFitOutcome> {
  checkCommon(options);
  const table = requireRows(readTable(options.input), 'the detokenization costs');
  const jobs = readDetokenizationJobs(table, options.mapping);
  if (options.model === 'four-term' && jobs.some((job) => Number.isNaN(job.firstOutputs) || Number.isNaN(job.finalOutputs))) {
    throw new InputError(
      options.input,
      1,
      `the four-term model needs first_outputs and final_outputs columns (columns: ${table.columns.join(', ')}); name them with --map first_outputs=COLUMN`,
    );
  }
  const servers = new Set(jobs.map((job) => job.server)).size;
  const twoTerm = fitDetokenization(jobs, 'two-term', { holdout: options.holdout });
  const fit = options.model === 'four-term' ? fitDetokenization(jobs, 'four-term', { holdout: options.holdout }) : twoTerm;
  refuseUntrusted(options.input, fit.untrusted, options.force, fit.notes);
  if (options.model === 'four-term') {
    fit.notes.push(
      `the run config prices detokenization with base_ms and per_output_us only: the snippet holds the two-term fit (base_ms ${valueOf(twoTerm, 'base_ms')} ms, per_output_us ${valueOf(twoTerm, 'per_output_us')} us, RMSE ${round6(twoTerm.rmse)} ms); the four-term coefficients are for comparison`,
    );
  }
  const report: FitReport = {
    target: 'detokenization',
    model: options.model,
    inputs: [options.input],
    fit,
    snippet: {
      'engine.detokenization': { workers: servers, base_ms: valueOf(twoTerm, 'base_ms'), per_output_us: valueOf(twoTerm, 'per_output_us') },
    },
    extra: {
      servers,
      jobs: jobs.length,
      ...(options.model === 'four-term'
        ? {
            two_term: {
              base_ms: valueOf(twoTerm, 'base_ms'),
              per_output_us: valueOf(twoTerm, 'per_output_us'),
              rmse: round6(twoTerm.rmse),
              mae: round6(twoTerm.mae),
            },
          }
        : {}),
    },
  };
  const featureNames = options.model === 'four-term' ? ['outputs', 'first_outputs', 'final_outputs'] : ['outputs'];
  return { ...(await finish(report, featureNames, options.out)), companion: twoTerm };
}

/** How many gaps saw each number of other requests in flight: the in-flight term needs two or more values. */
function inflightSpread(gaps: readonly ResponseGap[]): Record<string, number> {
  const counts = new Map<number, number>();
  for (const gap of gaps) counts.set(gap.inflight, (counts.get(gap.inflight) ?? 0) + 1);
  return Object.fromEntries([...counts.entries()].sort(([a], [b]) => a - b).map(([k, v]) => [String(k), v]));
}

/**
 * Why the AIPerf runs at `path` are open-loop (a request rate, a fixed schedule or a trace), or
 * null: the gap from a response to the next request measures the client only in a closed loop,
 * where the next request waits for the response.
 */
function openLoopReason(path: string, files: readonly string[]): string | null {
  for (const file of files) {
    let run;
    try {
      run = readAiperfRun(dirname(file));
    } catch {
      continue; // A bare per-request file without a summary: its load is unknown.
    }
    const config = run.summary.inputConfig as Record<string, unknown> | undefined;
    const phases = Array.isArray(config?.phases) ? (config.phases as Array<Record<string, unknown>>) : [];
    const datasets = Array.isArray(config?.datasets) ? (config.datasets as Array<Record<string, unknown>>) : [];
    const input = config?.input as Record<string, unknown> | undefined;
    const type = phases.map((phase) => phase.type).find((t): t is string => typeof t === 'string' && t !== 'concurrency');
    if (run.load.requestRate !== undefined) return `${run.dir} was measured at a request rate of ${run.load.requestRate}/s (an open loop)`;
    if (type !== undefined) return `${run.dir} was measured with a ${type} schedule (an open loop)`;
    if (input?.fixed_schedule === true || datasets.some((d) => typeof d.type === 'string' && /trace|schedule/.test(d.type))) {
      return `${run.dir} replays a trace or fixed schedule (an open loop)`;
    }
  }
  void path;
  return null;
}

export async function runResponseOverheadFit(
  options: DirectFitCommon & { aiperf?: string | readonly string[]; input?: string },
): Promise<DirectFitOutcome> {
  const runs = options.aiperf === undefined ? [] : typeof options.aiperf === 'string' ? [options.aiperf] : options.aiperf;
  if ((runs.length === 0) === (options.input === undefined)) {
    throw new CalibrateUsageError(
      runs.length === 0
        ? 'give the measured gaps: --aiperf RUN_DIR (one or more AIPerf runs) or --input GAPS.csv (output_tokens,gap_ms[,inflight])'
        : 'give one of --aiperf and --input, not both',
    );
  }
  checkCommon(options);
  let gaps: ResponseGap[];
  let extra: Record<string, unknown>;
  let inputs: string[];
  let openLoop: string | null = null;
  if (runs.length > 0) {
    gaps = [];
    inputs = [];
    const skipped: Record<string, number> = {};
    for (const run of runs) {
      const read = readAiperfGaps(run);
      gaps.push(...read.gaps);
      inputs.push(...read.files);
      for (const [reason, count] of Object.entries(read.skipped)) skipped[reason] = (skipped[reason] ?? 0) + count;
      openLoop ??= openLoopReason(run, read.files);
    }
    extra = { gaps: gaps.length, skipped, slots: new Set(gaps.map((gap) => gap.slot)).size, inflight: inflightSpread(gaps) };
  } else {
    gaps = readGapTable(requireRows(readTable(options.input as string), 'the response overhead'), options.mapping);
    inputs = [options.input as string];
    extra = { gaps: gaps.length };
  }
  const source = runs.length > 0 ? runs.join(', ') : (options.input as string);
  if (gaps.length === 0)
    throw new InputError(source, 0, `no response-to-next-request gap in ${inputs.join(', ')} (a slot needs two requests)`);
  const fit = fitResponseOverhead(gaps, { holdout: options.holdout });
  const reasons = [...fit.untrusted];
  const onePoint = singlePointReason(gaps);
  if (onePoint !== null && reasons.length === 0) reasons.push(onePoint);
  if (openLoop !== null) {
    reasons.unshift(
      `${openLoop}: the next request does not wait for the response, so the gap measures the load's schedule, not the client; measure at a fixed concurrency`,
    );
  }
  refuseUntrusted(source, reasons, options.force, fit.notes);
  const report: FitReport = {
    target: 'response-overhead',
    model: 'base + per output token + per other request in flight',
    inputs,
    fit,
    snippet: {
      'traffic.load.response_overhead': {
        base_ms: valueOf(fit, 'base_ms'),
        per_output_token_us: valueOf(fit, 'per_output_token_us'),
        per_inflight_us: valueOf(fit, 'per_inflight_us'),
      },
    },
    extra,
  };
  return finish(report, ['output_tokens', 'inflight'], options.out);
}

export async function runPassTimeFit(
  options: DirectFitCommon & { input: string; layout: PassLayout; select?: readonly ColumnSelection[] },
): Promise<DirectFitOutcome> {
  checkCommon(options);
  const selections = options.select ?? [];
  const table = selectRows(readTable(options.input), selections);
  if (table.rows.length === 0) {
    throw new InputError(
      options.input,
      0,
      selections.length > 0
        ? `no row has ${selections.map(formatSelection).join(' and ')}; nothing to fit`
        : 'has a header but no rows: nothing to fit',
    );
  }
  const roles = passRoleColumns(table, options.layout, options.mapping);
  const passes = readPasses(table, options.layout, options.mapping);
  const fit = fitPassTime(passes, { holdout: options.holdout, columns: roles.features });
  const reasons = [...fit.untrusted];
  const mixed = deploymentMix(table, roles.all);
  if (mixed !== null) reasons.unshift(mixed);
  refuseUntrusted(options.input, reasons, options.force, fit.notes);
  const timing: Record<string, unknown> = { type: 'linear' };
  for (const name of ['base_ms', ...LINEAR_TERMS.map((term) => term.name)]) timing[name] = valueOf(fit, name);
  const report: FitReport = {
    target: 'pass-time',
    model: 'linear',
    inputs: [options.input],
    fit,
    snippet: { [`${rolePath('aggregated')}.timing`]: timing },
    extra: { layout: options.layout, passes: passes.length, selection: (options.select ?? []).map(formatSelection) },
  };
  return finish(report, ['prefill_tokens', 'prefill_pairs', 'decode_requests', 'decode_kv_tokens'], options.out);
}

/**
 * Columns that are not read by the fit and name the deployment a row was measured on (text or
 * whole numbers: model, hardware, tensor_parallel), when they take several values among the rows:
 * a fit over several deployments is a model of none. Measurement columns (fractional numbers)
 * are not counted.
 */
export function deploymentMix(table: Table, roleColumns: readonly string[]): string | null {
  const used = new Set(roleColumns);
  const mixed: Array<{ column: string; values: string[] }> = [];
  for (const column of table.columns) {
    if (used.has(column) || column === '') continue;
    const values = new Set<string>();
    let categorical = true;
    for (const row of table.rows) {
      const cell = row.cells[column];
      const number = cell === '' ? NaN : Number(cell);
      if (Number.isFinite(number) && !Number.isInteger(number)) {
        categorical = false;
        break;
      }
      values.add(cell);
    }
    if (categorical && values.size > 1) mixed.push({ column, values: [...values].sort() });
  }
  if (mixed.length === 0) return null;
  const shown = mixed.map((m) => `${m.column} (${m.values.slice(0, 4).join(', ')}${m.values.length > 4 ? ', ...' : ''})`).join(', ');
  const example = mixed.map((m) => `--select ${m.column}=${m.values[0]}`).join(' ');
  return `the rows mix several deployments by ${shown}: one fit over them models none of them; select one with ${example}`;
}
