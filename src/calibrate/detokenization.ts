/**
 * Detokenization fit (docs/calibration.md, docs/client-path.md): one row per detokenizer job (pass end,
 * server, outputs in the job, client receive time). Jobs of one server are served FIFO, so a
 * job's service time is `received - max(pass_end, previous received on that server)`. Fitted:
 * `service_ms = base_ms + per_output_us * outputs / 1000`, and optionally a four-term model with
 * separate costs for outputs that are a request's first output and its final output (a finer
 * split to compare with); the four-term model needs `first_outputs` and `final_outputs` columns.
 */
import { InputError } from '../config/errors.js';
import { fitLinearModel, log2Bucket, type FitOptions, type FitRow, type LinearFit, type LinearModelSpec } from './fit-linear.js';
import { numberCell, requireColumn, type Table } from './read-table.js';

export const DETOKENIZATION_COLUMNS = ['pass_end_ms', 'server', 'outputs', 'received_ms'] as const;
export const DETOKENIZATION_FOUR_TERM_COLUMNS = ['first_outputs', 'final_outputs'] as const;

export interface DetokenizationJob {
  /** `file:line`. */
  source: string;
  file: string;
  line: number;
  passEndMs: number;
  server: string;
  outputs: number;
  receivedMs: number;
  firstOutputs: number;
  finalOutputs: number;
}

export interface DetokenizationService extends DetokenizationJob {
  /** `received - max(pass_end, previous received on the same server)`. */
  serviceMs: number;
}

export type DetokenizationModel = 'two-term' | 'four-term';

/** Reads jobs; `mapping` renames columns (role -> column). Four-term columns are read when present. */
export function readDetokenizationJobs(table: Table, mapping: Record<string, string> = {}): DetokenizationJob[] {
  const col = (role: string) => requireColumn(table, mapping[role] ?? role, role);
  const passEnd = col('pass_end_ms');
  const server = col('server');
  const outputs = col('outputs');
  const received = col('received_ms');
  const first = table.columns.includes(mapping.first_outputs ?? 'first_outputs') ? (mapping.first_outputs ?? 'first_outputs') : null;
  const final = table.columns.includes(mapping.final_outputs ?? 'final_outputs') ? (mapping.final_outputs ?? 'final_outputs') : null;
  return table.rows.map((row) => {
    const job: DetokenizationJob = {
      source: `${table.file}:${row.line}`,
      file: table.file,
      line: row.line,
      passEndMs: numberCell(table, row, passEnd, false),
      server: row.cells[server],
      outputs: numberCell(table, row, outputs),
      receivedMs: numberCell(table, row, received, false),
      firstOutputs: first ? numberCell(table, row, first) : NaN,
      finalOutputs: final ? numberCell(table, row, final) : NaN,
    };
    if (job.receivedMs < job.passEndMs)
      throw new InputError(table.file, row.line, `received_ms ${job.receivedMs} is before pass_end_ms ${job.passEndMs}`);
    if (job.outputs < 1) throw new InputError(table.file, row.line, `outputs: a job has at least one output, got ${job.outputs}`);
    return job;
  });
}

/** FIFO service times per server, jobs in pass-end order (ties by receive time, then input order). */
export function serviceTimes(jobs: readonly DetokenizationJob[]): DetokenizationService[] {
  const order = jobs.map((job, index) => ({ job, index }));
  order.sort((a, b) => a.job.passEndMs - b.job.passEndMs || a.job.receivedMs - b.job.receivedMs || a.index - b.index);
  const lastReceived = new Map<string, number>();
  const out: Array<{ index: number; service: DetokenizationService }> = [];
  for (const { job, index } of order) {
    const previous = lastReceived.get(job.server) ?? -Infinity;
    const start = Math.max(job.passEndMs, previous);
    const serviceMs = job.receivedMs - start;
    if (serviceMs < 0) {
      throw new InputError(
        job.file,
        job.line,
        `received_ms ${job.receivedMs} is before the previous job of server ${job.server} was received (${previous}): jobs of one server are served in order`,
      );
    }
    lastReceived.set(job.server, job.receivedMs);
    out.push({ index, service: { ...job, serviceMs } });
  }
  out.sort((a, b) => a.index - b.index);
  return out.map((entry) => entry.service);
}

export function detokenizationSpec(model: DetokenizationModel): LinearModelSpec {
  const terms: LinearModelSpec['terms'] = [{ name: 'per_output_us', unit: 'us', toUnit: 1000, feature: 'outputs per job' }];
  if (model === 'four-term') {
    terms.push({ name: 'first_output_us', unit: 'us', toUnit: 1000, feature: 'first outputs per job' });
    terms.push({ name: 'final_output_us', unit: 'us', toUnit: 1000, feature: 'final outputs per job' });
  }
  return { base: { name: 'base_ms', unit: 'ms' }, terms, yName: 'service_ms', yUnit: 'ms' };
}

export function fitDetokenization(jobs: readonly DetokenizationJob[], model: DetokenizationModel, options: FitOptions = {}): LinearFit {
  if (model === 'four-term' && jobs.some((job) => Number.isNaN(job.firstOutputs) || Number.isNaN(job.finalOutputs))) {
    throw new Error(
      "the four-term model needs first_outputs and final_outputs columns (outputs of the job that are a request's first / final output)",
    );
  }
  const rows: FitRow[] = serviceTimes(jobs).map((job) => ({
    x: model === 'four-term' ? [job.outputs, job.firstOutputs, job.finalOutputs] : [job.outputs],
    y: job.serviceMs,
    bucket: log2Bucket('outputs', job.outputs),
    source: job.source,
  }));
  return fitLinearModel(detokenizationSpec(model), rows, options);
}
