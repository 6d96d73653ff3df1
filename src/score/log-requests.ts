/**
 * Per-request scoring of a replay against a vLLM request log (docs/request-logs.md): when the
 * measured side is a log and the simulated side is the replay of that log written with
 * `--per-request` (`requests.jsonl` beside its `summary.json`), each request's TTFT, TPOT and
 * latency are compared with the log's (`log-compare.ts`), and written as
 * `requests.csv` beside the score's report.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compareWithLog, LOG_METRICS, type LogComparison } from './log-compare.js';
import type { RequestRecord } from '../core/report-types.js';
import { AiperfInputError } from '../io/read-aiperf-errors.js';
import { isVllmLog, readVllmLog } from '../io/read-vllm-log.js';
import { forEachLine, isFolder } from '../io/read-text.js';

/** The replay's per-request records beside the simulated side's summary.json, when there are. */
function recordsPath(sim: string): string | null {
  const dir = isFolder(sim) ? sim : dirname(sim);
  const path = join(dir, 'requests.jsonl');
  return existsSync(join(dir, 'summary.json')) && existsSync(path) ? path : null;
}

function readRecords(path: string): RequestRecord[] {
  const records: RequestRecord[] = [];
  forEachLine(path, path, 64 * 1024 * 1024, 'a request record', (bytes, line) => {
    const text = bytes.toString('utf8').trim();
    if (text === '') return true;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new AiperfInputError(path, { line }, `not valid JSON (${(error as Error).message})`);
    }
    const record = value as Partial<RequestRecord>;
    if (
      record === null ||
      typeof record !== 'object' ||
      typeof record.request_id !== 'number' ||
      !Array.isArray(record.token_emitted_ms) ||
      typeof record.status !== 'string'
    )
      throw new AiperfInputError(
        path,
        { line },
        'not a request record of servesim replay --per-request (request_id, status, token_emitted_ms)',
      );
    records.push(record as RequestRecord);
    return true;
  });
  return records;
}

export interface LogRequestScore {
  log: string;
  records: string;
  comparison: LogComparison;
  csv: string;
}

/** The per-request comparison, or null when the sides are not a log and its replay's records. */
export function scoreLogRequests(sim: string, measured: readonly string[]): LogRequestScore | null {
  if (measured.length !== 1 || !isVllmLog(measured[0])) return null;
  const path = recordsPath(sim);
  if (path === null) return null;
  const log = readVllmLog(measured[0]);
  const records = readRecords(path);
  if (records.length !== log.rows)
    throw new AiperfInputError(
      path,
      undefined,
      `has ${records.length} requests and the log ${log.rows}: per-request scoring needs the replay of that log`,
    );
  const comparison = compareWithLog(log, records);
  const header = ['request_id', 'line', ...LOG_METRICS.flatMap((m) => [`measured_${m}_ms`, `simulated_${m}_ms`, `ape_${m}`])];
  const cell = (value: number): string => (Number.isFinite(value) ? String(Number(value.toFixed(3))) : '');
  const rows = comparison.rows.map((row) =>
    [
      JSON.stringify(row.requestId),
      String(row.line),
      ...LOG_METRICS.flatMap((m) => {
        const a = row.measured[m];
        const b = row.replayed[m];
        return [cell(a), cell(b), cell(a > 0 ? (Math.abs(b - a) / a) * 100 : NaN)];
      }),
    ].join(','),
  );
  return { log: measured[0], records: path, comparison, csv: `${[header.join(','), ...rows].join('\n')}\n` };
}
