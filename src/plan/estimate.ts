/**
 * Where a candidate's rate search starts: an estimate of its highest sustainable rate from the
 * pass time alone, no replay. Only the number of replays depends on it (the search brackets the
 * rate from wherever it starts), so it is a steady-state sketch, not a model:
 *
 * with B requests decoding on a rank, each pass emits B tokens and, to keep B requests running,
 * takes in B x ISL / OSL new prompt tokens; a pass of that work takes t(B) ms, so the rank
 * finishes B / (OSL x t(B)) requests per ms. B grows up to max_sequences while the pass fits the
 * token budget, B full contexts fit the KV cache, and t(B) stays within the SLOs that bound a
 * token's time (inter-token latency, per-user throughput, request latency / OSL). The estimate
 * is the best such rate over B, times the ranks, times 0.8 for the queueing a Poisson stream adds.
 * A planned deployment is aggregated: one pool of workers.
 */
import { createPassTime } from '../core/timing/create-pass-time.js';
import type { ResolvedRun } from '../core/run.js';
import { poolOf } from '../config/roles.js';
import type { Slo } from './plan-file.js';

/** Mean prompt and output tokens of a run's requests. */
export function meanLengths(run: ResolvedRun): { inputTokens: number; outputTokens: number } {
  const source = run.source;
  switch (source.kind) {
    case 'synthetic': {
      // Lengths are uniform integers in [floor(L x ratio), L] (prompts at least 1), or normal of mean L.
      const lowIn = Math.max(1, Math.floor(source.inputTokens * source.rangeRatio));
      const lowOut = Math.floor(source.outputTokens * source.rangeRatio);
      return {
        inputTokens: source.inputStddev > 0 ? source.inputTokens : (lowIn + source.inputTokens) / 2,
        outputTokens: source.outputStddev > 0 ? source.outputTokens : (lowOut + source.outputTokens) / 2,
      };
    }
    case 'session': {
      // Turn k resends k new inputs and k - 1 outputs.
      const turns = source.turns;
      const meanPrompt = (source.newInputTokens * (turns + 1)) / 2 + (source.outputTokens * (turns - 1)) / 2;
      return { inputTokens: meanPrompt, outputTokens: source.outputTokens };
    }
    case 'trace': {
      const { rows, inputLength, outputLength } = source.trace;
      let inputs = 0;
      let outputs = 0;
      for (let row = 0; row < rows; row++) {
        inputs += inputLength[row];
        outputs += outputLength[row];
      }
      return { inputTokens: rows > 0 ? inputs / rows : 1, outputTokens: rows > 0 ? outputs / rows : 1 };
    }
  }
}

/** Share of the steady-state rate the estimate starts from (Poisson bursts queue before the mean saturates). */
export const ESTIMATE_SHARE = 0.8;

export function estimateMaxRps(run: ResolvedRun, slos: readonly Slo[]): number {
  const { inputTokens: isl, outputTokens } = meanLengths(run);
  const osl = Math.max(1, outputTokens);
  const pool = poolOf(run, 'aggregated');
  const passTime = createPassTime(pool.timing);
  const kvTokens = pool.kv.blocksPerRank > 0 ? pool.kv.blocksPerRank * pool.kv.blockSize : Infinity;
  let tokenMsLimit = Infinity;
  for (const slo of slos) {
    if (slo.metric === 'inter_token_latency') tokenMsLimit = Math.min(tokenMsLimit, slo.limit);
    if (slo.metric === 'output_token_throughput_per_user') tokenMsLimit = Math.min(tokenMsLimit, 1000 / slo.limit);
    if (slo.metric === 'request_latency') tokenMsLimit = Math.min(tokenMsLimit, slo.limit / osl);
  }
  let best = 0;
  let first = 0;
  for (let b = 1; b <= pool.limits.maxSequences; b++) {
    if (b * (isl + osl) > kvTokens) break;
    const prefill = (b * isl) / osl;
    if (b + prefill > pool.limits.maxBatchedTokens) break;
    const ms = passTime({
      prefillTokens: prefill,
      prefillPairs: (prefill * isl) / 2,
      decodeRequests: b,
      decodeKvTokens: b * (isl + osl / 2),
      emittedTokens: b,
      kvBlocksUsed: 0,
      kvBlocksTotal: 0,
    });
    if (!(ms > 0)) continue;
    const perMs = b / (osl * ms);
    if (b === 1) first = perMs;
    if (ms <= tokenMsLimit && perMs > best) best = perMs;
  }
  // No batch meets the token-time bounds (or none fits): start from one request at a time, halved.
  const perRankPerMs = best > 0 ? best : first > 0 ? first / 2 : 1e-3;
  return perRankPerMs * 1000 * pool.replicas * pool.ranksPerWorker * ESTIMATE_SHARE;
}
