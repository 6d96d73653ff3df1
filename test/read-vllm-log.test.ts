import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import { readVllmLog, isVllmLog } from '../src/io/read-vllm-log.js';
import { compareWithLog } from '../src/score/log-compare.js';
import type { RequestRecord } from '../src/core/report-types.js';

const dir = mkdtempSync(join(tmpdir(), 'servesim-vllm-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function logFile(name: string, lines: Array<Record<string, unknown> | string>): string {
  const folder = join(dir, name);
  rmSync(folder, { recursive: true, force: true });
  const path = join(folder, 'requests.jsonl');
  mkdirSync(folder, { recursive: true });
  writeFileSync(path, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
  return folder;
}

function inputErrorOf(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error('expected an InputError, got none');
}

// A hand-written log: request b arrives first (the log's t = 0), c was never queued, d never finished.
const LINES = [
  {
    request_id: 'a',
    input_toks: 100,
    output_toks: 10,
    arrival_time: 5,
    queued_ts: 1000.5,
    scheduled_ts: 1000.625,
    first_token_ts: 1000.875,
    last_token_ts: 1001.75,
  },
  {
    request_id: 'b',
    input_toks: 50,
    output_toks: 1,
    queued_ts: 1000.25,
    scheduled_ts: 1000.25,
    first_token_ts: 1000.75,
    last_token_ts: 1000.75,
  },
  { request_id: 'c', input_toks: 70, output_toks: 3, queued_ts: null, scheduled_ts: null, first_token_ts: null, last_token_ts: null },
  { request_id: 'd', input_toks: 30, output_toks: 4, queued_ts: 1002, scheduled_ts: 1002.125 },
];

describe('readVllmLog on a hand-written log', () => {
  const folder = logFile('hand', LINES);
  const log = readVllmLog(folder, { blockTokens: 64 });

  it('replays the queued requests at their queue times, the earliest at t = 0', () => {
    expect(log.rows).toBe(3);
    expect(log.requestIds).toEqual(['a', 'b', 'd']);
    expect([...log.lines]).toEqual([1, 2, 4]);
    // (1000.5 - 1000.25) s, 0, (1002 - 1000.25) s
    expect([...log.timestampMs]).toEqual([250, 0, 1750]);
    expect([...log.inputLength]).toEqual([100, 50, 30]);
    expect([...log.outputLength]).toEqual([10, 1, 4]);
    expect(log.clockZeroS).toBe(1000.25);
  });

  it('counts the rejected request (not replayed) and the unfinished one (replayed, not scored)', () => {
    expect(log.rejected).toBe(1);
    expect(log.rejectedLines).toEqual([3]);
    expect(log.unfinished).toBe(1);
    expect([...log.finished]).toEqual([1, 1, 0]);
  });

  it('measures TTFT and latency from queued_ts, TPOT over the output tokens after the first', () => {
    expect(log.ttftMs[0]).toBe(375); // 1000.875 - 1000.5
    expect(log.latencyMs[0]).toBe(1250); // 1001.75 - 1000.5
    expect(log.tpotMs[0]).toBeCloseTo(875 / 9, 9); // (1001.75 - 1000.875) / (10 - 1)
    expect(log.ttftMs[1]).toBe(500);
    expect(log.latencyMs[1]).toBe(500);
    expect(log.tpotMs[1]).toBeNaN(); // one output token
    expect(log.ttftMs[2]).toBeNaN();
  });

  it('gives each request prompt blocks of its own', () => {
    // ceil(100 / 64) = 2, ceil(50 / 64) = 1, ceil(30 / 64) = 1
    expect([...log.hashIdOffsets]).toEqual([0, 2, 3, 4]);
    expect([...log.hashIds]).toEqual([0, 1, 2, 3]);
  });

  it('is recognised as a log by its folder and its file, a mooncake trace is not', () => {
    expect(isVllmLog(folder)).toBe(true);
    expect(isVllmLog(join(folder, 'requests.jsonl'))).toBe(true);
    expect(isVllmLog('test/fixtures/traces/mooncake-synthetic-head200.jsonl')).toBe(false);
    // A run config (first line a comment) is not, nor a first line that is JSON but not an object;
    // a log whose first line is indented after blank lines is.
    expect(isVllmLog('sweeps/configs/qwen3-32b-h100-tp2.yaml')).toBe(false);
    const other = join(dir, 'sniff');
    mkdirSync(other);
    const line = '{"queued_ts": 1, "input_toks": 2}';
    writeFileSync(join(other, 'array.jsonl'), `[${line}]\n`);
    expect(isVllmLog(join(other, 'array.jsonl'))).toBe(false);
    writeFileSync(join(other, 'indented.jsonl'), `\n  \n \t${line}\n`);
    expect(isVllmLog(join(other, 'indented.jsonl'))).toBe(true);
  });

  it('compares the finished requests with their replay, on the engine times', () => {
    const record = (id: number, queued: number, emitted: number[]): RequestRecord =>
      ({ request_id: id, status: 'completed', queued_ms: queued, token_emitted_ms: emitted }) as unknown as RequestRecord;
    // a: TTFT 400, latency 1300, TPOT (1300 - 400) / 9 = 100; b: TTFT 450 (measured 500), latency 450.
    const emittedA = Array.from({ length: 10 }, (_, k) => 250 + 400 + 100 * k);
    const records = [record(0, 250, emittedA), record(1, 0, [450]), { ...record(2, 1750, []), status: 'incomplete' } as RequestRecord];
    const c = compareWithLog(log, records);
    expect(c.rows.map((r) => r.requestId)).toEqual(['a', 'b']);
    expect(c.metrics.ttft.measuredMeanMs).toBe((375 + 500) / 2);
    expect(c.metrics.ttft.replayedMeanMs).toBe((400 + 450) / 2);
    expect(c.metrics.ttft.meanErrorPct).toBeCloseTo(((425 - 437.5) / 437.5) * 100, 9);
    expect(c.metrics.ttft.requestMapePct).toBeCloseTo(((25 / 375 + 50 / 500) / 2) * 100, 9);
    expect(c.metrics.tpot.requests).toBe(1);
    expect(c.metrics.tpot.replayedMeanMs).toBe(100);
    expect(c.metrics.latency.replayedMeanMs).toBe((1300 + 450) / 2);
    expect(c.unfinishedInLog).toBe(1);
  });
});

describe('readVllmLog on bad logs', () => {
  const good = LINES[0];
  it.each([
    ['a line that is not JSON', '{"request_id": "x",', 'not valid JSON'],
    ['a missing input_toks', JSON.stringify({ ...good, request_id: 'x', input_toks: undefined }), 'input_toks: is required'],
    [
      'a negative output_toks',
      JSON.stringify({ ...good, request_id: 'x', output_toks: -1 }),
      'output_toks: must be a non-negative integer, got -1',
    ],
    [
      'a first token before the queue',
      JSON.stringify({ ...good, request_id: 'x', first_token_ts: 999 }),
      'first_token_ts: 999 is before scheduled_ts',
    ],
    [
      'a last token without a first',
      JSON.stringify({ ...good, request_id: 'x', first_token_ts: null }),
      'last_token_ts: is 1001.75 but first_token_ts is missing',
    ],
    ['a repeated request_id', JSON.stringify({ ...good }), 'request_id: "a" is also the id of line 1'],
  ])('names the file and the line of %s', (_, bad, reason) => {
    const folder = logFile('bad', [good, bad]);
    const error = inputErrorOf(() => readVllmLog(folder));
    expect(error.file).toBe(join(folder, 'requests.jsonl'));
    expect(error.line).toBe(2);
    expect(error.reason).toContain(reason);
  });

  it('refuses a log none of whose requests was queued', () => {
    const folder = logFile('none', [LINES[2]]);
    expect(inputErrorOf(() => readVllmLog(folder)).reason).toContain('none of its 1 requests has a queued_ts');
  });

  it('skips bad lines with skipInvalid, counted', () => {
    const folder = logFile('skip', [good, 'not json', LINES[1]]);
    const log = readVllmLog(folder, { skipInvalid: true });
    expect(log.rows).toBe(2);
    expect(log.skipped).toBe(1);
  });
});
