/**
 * Time bounds of the trace reader (src/io/read-mooncake.ts), kept out of the unit suite: a wall
 * clock on a shared, loaded machine belongs with the end-to-end checks, and each bound here is
 * scaled by the load average when the machine is busier than its cores.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import { readMooncakeTrace } from '../src/io/read-mooncake.js';
import { thrownBy } from './helpers/errors.js';

const CONVERSATION = 'test/fixtures/traces/mooncake-conversation-head200.jsonl';
const LOAD_FACTOR = Math.max(1, loadavg()[0] / availableParallelism());
const dir = mkdtempSync(join(tmpdir(), 'servesim-mooncake-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function timed<T>(action: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = action();
  return { value, ms: performance.now() - start };
}

describe('reading a trace, timed', () => {
  it('reads 50k rows in well under a second', () => {
    const path = join(dir, 'big.jsonl');
    writeFileSync(path, readFileSync(CONVERSATION, 'utf8').repeat(250));
    const { value: trace, ms } = timed(() => readMooncakeTrace(path));
    expect(trace.rows).toBe(50_000);
    // About 0.1-0.5 s on one shared core; 1M rows (254 MB) read in about 2-5 s.
    expect(ms).toBeLessThan(1500 * LOAD_FACTOR);
  });

  it('refuses a line of 26 million hash ids within 2 s, without holding the line', () => {
    const path = join(dir, 'long.jsonl');
    const head = '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [';
    writeFileSync(path, Buffer.concat([Buffer.from(head), Buffer.alloc(26_000_000 * 8, '1234567,'), Buffer.from('0]}\n')]));
    const before = process.memoryUsage().rss;
    const { value: error, ms } = timed(() => thrownBy(() => readMooncakeTrace(path, { label: 'long.jsonl' }), InputError));
    expect(error.message).toMatch(/^long\.jsonl:1: is longer than 3\.0 MiB \(the longest row a trace can have at block_size 512/);
    expect(ms).toBeLessThan(2000 * LOAD_FACTOR);
    // The 208 MB line is never held: the reader keeps at most its 3 MiB limit of it.
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });
});
