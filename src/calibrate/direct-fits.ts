/**
 * The three direct fits as the CLI runs them: read the input, fit, write the outputs
 * (`fit-output.ts`) and return the text to print. Paths in reports are as the user gave them.
 */
import { fitDetokenization, readDetokenizationJobs, type DetokenizationModel } from './detokenization.js';
import { round6, formatFitText, writeFitReport, type FitReport } from './fit-output.js';
import type { LinearFit } from './fit-linear.js';
import { LINEAR_TERMS } from './features.js';
import { fitPassTime, readPasses, type PassLayout } from './pass-time.js';
import { readTable, selectRows } from './read-table.js';
import { formatSelection, type ColumnSelection } from '../io/selection.js';
import { fitResponseOverhead, readAiperfGaps, readGapTable, type ResponseGap } from './response-overhead.js';

export interface DirectFitCommon {
  /** Output folder; nothing is written when undefined. */
  out?: string;
  holdout?: number;
  /** role -> column renames. */
  mapping?: Record<string, string>;
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
  const table = readTable(options.input);
  const jobs = readDetokenizationJobs(table, options.mapping);
  const servers = new Set(jobs.map((job) => job.server)).size;
  const twoTerm = fitDetokenization(jobs, 'two-term', { holdout: options.holdout });
  const fit = options.model === 'four-term' ? fitDetokenization(jobs, 'four-term', { holdout: options.holdout }) : twoTerm;
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

export async function runResponseOverheadFit(
  options: DirectFitCommon & { aiperf?: string | readonly string[]; input?: string },
): Promise<DirectFitOutcome> {
  const runs = options.aiperf === undefined ? [] : typeof options.aiperf === 'string' ? [options.aiperf] : options.aiperf;
  if ((runs.length === 0) === (options.input === undefined))
    throw new Error('give either --aiperf RUN_DIR (one or more) or --input GAPS.csv');
  let gaps;
  let extra: Record<string, unknown>;
  let inputs: string[];
  if (runs.length > 0) {
    gaps = [];
    inputs = [];
    const skipped: Record<string, number> = {};
    for (const run of runs) {
      const read = readAiperfGaps(run);
      gaps.push(...read.gaps);
      inputs.push(...read.files);
      for (const [reason, count] of Object.entries(read.skipped)) skipped[reason] = (skipped[reason] ?? 0) + count;
    }
    extra = { gaps: gaps.length, skipped, slots: new Set(gaps.map((gap) => gap.slot)).size, inflight: inflightSpread(gaps) };
  } else {
    gaps = readGapTable(readTable(options.input as string), options.mapping);
    inputs = [options.input as string];
    extra = { gaps: gaps.length };
  }
  if (gaps.length === 0) throw new Error(`no response-to-next-request gap in ${inputs.join(', ')} (a slot needs two requests)`);
  const fit = fitResponseOverhead(gaps, { holdout: options.holdout });
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
  const table = selectRows(readTable(options.input), options.select ?? []);
  if (table.rows.length === 0)
    throw new Error(`no rows in ${options.input}${(options.select ?? []).length > 0 ? ' with the selection given' : ''}`);
  const passes = readPasses(table, options.layout, options.mapping);
  const fit = fitPassTime(passes, { holdout: options.holdout });
  const timing: Record<string, unknown> = { type: 'linear' };
  for (const name of ['base_ms', ...LINEAR_TERMS.map((term) => term.name)]) timing[name] = valueOf(fit, name);
  const report: FitReport = {
    target: 'pass-time',
    model: 'linear',
    inputs: [options.input],
    fit,
    snippet: { 'engine.workers.aggregated.timing': timing },
    extra: { layout: options.layout, passes: passes.length, selection: (options.select ?? []).map(formatSelection) },
  };
  return finish(report, ['prefill_tokens', 'prefill_pairs', 'decode_requests', 'decode_kv_tokens'], options.out);
}
