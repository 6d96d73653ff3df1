/**
 * Steps the batch policies share: the pass totals the timing provider reads, added up as requests
 * join a plan (`PassTotals`) or over a finished plan (`summarizePass`, for a policy that took a
 * request back out of its plan, by a refund or a retraction, after counting it), which requests
 * decode (`decodes`), moving the scheduled requests to the front of `running` (`scheduledFirst`),
 * and the cost of a request in blocks.
 */
import type { EngineRank } from '../engine-rank.js';
import type { RequestTable } from '../request-table.js';

/**
 * The totals of a pass plan, added up as requests join it; `write` puts them in `rank.view`.
 * A policy keeps one and clears it at the start of each composition.
 */
export class PassTotals {
  prefillTokens = 0;
  prefillPairs = 0;
  decodeRequests = 0;
  decodeKvTokens = 0;
  decodeKvMax = 0;
  decodeKvMin = 0;
  emitted = 0;

  clear(): void {
    this.prefillTokens = 0;
    this.prefillPairs = 0;
    this.decodeRequests = 0;
    this.decodeKvTokens = 0;
    this.decodeKvMax = 0;
    this.decodeKvMin = 0;
    this.emitted = 0;
  }

  /** `count` decodes counted apart join the plan: contexts summing to `kvTokens`, from `min` to `max`. */
  addDecodes(count: number, kvTokens: number, max: number, min: number): void {
    if (count === 0) return;
    if (this.decodeRequests === 0) {
      this.decodeKvMax = max;
      this.decodeKvMin = min;
    } else {
      if (max > this.decodeKvMax) this.decodeKvMax = max;
      if (min < this.decodeKvMin) this.decodeKvMin = min;
    }
    this.decodeRequests += count;
    this.decodeKvTokens += kvTokens;
  }

  /**
   * Request `r` joins the plan with `tokens` of the `needed` it has left to compute, after
   * `done` computed of its `known` tokens: a decode (its `known` context read) when `decodes`,
   * else prefill work. It emits a token when the tokens complete what it needs and its output
   * is not yet complete.
   */
  add(t: RequestTable, r: number, tokens: number, needed: number, done: number, known: number, decodes: boolean): void {
    if (decodes) {
      if (this.decodeRequests++ === 0) {
        this.decodeKvMax = known;
        this.decodeKvMin = known;
      } else if (known > this.decodeKvMax) this.decodeKvMax = known;
      else if (known < this.decodeKvMin) this.decodeKvMin = known;
      this.decodeKvTokens += known;
    } else {
      this.prefillTokens += tokens;
      this.prefillPairs += tokens * (done + tokens / 2);
    }
    if (tokens === needed && t.generated[r] < t.outputLen[r]) this.emitted++;
  }

  /** Writes the totals, the plan's size `count` and the blocks in use into `rank`. */
  write(rank: EngineRank, count: number): void {
    rank.scheduledCount = count;
    const view = rank.view;
    view.prefillTokens = this.prefillTokens;
    view.prefillPairs = this.prefillPairs;
    view.decodeRequests = this.decodeRequests;
    view.decodeKvTokens = this.decodeKvTokens;
    view.decodeKvMax = this.decodeKvMax;
    view.decodeKvMin = this.decodeKvMin;
    view.emittedTokens = this.emitted;
    view.workerTokens = this.prefillTokens + this.decodeRequests;
    view.kvBlocksUsed = rank.store.usedBlocks;
  }
}

/** Whether request `r`, with `needed` tokens left to compute, decodes: one token left, and a token generated or its KV moved in from a prefill worker (`RequestTable.kvReady`). */
export function decodes(t: RequestTable, r: number, needed: number): boolean {
  return needed === 1 && (t.generated[r] > 0 || t.kvReady[r] > 0);
}

const totals = new PassTotals();

/**
 * Writes `rank.view` for the plan `running[0 .. count)` (tokens in `table.scheduled`): prefill
 * tokens and pairs, decoding requests and their context, emitted tokens, blocks in use.
 */
export function summarizePass(rank: EngineRank, count: number): void {
  const t = rank.table;
  const running = rank.running;
  totals.clear();
  for (let i = 0; i < count; i++) {
    const r = running[i];
    const known = t.prompt[r] + t.generated[r];
    const done = t.computed[r];
    const needed = known - done;
    totals.add(t, r, t.scheduled[r], needed, done, known, decodes(t, r, needed));
  }
  totals.write(rank, count);
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
