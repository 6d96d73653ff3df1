/**
 * Response-overhead fit (docs/calibration.md, docs/client-path.md): the load generator's turnaround from
 * a response's end to the next request on the same slot, against the response's output tokens:
 * `gap_ms = base_ms + (per_output_token_us * output_tokens + per_inflight_us * others) / 1000`, with
 * `others` the requests still in flight (started, not ended) when the response ends.
 *
 * From AIPerf's per-request JSONL the gap is `request_start_ns` of the next request minus
 * `request_end_ns` of the previous one on the same slot. `credit_issued_ns` is not used: AIPerf
 * stamps the next credit a few ms *before* the previous request ends. AIPerf workers can carry
 * several slots, so on each `worker_id` the ends are paired with later starts first-in first-out
 * (the slot that freed first is the one that sends next); at concurrency 1 that is the whole run.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../config/errors.js';
import { findAiperfFiles, findAiperfRunDirs } from '../io/read-aiperf.js';
import { readAiperfJsonl } from '../io/read-aiperf-jsonl.js';
import { inputPathKind } from '../io/read-text.js';
import type { AiperfRequestRecord } from '../io/read-aiperf-types.js';
import { fitLinearModel, log2Bucket, type FitOptions, type FitRow, type LinearFit, type LinearModelSpec } from './fit-linear.js';
import { numberCell, requireColumn, type Table } from './read-table.js';

export interface ResponseGap {
  source: string;
  outputTokens: number;
  gapMs: number;
  /** The slot (AIPerf worker) the gap was measured on; `-` for CSV input. */
  slot: string;
  /** Other requests in flight (started, not ended) when the response ended (responses ending at the same instant share their mean). */
  inflight: number;
}

export interface GapExtraction {
  gaps: ResponseGap[];
  /** Records left out (errors, cancelled, warmup, without output length), with counts by reason. */
  skipped: Record<string, number>;
  files: string[];
}

const NS_PER_MS = 1_000_000n;

function nsToMs(ns: bigint): number {
  // Exact to the nanosecond: split before converting, since epoch ns exceed 2^53.
  return Number(ns / NS_PER_MS) + Number(ns % NS_PER_MS) / 1e6;
}

/**
 * Gaps of one JSONL file. Ends are paired with later starts first-in first-out: over the whole
 * run, since AIPerf hands the next credit to whichever of its workers is free (at concurrency 8
 * with 5 workers a worker carries requests of several slots), so the request sent next after an
 * end is that end's successor; at equal times an end comes before a start.
 */
export function gapsOfRecords(
  records: readonly AiperfRequestRecord[],
  file: string,
): { gaps: ResponseGap[]; skipped: Record<string, number> } {
  const skipped: Record<string, number> = {};
  const skip = (reason: string) => (skipped[reason] = (skipped[reason] ?? 0) + 1);
  const events: Array<{ ns: bigint; kind: 0 | 1; record: AiperfRequestRecord }> = [];
  for (const record of records) {
    if (record.requestStartNs === undefined || record.requestEndNs === undefined) {
      throw new InputError(file, record.line, 'the record has no request_start_ns / request_end_ns (AIPerf 0.3 or newer writes them)');
    }
    events.push({ ns: record.requestEndNs, kind: 0, record });
    events.push({ ns: record.requestStartNs, kind: 1, record });
  }
  events.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : a.kind - b.kind || a.record.line - b.record.line));
  const gaps: ResponseGap[] = [];
  const waiting: Array<{ record: AiperfRequestRecord; others: number; meanTokens: number | undefined }> = [];
  let inFlight = 0;
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    if (event.kind === 0) {
      // Responses that end at the same instant come in no knowable order (the next starts pair
      // with them first-in first-out, and the one counted first sees one more other in flight), so
      // each is fitted against the group's mean in-flight count and output length.
      let k = 1;
      while (i + k < events.length && events[i + k].kind === 0 && events[i + k].ns === event.ns) k++;
      inFlight -= k;
      const others = inFlight + (k - 1) / 2;
      let tokens = 0;
      for (let j = 0; j < k; j++) {
        const t = events[i + j].record.metrics.output_sequence_length;
        tokens += typeof t === 'number' ? t : NaN;
      }
      for (let j = 0; j < k; j++) waiting.push({ record: events[i + j].record, others, meanTokens: k === 1 ? undefined : tokens / k });
      i += k - 1;
      continue;
    }
    inFlight++;
    const ended = waiting.shift();
    if (ended === undefined) continue; // a slot's first request
    const previous = ended.record;
    const tokens = previous.metrics.output_sequence_length;
    if (previous.error !== null) skip('previous request failed');
    else if (previous.wasCancelled === true) skip('previous request cancelled');
    else if (previous.phase !== undefined && previous.phase !== 'profiling') skip(`previous request in the ${previous.phase} phase`);
    else if (typeof tokens !== 'number') skip('previous request has no output_sequence_length');
    else {
      gaps.push({
        source: `${file}:${previous.line}`,
        outputTokens: ended.meanTokens !== undefined && Number.isFinite(ended.meanTokens) ? ended.meanTokens : tokens,
        gapMs: nsToMs((event.record.requestStartNs as bigint) - (previous.requestEndNs as bigint)),
        slot: previous.workerId ?? '-',
        inflight: ended.others,
      });
    }
  }
  return { gaps, skipped };
}

/** Gaps from AIPerf runs: a run folder, a folder of runs, or a `profile_export.jsonl` file. */
export function readAiperfGaps(path: string): GapExtraction {
  const files: string[] = [];
  if (inputPathKind(path) === 'file') files.push(path);
  else {
    for (const dir of findAiperfRunDirs(path)) {
      const found = findAiperfFiles(dir).jsonl;
      if (found) files.push(found);
    }
    if (files.length === 0 && existsSync(join(path, 'profile_export.jsonl'))) files.push(join(path, 'profile_export.jsonl'));
  }
  if (files.length === 0) throw new InputError(path, 0, 'no AIPerf per-request export (profile_export.jsonl) here');
  const gaps: ResponseGap[] = [];
  const skipped: Record<string, number> = {};
  for (const file of files) {
    const one = gapsOfRecords(readAiperfJsonl(file), file);
    gaps.push(...one.gaps);
    for (const [reason, count] of Object.entries(one.skipped)) skipped[reason] = (skipped[reason] ?? 0) + count;
  }
  return { gaps, skipped, files };
}

/** Gaps from a plain CSV `output_tokens,gap_ms[,inflight]` (columns renamed by the mapping; no `inflight`: 0). */
export function readGapTable(table: Table, mapping: Record<string, string> = {}): ResponseGap[] {
  const tokens = requireColumn(table, mapping.output_tokens ?? 'output_tokens', 'output_tokens');
  const gap = requireColumn(table, mapping.gap_ms ?? 'gap_ms', 'gap_ms');
  const inflightName = mapping.inflight ?? 'inflight';
  const inflight = table.columns.includes(inflightName) ? requireColumn(table, inflightName, 'inflight') : null;
  return table.rows.map((row) => ({
    source: `${table.file}:${row.line}`,
    outputTokens: numberCell(table, row, tokens),
    gapMs: numberCell(table, row, gap, false),
    slot: '-',
    inflight: inflight === null ? 0 : numberCell(table, row, inflight),
  }));
}

export const RESPONSE_OVERHEAD_SPEC: LinearModelSpec = {
  base: { name: 'base_ms', unit: 'ms' },
  terms: [
    { name: 'per_output_token_us', unit: 'us', toUnit: 1000, feature: 'output tokens' },
    { name: 'per_inflight_us', unit: 'us', toUnit: 1000, feature: 'other requests in flight' },
  ],
  yName: 'gap_ms',
  yUnit: 'ms',
};

/**
 * Why the gaps cannot be fitted: every one is at the same point (the same output tokens and the
 * same others in flight), so a fit there is their mean and nothing checks how the gap changes with
 * either; null when they spread over two or more points.
 */
export function singlePointReason(gaps: readonly ResponseGap[]): string | null {
  if (gaps.length === 0) return null;
  const { outputTokens, inflight } = gaps[0];
  if (gaps.some((gap) => gap.outputTokens !== outputTokens || gap.inflight !== inflight)) return null;
  return (
    `every gap is at one point (${outputTokens} output tokens, ${inflight} other requests in flight): the fit would be their mean, ` +
    'and nothing in them shows how the gap changes with output tokens or load; give gaps at several output lengths or concurrencies'
  );
}

export function fitResponseOverhead(gaps: readonly ResponseGap[], options: FitOptions = {}): LinearFit {
  const rows: FitRow[] = gaps.map((gap) => ({
    x: [gap.outputTokens, gap.inflight],
    y: gap.gapMs,
    bucket: log2Bucket('output tokens', gap.outputTokens),
    source: gap.source,
  }));
  return fitLinearModel(RESPONSE_OVERHEAD_SPEC, rows, options);
}
