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
 *
 * Disaggregated, each pool is a bound: the decode pool as above with no prompt tokens in its passes
 * (it receives each prompt's KV), the prefill pool at passes of as many prompts as its token
 * budget holds; the estimate is the lower of the two, times 0.8.
 */
import { createPassTime } from '../core/timing/create-pass-time.js';
import type { ResolvedPool, ResolvedRun } from '../core/run.js';
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

/**
 * Requests per ms one rank of a pool that prefills and decodes (`prefillTokensPerRequest` new
 * prompt tokens per request: the ISL for aggregated workers, 0 for a decode pool, which receives
 * each prompt's KV) finishes within the token-time bound, and one request at a time halved when
 * no batch meets it (or none fits).
 */
function decodingRankPerMs(pool: ResolvedPool, isl: number, osl: number, prefillTokensPerRequest: number, tokenMsLimit: number): number {
  const passTime = createPassTime(pool.timing);
  const kvTokens = pool.kv.blocksPerRank > 0 ? pool.kv.blocksPerRank * pool.kv.blockSize : Infinity;
  let best = 0;
  let first = 0;
  for (let b = 1; b <= pool.limits.maxSequences; b++) {
    if (b * (isl + osl) > kvTokens) break;
    const prefill = (b * prefillTokensPerRequest) / osl;
    if (b + prefill > pool.limits.maxBatchedTokens) break;
    const ms = passTime({
      prefillTokens: prefill,
      prefillPairs: (prefill * isl) / 2,
      decodeRequests: b,
      decodeKvTokens: b * (isl + osl / 2),
      emittedTokens: b,
      // In steady state every attention-DP rank of the worker runs a pass like this one.
      workerTokens: (prefill + b) * pool.ranksPerWorker,
      kvBlocksUsed: 0,
      kvBlocksTotal: 0,
    });
    if (!(ms > 0)) continue;
    const perMs = b / (osl * ms);
    if (b === 1) first = perMs;
    if (ms <= tokenMsLimit && perMs > best) best = perMs;
  }
  return best > 0 ? best : first > 0 ? first / 2 : 1e-3;
}

/**
 * Requests per ms one rank of a prefill pool takes in: a pass of as many whole prompts as the token
 * budget, the sequence limit and the KV cache allow (a part of one prompt under a budget below the
 * ISL), each emitting its first token.
 */
function prefillRankPerMs(pool: ResolvedPool, isl: number): number {
  const passTime = createPassTime(pool.timing);
  const kvTokens = pool.kv.blocksPerRank > 0 ? pool.kv.blocksPerRank * pool.kv.blockSize : Infinity;
  const requests = Math.min(pool.limits.maxBatchedTokens / isl, pool.limits.maxSequences, kvTokens / isl);
  const ms = passTime({
    prefillTokens: requests * isl,
    prefillPairs: (requests * isl * isl) / 2,
    decodeRequests: 0,
    decodeKvTokens: 0,
    emittedTokens: Math.max(1, Math.floor(requests)),
    workerTokens: requests * isl * pool.ranksPerWorker,
    kvBlocksUsed: 0,
    kvBlocksTotal: 0,
  });
  return ms > 0 && requests > 0 ? requests / ms : 1e-3;
}

export function estimateMaxRps(run: ResolvedRun, slos: readonly Slo[]): number {
  const { inputTokens: isl, outputTokens } = meanLengths(run);
  const osl = Math.max(1, outputTokens);
  let tokenMsLimit = Infinity;
  for (const slo of slos) {
    if (slo.metric === 'inter_token_latency') tokenMsLimit = Math.min(tokenMsLimit, slo.limit);
    if (slo.metric === 'output_token_throughput_per_user') tokenMsLimit = Math.min(tokenMsLimit, 1000 / slo.limit);
    if (slo.metric === 'request_latency') tokenMsLimit = Math.min(tokenMsLimit, slo.limit / osl);
  }
  const ranks = (pool: ResolvedPool) => pool.replicas * pool.ranksPerWorker;
  if (run.kvTransfer === null) {
    const pool = poolOf(run, 'aggregated');
    return decodingRankPerMs(pool, isl, osl, isl, tokenMsLimit) * 1000 * ranks(pool) * ESTIMATE_SHARE;
  }
  // Disaggregated: the slower of the two pools; prompts short enough to stay on the decode worker are prefilled there.
  const prefill = poolOf(run, 'prefill');
  const decode = poolOf(run, 'decode');
  const local = isl <= run.kvTransfer.maxLocalPrefillTokens;
  const decodePerMs = decodingRankPerMs(decode, isl, osl, local ? isl : 0, tokenMsLimit) * ranks(decode);
  const prefillPerMs = local ? Infinity : prefillRankPerMs(prefill, isl) * ranks(prefill);
  return Math.min(prefillPerMs, decodePerMs) * 1000 * ESTIMATE_SHARE;
}
