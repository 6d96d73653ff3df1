/**
 * The live surface of the replay core (Simulation.injectRequest / advanceBefore / abortRequest,
 * used by `servesim serve`): requests injected at their arrival times while the clock is advanced
 * in small bounded steps give exactly the times of an offline replay of a trace with those rows
 * at their timestamps; an abort frees what the request held.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Status } from '../src/core/request-table.js';
import { Simulation, type EngineLoad } from '../src/core/simulation.js';
import { resolveLiveRun } from '../src/serve/live-run.js';
import { config, fixedEngine, runCore, traceRows } from './helpers/core-run.js';

type Row = [number, number, number];

/** The offline replay: a trace of these rows at their timestamps. */
function offline(engine: Record<string, unknown>, rows: Row[]) {
  const { result } = runCore(
    {
      engine,
      traffic: { source: { type: 'trace', path: 'x.jsonl' }, load: { type: 'trace_timestamps' }, stop: { requests: rows.length } },
    },
    traceRows(rows),
  );
  return Array.from({ length: rows.length }, (_, id) => ({
    received: result.tokenReceivedMs?.[id] ?? [],
    emitted: result.tokenEmittedMs?.[id] ?? [],
    end: result.table.responseReceivedMs[id],
  }));
}

/** The live engine: each row injected at its time, the clock advanced `stepMs` at a time, `maxEvents` events a call. */
function live(engine: Record<string, unknown>, rows: Row[], stepMs: number, maxEvents: number) {
  const { run } = resolveLiveRun(config({ engine }));
  const received: number[][] = rows.map(() => []);
  const emitted: number[][] = rows.map(() => []);
  const end: number[] = rows.map(() => NaN);
  const sim = new Simulation(run, {
    onTokenReceived: (id, at) => received[id].push(at),
    onTokenEmitted: (id, at) => emitted[id].push(at),
    onResponseEnd: (id, at) => (end[id] = at),
  });
  let next = 0;
  for (let bound = 0; next < rows.length || sim.nextEventMs < Infinity; bound += stepMs) {
    // Every arrival before this bound is injected before the core advances to it.
    while (next < rows.length && rows[next][0] < bound) {
      const id = sim.injectRequest(rows[next][1], rows[next][2], rows[next][0]);
      expect(id).toBe(next);
      next++;
    }
    while (sim.advanceBefore(bound, maxEvents));
  }
  return rows.map((_, id) => ({ received: received[id], emitted: emitted[id], end: end[id] }));
}

const ENGINES: Array<[string, Record<string, unknown>]> = [
  ['fixed timing, unlimited KV', fixedEngine()],
  [
    'paged KV under pressure, chunked prefill, two detokenization servers',
    {
      workers: {
        aggregated: {
          scheduler: { max_batched_tokens: 64, max_sequences: 4 },
          kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 24 } },
          timing: { type: 'fixed', prefill_ms: 7, decode_ms: 3 },
        },
      },
      detokenization: { workers: 2, base_ms: 0.4, per_output_us: 50 },
      tokenization: { workers: 1, base_ms: 0.3, per_input_us: 2 },
    },
  ],
  [
    'SGLang scheduler, two attention-DP ranks',
    {
      backend: 'sglang',
      workers: {
        aggregated: {
          parallelism: { attention_data: 2 },
          scheduler: { max_batched_tokens: 96, max_sequences: 3 },
          kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 40 } },
          timing: { type: 'fixed', prefill_ms: 5, decode_ms: 2 },
        },
      },
    },
  ],
  [
    'disaggregated: two prefill and two decode workers, paged KV on the decode side, local short prompts',
    {
      workers: {
        prefill: {
          parallelism: { replicas: 2 },
          scheduler: { max_batched_tokens: 64, max_sequences: 4 },
          timing: { type: 'fixed', prefill_ms: 6, decode_ms: 2 },
        },
        decode: {
          parallelism: { replicas: 2 },
          scheduler: { max_batched_tokens: 64, max_sequences: 3 },
          kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 30 } },
          timing: { type: 'fixed', prefill_ms: 5, decode_ms: 3 },
        },
      },
      kv_transfer: { latency_ms: 0.7, kv_bytes_per_token: 1000, bandwidth_gb_per_s: 0.5, max_local_prefill_tokens: 20 },
    },
  ],
  [
    'disaggregated, the first token from the decode worker',
    {
      workers: {
        prefill: { scheduler: { max_batched_tokens: 64, max_sequences: 4 }, timing: { type: 'fixed', prefill_ms: 6, decode_ms: 2 } },
        decode: {
          parallelism: { replicas: 2 },
          scheduler: { max_batched_tokens: 64, max_sequences: 2 },
          timing: { type: 'fixed', prefill_ms: 5, decode_ms: 3 },
        },
      },
      kv_transfer: { latency_ms: 0.7, kv_bytes_per_token: 1000, bandwidth_gb_per_s: 0.5, first_token: 'decode' },
    },
  ],
];

describe('the live core', () => {
  it.each(ENGINES)('gives the offline replay times at any step size (%s)', (_name, engine) => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 90 }), fc.integer({ min: 1, max: 12 })), {
          minLength: 1,
          maxLength: 14,
        }),
        fc.constantFrom(0.25, 1, 3.5, 17),
        fc.constantFrom(1, 3, 1000),
        (draws, stepMs, maxEvents) => {
          // Arrival times in order, the first at 0 (as a recorded session's are).
          let t = 0;
          const rows: Row[] = draws.map(([gap, input, output], k) => [k === 0 ? 0 : (t += gap / 4), input, output]);
          const expected = offline(engine, rows);
          // Coverage guard: the runs emit tokens.
          expect(expected.some((r) => r.received.length > 0)).toBe(true);
          expect(live(engine, rows, stepMs, maxEvents)).toEqual(expected);
        },
      ),
      { numRuns: 40, seed: 26 },
    );
  });

  it('drops a request aborted before it reaches the scheduler', () => {
    const { run } = resolveLiveRun(config({ engine: { ...fixedEngine(), tokenization: { workers: 1, base_ms: 5, per_input_us: 0 } } }));
    const ended: number[] = [];
    const sim = new Simulation(run, { onResponseEnd: (id) => ended.push(id) });
    const a = sim.injectRequest(10, 4, 0);
    const b = sim.injectRequest(10, 4, 0);
    while (sim.advanceBefore(1, 100));
    expect(sim.table.status[a]).toBe(Status.Tokenizing);
    sim.abortRequest(a);
    while (sim.advanceBefore(1000, 100));
    expect(sim.table.status[a]).toBe(Status.Rejected);
    expect(sim.table.generated[a]).toBe(0);
    expect(ended).toEqual([b]);
  });

  it('takes an aborted waiting request out of its queue at once, and frees a running one at its next pass end', () => {
    // One sequence at a time: a runs, b waits. 4 blocks of 16 tokens; a holds 2.
    const engine = {
      workers: {
        aggregated: {
          scheduler: { max_batched_tokens: 64, max_sequences: 1 },
          kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 4 } },
          timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 },
        },
      },
    };
    const { run } = resolveLiveRun(config({ engine }));
    const tokens: number[] = [];
    const sim = new Simulation(run, { onTokenReceived: (id, at) => id === 0 && tokens.push(at) });
    const load: EngineLoad = { running: 0, waiting: 0, kvBlocksUsed: 0, kvBlocksTotal: 0, preemptions: 0 };
    const a = sim.injectRequest(20, 100, 0);
    const b = sim.injectRequest(20, 100, 0);
    while (sim.advanceBefore(15, 100));
    sim.readLoad(load);
    expect(load).toEqual({ running: 1, waiting: 1, kvBlocksUsed: 2, kvBlocksTotal: 4, preemptions: 0 });
    sim.abortRequest(b);
    sim.readLoad(load);
    expect(load.waiting).toBe(0);
    expect(sim.table.status[b]).toBe(Status.Rejected);
    // a: its prefill pass 0-12 ms emits token 1 (prefill_ms + decode_ms), decode passes end at 14,
    // 16, ...; at 15 a pass runs until 16.
    sim.abortRequest(a);
    while (sim.advanceBefore(15.5, 100));
    sim.readLoad(load);
    expect(load.running).toBe(1);
    while (sim.advanceBefore(16.5, 100));
    sim.readLoad(load);
    // The pass ending at 16 emits nothing for a, and a's blocks are back in the pool.
    expect(load).toEqual({ running: 0, waiting: 0, kvBlocksUsed: 0, kvBlocksTotal: 4, preemptions: 0 });
    expect(tokens).toEqual([12, 14]);
    expect(sim.nextEventMs).toBe(Infinity);
  });
});
