/** Runs the replay core on an in-memory config (defaults filled by the real config loader). */
import { parseRunConfig } from '../../src/config/load.js';
import type { RunConfig } from '../../src/config/types.js';
import { buildRequestRecords, buildSummary } from '../../src/core/report.js';
import { resolveRun, type TraceInput } from '../../src/config/resolve.js';
import { Simulation } from '../../src/core/simulation.js';

export function config(raw: unknown): RunConfig {
  return parseRunConfig(raw, 'test.yaml');
}

export function runCore(raw: unknown, trace: TraceInput | null = null) {
  const cfg = config(raw);
  const run = resolveRun(cfg, trace);
  const result = new Simulation(run, { recordTokens: true }).run();
  const summary = buildSummary(run, result);
  const records = buildRequestRecords(result);
  return { summary, records, result, run };
}

/**
 * A trace in memory: rows of [timestampMs, input, output, session?, delayMs?]. With `hashIds`
 * (one list per row, one id per trace block of the config's `block_size` tokens) the rows
 * carry what the prefix cache keys come from; without, they share nothing.
 */
export function traceRows(rows: Array<[number, number, number, string?, number?]>, hashIds?: number[][]): TraceInput {
  const hasSessions = rows.some((r) => r[3] !== undefined);
  const trace: TraceInput = {
    rows: rows.length,
    timestampMs: Float64Array.from(rows.map((r) => r[0])),
    inputLength: Int32Array.from(rows.map((r) => r[1])),
    outputLength: Int32Array.from(rows.map((r) => r[2])),
    sessionId: hasSessions ? rows.map((r) => r[3] ?? '') : null,
    delayMs: Float64Array.from(rows.map((r) => r[4] ?? 0)),
  };
  if (hashIds !== undefined) {
    trace.hashIdOffsets = new Int32Array(rows.length + 1);
    for (let r = 0; r < rows.length; r++) trace.hashIdOffsets[r + 1] = trace.hashIdOffsets[r] + hashIds[r].length;
    trace.hashIds = Int32Array.from(hashIds.flat());
  }
  return trace;
}

/** Fixed timing, prefill 10 ms, decode 2 ms, unlimited KV, budget 8192, 256 sequences (the worked examples of docs/replay-model.md). */
export function fixedEngine(extra: Record<string, unknown> = {}) {
  return {
    workers: {
      aggregated: {
        timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 },
        ...extra,
      },
    },
  };
}
