/**
 * The run description of a live engine (`servesim serve`, docs/serving.md): the config's engine,
 * frontend, tokenization and detokenization exactly as `replay` resolves them, with traffic that
 * sends nothing by itself. Requests are injected as they arrive (`Simulation.injectRequest`):
 * ids in arrival order, like the rows of a trace replayed at its timestamps, which is what a
 * recorded session is (record.ts).
 */
import { resolveRun, type TraceInput } from '../config/resolve.js';
import type { RunConfig } from '../config/types.js';
import type { ResolvedRun, TraceRows } from '../core/run.js';

const NO_ROWS: TraceRows = {
  rows: 0,
  timestampMs: new Float64Array(0),
  inputLength: new Int32Array(0),
  outputLength: new Int32Array(0),
  sessionId: null,
  delayMs: new Float64Array(0),
};

export interface LiveRun {
  run: ResolvedRun;
  /**
   * vLLM's max_model_len: prompt + max_tokens may not exceed it (Infinity with context_length
   * max and an unlimited KV pool). It is the core's length limit L (core/run.ts): a prompt of L
   * tokens or more is rejected, a request ends once prompt + generated reaches L.
   */
  maxModelLen: number;
}

/**
 * What differs from a replay: no prefix cache (prompts are not compared, docs/serving.md), no
 * response overhead (the client is real), no stop (the server runs until it is stopped), and every
 * request counted as warmup by the core, so that its pooled token-gap statistics, which a live
 * engine does not report (its histograms are in metrics.ts), keep no memory per token served.
 */
export function resolveLiveRun(config: RunConfig): LiveRun {
  const trace: TraceInput | null = config.traffic.source.type === 'trace' ? NO_ROWS : null;
  const base = resolveRun(config, trace);
  const run: ResolvedRun = {
    ...base,
    prefixCache: null,
    responseOverhead: null,
    load: { kind: 'timestamps', speedup: 1 },
    source: { kind: 'trace', trace: NO_ROWS },
    maxRequests: 0,
    capMs: Infinity,
    warmupRequests: Infinity,
  };
  return { run, maxModelLen: base.lengthLimit };
}
