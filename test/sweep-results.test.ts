import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReplaySummary } from '../src/core/report-types.js';
import { createProgress, formatDuration } from '../src/sweep/progress.js';
import { splitWallTime } from '../src/sweep/point-summary.js';
import { appendPoint, compactPoints, droppedRecordsNote, formatPointLine, readPoints, type PointRecord } from '../src/sweep/results.js';
import { summaryColumns, summaryCsv } from '../src/sweep/summary-csv.js';
import type { PlanOutline } from '../src/sweep/plan.js';
import { read, useTempDirs } from './fixtures/sweep/helpers.js';

const dir = useTempDirs();

/** The smallest summary a record with status ok may hold (results.ts checks it). */
const okSummary = { metrics: {}, run: { request_count: 1 }, ttft_stages: {}, simulator: {} } as unknown as PointRecord['summary'];
const record = (id: string, status: PointRecord['status'] = 'ok'): PointRecord => ({
  id,
  overrides: { 'traffic.load.concurrency': 1 },
  status,
  summary: status === 'ok' ? okSummary : null,
  error: status === 'ok' ? null : 'boom',
});

const outline: PlanOutline = {
  name: 'p',
  axes: ['traffic.load.concurrency'],
  log2Axes: [],
  points: [
    { index: 0, id: 'aaaaaaaaaaaa', overrides: { 'traffic.load.concurrency': 1 } },
    { index: 1, id: 'bbbbbbbbbbbb', overrides: { 'traffic.load.concurrency': 2 } },
    { index: 2, id: 'cccccccccccc', overrides: { 'traffic.load.concurrency': 4 } },
  ],
};

describe('points.jsonl', () => {
  it('drops an incomplete last line left by a kill, and cuts it so appends start clean', () => {
    const file = join(dir(), 'points.jsonl');
    appendPoint(file, record('aaaaaaaaaaaa'));
    appendFileSync(file, formatPointLine(record('bbbbbbbbbbbb')).slice(0, 30));
    const seen = readPoints(file, true);
    expect(seen.records.map((r) => r.id)).toEqual(['aaaaaaaaaaaa']);
    expect(seen.tornBytes).toBe(30);
    appendPoint(file, record('cccccccccccc'));
    expect(readPoints(file).records.map((r) => r.id)).toEqual(['aaaaaaaaaaaa', 'cccccccccccc']);
  });

  it('keeps a complete last line that lost only its newline', () => {
    const file = join(dir(), 'points.jsonl');
    writeFileSync(file, formatPointLine(record('aaaaaaaaaaaa')).trimEnd());
    expect(readPoints(file, true).records).toHaveLength(1);
    expect(read(file).endsWith('\n')).toBe(true);
  });

  it('refuses a damaged line in the middle, naming the file and line', () => {
    const file = join(dir(), 'points.jsonl');
    writeFileSync(file, `${formatPointLine(record('aaaaaaaaaaaa'))}garbage\n${formatPointLine(record('bbbbbbbbbbbb'))}`);
    expect(() => readPoints(file)).toThrow(/points\.jsonl:2: not a point record/);
  });

  it('refuses a whole line that is not a whole point record, naming the line and the field', () => {
    const file = join(dir(), 'points.jsonl');
    const ok = record('aaaaaaaaaaaa');
    const bad = [
      [{ ...ok, summary: null }, 'summary: expected a mapping, got null'],
      [
        { ...ok, summary: { ...okSummary, metrics: { time_to_first_token: { unit: 'ms', avg: 'fast' } } } },
        'summary.metrics.time_to_first_token.avg: expected a number, got "fast"',
      ],
      [{ ...ok, status: 'done' }, 'status: must be ok, failed or timeout, got "done"'],
      [{ ...ok, status: 'failed', summary: null }, 'error: expected a string, got null'],
      [{ ...ok, status: 'failed', error: 'boom' }, 'summary: expected null, got a mapping'],
      [{ ...ok, overrides: [1] }, 'overrides: expected a mapping, got a list'],
      [{ ...ok, id: 7 }, 'id: expected a string, got 7'],
    ] as const;
    for (const [value, reason] of bad) {
      writeFileSync(file, `${formatPointLine(ok)}${JSON.stringify(value)}\n`);
      expect(() => readPoints(file), reason).toThrow(`${file}:2: ${reason}; the record is damaged (remove or fix this line)`);
    }
  });

  it('compacts to one line per point in plan order, the latest attempt winning, foreign ids last (a plan log)', () => {
    const file = join(dir(), 'points.jsonl');
    const records = [record('cccccccccccc'), record('aaaaaaaaaaaa', 'failed'), record('zzzzzzzzzzzz'), record('aaaaaaaaaaaa')];
    expect(compactPoints(file, outline, records)).toEqual([]);
    expect(readPoints(file).records.map((r) => [r.id, r.status])).toEqual([
      ['aaaaaaaaaaaa', 'ok'],
      ['cccccccccccc', 'ok'],
      ['zzzzzzzzzzzz', 'ok'],
    ]);
  });

  it("drops ids outside the plan from a sweep's log and says which", () => {
    const file = join(dir(), 'points.jsonl');
    const records = [record('zzzzzzzzzzzz'), record('cccccccccccc'), record('aaaaaaaaaaaa'), record('yyyyyyyyyyyy', 'failed')];
    const dropped = compactPoints(file, outline, records, 'drop');
    expect(dropped).toEqual(['zzzzzzzzzzzz', 'yyyyyyyyyyyy']);
    expect(readFileSync(file, 'utf8')).toBe(formatPointLine(records[2]) + formatPointLine(records[1]));
    expect(droppedRecordsNote(file, dropped)).toBe(
      `${file}: dropped 2 record(s) of points not in this sweep (zzzzzzzzzzzz, yyyyyyyyyyyy): not results of it`,
    );
    expect(droppedRecordsNote(file, [])).toBeNull();
  });

  it('keeps the simulator wall-time fields out of the recorded summary', () => {
    const summary = {
      metrics: {},
      run: {},
      ttft_stages: {},
      config: {},
      simulator: { wall_time_ms: 3.2, us_per_output_token: 1.1, output_tokens: 80, passes: 9 },
    };
    const split = splitWallTime(summary as unknown as ReplaySummary);
    expect(split.summary.simulator).toEqual({ output_tokens: 80, passes: 9 });
    expect(split.wall).toEqual({ wall_time_ms: 3.2, us_per_output_token: 1.1 });
  });
});

describe('summary.csv', () => {
  it('has a row per point in plan order, pending where there is no result, whatever the record order', () => {
    const byId = new Map([
      [
        'cccccccccccc',
        {
          ...record('cccccccccccc'),
          summary: { metrics: { time_to_first_token: { avg: 12.5, count: 3 } }, run: { request_count: 3 } } as never,
        },
      ],
      ['aaaaaaaaaaaa', record('aaaaaaaaaaaa', 'timeout')],
    ]);
    const text = summaryCsv(outline, [...outline.points].reverse(), byId);
    const rows = text.trimEnd().split('\n');
    expect(rows[0].split(',')).toEqual(summaryColumns(outline.axes));
    expect(rows).toHaveLength(4);
    const col = (name: string) => summaryColumns(outline.axes).indexOf(name);
    const cells = rows.slice(1).map((r) => r.split(','));
    expect(cells.map((c) => [c[0], c[1], c[2]])).toEqual([
      ['aaaaaaaaaaaa', 'timeout', '1'],
      ['bbbbbbbbbbbb', 'pending', '2'],
      ['cccccccccccc', 'ok', '4'],
    ]);
    expect(cells[2][col('time_to_first_token.avg')]).toBe('12.5');
    expect(cells[2][col('time_to_first_token.count')]).toBe('3');
    expect(cells[2][col('run.request_count')]).toBe('3');
    expect(cells[0][col('error')]).toBe('boom');
  });
});

describe('progress', () => {
  function capture(isTTY: boolean) {
    let text = '';
    let t = 0;
    const stream = { isTTY, write: (s: string) => (text += s) };
    const progress = createProgress(stream, { now: () => t, plainIntervalMs: 0 });
    return { progress, text: () => text, advance: (ms: number) => (t += ms) };
  }

  it('prints plain lines with done/total, failures and ETA when not on a terminal', () => {
    const c = capture(false);
    c.progress.start(4, 1);
    c.advance(2000);
    c.progress.point({ id: 'aaaaaaaaaaaa', status: 'ok', label: 'x=1' });
    c.advance(2000);
    c.progress.point({ id: 'bbbbbbbbbbbb', status: 'failed', label: 'x=2', error: 'boom' });
    c.progress.end();
    expect(c.text()).toBe(
      'sweep: 4 points, 1 already done, 3 to run\n' +
        'sweep: 2/4 done, 0 failed, ETA 0:04 | ok aaaaaaaaaaaa (x=1)\n' +
        'sweep: 3/4 done, 1 failed, ETA 0:02 | failed bbbbbbbbbbbb (x=2): boom\n',
    );
    expect(c.text()).not.toContain('\r');
  });

  it('redraws one bar on a terminal', () => {
    const c = capture(true);
    c.progress.start(2, 0);
    c.advance(1000);
    c.progress.point({ id: 'aaaaaaaaaaaa', status: 'ok', label: 'x=1' });
    c.advance(1000);
    c.progress.point({ id: 'bbbbbbbbbbbb', status: 'ok', label: 'x=2' });
    c.progress.end();
    expect(c.text()).toContain('\r[############------------] 1/2 done, 0 failed, ETA 0:01');
    expect(c.text()).toContain('\r[########################] 2/2 done, 0 failed, ETA 0:00');
    expect(c.text().endsWith('\n')).toBe(true);
  });

  it('weighs the ETA by the expected cost of the points, not by their count', () => {
    const c = capture(false);
    // Three points costing 1, 1 and 98: after the two cheap ones, most of the work is left.
    c.progress.start(3, 0, 100);
    c.advance(2000);
    c.progress.point({ id: 'aaaaaaaaaaaa', status: 'ok', label: 'x=1', cost: 1 });
    c.advance(2000);
    c.progress.point({ id: 'bbbbbbbbbbbb', status: 'ok', label: 'x=2', cost: 1 });
    // 2 s per unit of cost so far: 99 units left take 3:18, then 98 units 3:16 (a count would say 0:04, 0:02).
    expect(c.text()).toContain('sweep: 1/3 done, 0 failed, ETA 3:18');
    expect(c.text()).toContain('sweep: 2/3 done, 0 failed, ETA 3:16');
  });

  it('formats durations', () => {
    expect(formatDuration(5)).toBe('0:05');
    expect(formatDuration(3725)).toBe('1:02:05');
    expect(formatDuration(Number.NaN)).toBe('--:--');
  });
});
