/**
 * Steps the batch policies share: the pass totals the timing provider reads (`summarizePass`),
 * moving the scheduled requests to the front of `running` (`scheduledFirst`), and the cost of a
 * request in blocks. Policies other than vLLM FCFS decide first and total afterwards, so that a
 * request refunded or retracted mid-composition leaves nothing behind in the totals.
 */
import type { EngineRank } from '../engine-rank.js';

/**
 * Writes `rank.view` for the plan `running[0 .. count)` (tokens in `table.scheduled`): prefill
 * tokens and pairs, decoding requests and their context, emitted tokens, blocks in use. A
 * request decodes when it has exactly one token left to compute and has generated a token or
 * moved its KV in from a prefill worker (`RequestTable.kvReady`).
 */
export function summarizePass(rank: EngineRank, count: number): void {
  const t = rank.table;
  const prompt = t.prompt;
  const generated = t.generated;
  const computed = t.computed;
  const scheduled = t.scheduled;
  const outputLen = t.outputLen;
  const kvReady = t.kvReady;
  const running = rank.running;
  let prefillTokens = 0;
  let prefillPairs = 0;
  let decodeRequests = 0;
  let decodeKvTokens = 0;
  let emitted = 0;
  for (let i = 0; i < count; i++) {
    const r = running[i];
    const known = prompt[r] + generated[r];
    const done = computed[r];
    const needed = known - done;
    const tokens = scheduled[r];
    if (needed === 1 && (generated[r] > 0 || kvReady[r] > 0)) {
      decodeRequests++;
      decodeKvTokens += known;
    } else {
      prefillTokens += tokens;
      prefillPairs += tokens * (done + tokens / 2);
    }
    if (tokens === needed && generated[r] < outputLen[r]) emitted++;
  }
  rank.scheduledCount = count;
  const view = rank.view;
  view.prefillTokens = prefillTokens;
  view.prefillPairs = prefillPairs;
  view.decodeRequests = decodeRequests;
  view.decodeKvTokens = decodeKvTokens;
  view.emittedTokens = emitted;
  view.kvBlocksUsed = rank.store.usedBlocks;
}

/**
 * Moves the running requests with `table.scheduled > 0` to the front of `running`, each group
 * keeping its order, and returns how many there are. `scratch` holds at least `runningCount`.
 */
export function scheduledFirst(rank: EngineRank, scratch: Int32Array): number {
  const running = rank.running;
  const scheduled = rank.table.scheduled;
  const n = rank.runningCount;
  let front = 0;
  let back = 0;
  for (let i = 0; i < n; i++) {
    const r = running[i];
    if (scheduled[r] > 0) running[front++] = r;
    else scratch[back++] = r;
  }
  for (let i = 0; i < back; i++) running[front + i] = scratch[i];
  return front;
}

/** Blocks that hold `tokens` tokens. */
export function blocksFor(tokens: number, blockSize: number): number {
  return ((tokens + blockSize - 1) / blockSize) | 0;
}
