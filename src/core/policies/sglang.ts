/**
 * SGLang's scheduler loop (sgl-project/sglang `python/sglang/srt/managers/scheduler.py`,
 * `schedule_policy.py` (PrefillAdder, SchedulePolicy), `schedule_batch.py` (retract_decode);
 * docs/replay-model.md, "SGLang"): a pass is either a prefill batch or a decode batch, never
 * both (mixed chunks are off by default).
 *
 * - **Prefill first.** When a chunked prefill is in progress, or requests wait and the batch is
 *   not marked full, a prefill batch is formed: the chunked request's next chunk, then waiting
 *   requests in policy order (`fcfs`, or `lpm`: longest cached prefix first), each admitted
 *   only if its uncached prompt plus its expected output, min(output, clip), fits the free KV
 *   minus what the running requests are expected to still need,
 *   sum(min(output left, clip) x new_token_ratio). A request that does not fit marks the batch
 *   full until a running request finishes or is retracted. The pass runs only the prefill.
 * - **Otherwise decode**: every running request computes one token. When the blocks for that
 *   cannot be had, requests are retracted (fewest generated tokens first, then longest prompt)
 *   until the free KV holds retract_decode_steps tokens per remaining request; they go to the
 *   back of the waiting queue and recompute later. new_token_ratio then jumps to
 *   (generated + steps x remaining) / sum(output lengths) of the remaining requests; every decode
 *   pass without a retraction lowers it by its decay, down to its floor; an idle rank resets it.
 */
import type { BatchPolicy } from './batch-policy.js';
import type { EngineRank } from '../engine-rank.js';
import { scheduledFirst, summarizePass } from './policy-steps.js';

export interface SglangOptions {
  order: 'fcfs' | 'lpm';
  initNewTokenRatio: number;
  minNewTokenRatio: number;
  newTokenRatioDecay: number;
  retractDecodeSteps: number;
  clipMaxNewTokens: number;
}

/** SGLang falls back to FCFS for a step when more requests than this wait (schedule_policy.py). */
const LPM_MAX_QUEUE = 128;

export class SglangScheduler implements BatchPolicy {
  /** Per rank: new_token_ratio, the batch-full mark, running count after the last composition, the request whose prefill is chunked (-1: none). */
  private readonly ratio: Float64Array;
  private readonly full: Uint8Array;
  private readonly lastRunning: Int32Array;
  private readonly chunked: Int32Array;
  private scratch = new Int32Array(16);
  private keys = new Float64Array(16);

  constructor(
    private readonly options: SglangOptions,
    ranks: number,
  ) {
    this.ratio = new Float64Array(ranks).fill(options.initNewTokenRatio);
    this.full = new Uint8Array(ranks);
    this.lastRunning = new Int32Array(ranks);
    this.chunked = new Int32Array(ranks).fill(-1);
  }

  /** The current new_token_ratio of rank `index` (for tests and docs). */
  newTokenRatio(index: number): number {
    return this.ratio[index];
  }

  compose(rank: EngineRank, nowMs: number): boolean {
    const k = rank.index;
    rank.rejectedCount = 0;
    if (this.scratch.length < rank.running.length) this.scratch = new Int32Array(rank.running.length);
    // A running request finished since the last composition: the batch is no longer full.
    if (rank.runningCount < this.lastRunning[k]) this.full[k] = 0;
    // An idle rank starts over from the initial ratio (SGLang resets it when no batch runs).
    if (rank.runningCount === 0) {
      this.ratio[k] = this.options.initNewTokenRatio;
      this.full[k] = 0;
    }
    let count = 0;
    let tried = false;
    if (this.chunked[k] >= 0 || (rank.waiting.size > 0 && this.full[k] === 0)) {
      count = this.prefill(rank, nowMs);
      tried = true;
    }
    if (count === 0) {
      count = this.decode(rank);
      // A decode step that retracted every request leaves a batch to prefill.
      if (count === 0 && !tried && rank.waiting.size > 0 && this.full[k] === 0) count = this.prefill(rank, nowMs);
      if (count < 0) count = -count;
      else summarizePass(rank, count);
    } else summarizePass(rank, count);
    this.lastRunning[k] = rank.runningCount;
    return count > 0 || rank.rejectedCount > 0;
  }

  /** Forms a prefill batch; returns its size (0: none, the pass decodes). */
  private prefill(rank: EngineRank, nowMs: number): number {
    const k = rank.index;
    const o = this.options;
    const t = rank.table;
    const prompt = t.prompt;
    const generated = t.generated;
    const computed = t.computed;
    const scheduled = t.scheduled;
    const outputLen = t.outputLen;
    const store = rank.store;
    const limited = store.totalBlocks > 0;
    const { maxBatchedTokens, maxSequences, chunkedPrefill, lengthLimit, blockSize } = rank.limits;
    const running = rank.running;
    const waiting = rank.waiting;
    const chunkedId = this.chunked[k];
    const ratio = this.ratio[k];
    const clip = o.clipMaxNewTokens;
    if (chunkedId < 0 && rank.runningCount >= maxSequences && (waiting.size === 0 || prompt[waiting.peekFront()] < lengthLimit)) {
      this.full[k] = 1;
      return 0;
    }

    // What the running requests are expected to still need (the chunked one reserved nothing
    // yet); every running request is unscheduled until chosen.
    let reserved = 0;
    for (let i = 0; i < rank.runningCount; i++) {
      const r = running[i];
      scheduled[r] = 0;
      if (!limited || r === chunkedId) continue;
      const left = outputLen[r] - generated[r];
      reserved += (left < clip ? left : clip) * ratio;
    }
    let remChunk = maxBatchedTokens;
    let admitted = 0;
    this.chunked[k] = -1;

    if (chunkedId >= 0) {
      const known = prompt[chunkedId] + generated[chunkedId];
      const needed = known - computed[chunkedId];
      const tokens = needed < remChunk ? needed : remChunk;
      if (!limited || store.grow(chunkedId, computed[chunkedId] + tokens)) {
        scheduled[chunkedId] = tokens;
        remChunk -= tokens;
        admitted++;
        if (tokens < needed) this.chunked[k] = chunkedId;
        else reserved += outputLen[chunkedId] < clip ? outputLen[chunkedId] : clip;
      } else {
        // Its next chunk cannot get blocks: it waits for decodes to free some.
        this.chunked[k] = chunkedId;
      }
    }

    if (this.chunked[k] < 0 && o.order === 'lpm' && waiting.size > 1 && waiting.size <= LPM_MAX_QUEUE && store.cachedBlocks > 0) {
      this.sortByCachedPrefix(rank);
    }
    while (this.chunked[k] < 0 && waiting.size > 0) {
      const r = waiting.peekFront();
      if (prompt[r] >= lengthLimit) {
        rank.rejectHead();
        continue;
      }
      if (rank.runningCount >= maxSequences) {
        this.full[k] = 1;
        break;
      }
      if (remChunk <= 0) break;
      const known = prompt[r] + generated[r];
      // KV moved in from a prefill worker counts as computed (a decode worker's admission).
      const moved = t.kvReady[r];
      const cached = moved > 0 ? moved : store.cachedPrefix(r, known - 1);
      const extend = known - cached;
      const expected = outputLen[r] < clip ? outputLen[r] : clip;
      if (limited) {
        const remTotal = store.freeBlocks * blockSize - reserved;
        // A rank with nothing running and nothing admitted takes the head whatever its
        // expected output (SGLang would refuse the request at its tokenizer instead).
        if (extend + expected >= remTotal && (rank.runningCount > 0 || admitted > 0)) {
          this.full[k] = 1;
          break;
        }
      }
      if (!chunkedPrefill && extend > remChunk && admitted > 0) break;
      const tokens = extend < remChunk ? extend : remChunk;
      if (!store.admit(r, cached, cached + tokens)) {
        this.full[k] = 1;
        break;
      }
      rank.admitHead(nowMs, cached);
      scheduled[r] = tokens;
      remChunk -= tokens;
      admitted++;
      if (tokens < extend) {
        this.chunked[k] = r;
        break;
      }
      reserved += expected;
    }
    if (admitted === 0) return 0;
    return scheduledFirst(rank, this.scratch);
  }

  /**
   * A decode batch: every decoding request computes one token, retracting requests when blocks
   * run out. Returns minus the batch size when it wrote the pass totals itself (every running
   * request decodes: the common case, totalled in the same loop), else the batch size.
   */
  private decode(rank: EngineRank): number {
    const k = rank.index;
    const o = this.options;
    const t = rank.table;
    const prompt = t.prompt;
    const generated = t.generated;
    const computed = t.computed;
    const scheduled = t.scheduled;
    const store = rank.store;
    const limited = store.totalBlocks > 0;
    const running = rank.running;
    const chunkedId = this.chunked[k];
    if (rank.runningCount === 0) return 0;
    let retracted = false;
    let allDecode = true;
    let kvTokens = 0;
    let kvMax = 0;
    let kvMin = 0;
    let i = 0;
    while (i < rank.runningCount) {
      const r = running[i];
      const known = prompt[r] + generated[r];
      if (r === chunkedId || known - computed[r] !== 1) {
        // A chunked prefill that could not get blocks: not in the decode batch.
        scheduled[r] = 0;
        allDecode = false;
        i++;
        continue;
      }
      if (limited && !store.grow(r, known)) {
        this.retract(rank, r);
        retracted = true;
        // The requests before the cursor may have moved: start over (those already grown keep their blocks).
        i = 0;
        kvTokens = 0;
        continue;
      }
      scheduled[r] = 1;
      if (kvTokens === 0) kvMax = kvMin = known;
      else if (known > kvMax) kvMax = known;
      else if (known < kvMin) kvMin = known;
      kvTokens += known;
      i++;
    }
    if (retracted) {
      this.full[k] = 0;
      let decoded = 0;
      let maxNew = 0;
      for (let j = 0; j < rank.runningCount; j++) {
        decoded += generated[running[j]];
        maxNew += t.outputLen[running[j]];
      }
      const estimate = maxNew > 0 ? (decoded + o.retractDecodeSteps * rank.runningCount) / maxNew : 1;
      this.ratio[k] = estimate < 1 ? estimate : 1;
    } else {
      const next = this.ratio[k] - o.newTokenRatioDecay;
      this.ratio[k] = next > o.minNewTokenRatio ? next : o.minNewTokenRatio;
    }
    if (!allDecode) return scheduledFirst(rank, this.scratch);
    const n = rank.runningCount;
    if (n === 0) return 0;
    // Every running request decodes one token and emits it (finished requests have left).
    rank.scheduledCount = n;
    const view = rank.view;
    view.prefillTokens = 0;
    view.prefillPairs = 0;
    view.decodeRequests = n;
    view.decodeKvTokens = kvTokens;
    view.decodeKvMax = kvMax;
    view.decodeKvMin = kvMin;
    view.emittedTokens = n;
    view.workerTokens = n;
    view.kvBlocksUsed = store.usedBlocks;
    return -n;
  }

  /**
   * SGLang's retract_decode: retract at least one request, then more while the free KV holds
   * fewer than retract_decode_steps tokens per remaining request (never the last one). The
   * victim is the request with the fewest generated tokens, then the longest prompt, then the
   * latest sent (largest id). `needy` is the request whose block could not be had.
   */
  private retract(rank: EngineRank, needy: number): void {
    const t = rank.table;
    const generated = t.generated;
    const prompt = t.prompt;
    const running = rank.running;
    const store = rank.store;
    const steps = this.options.retractDecodeSteps;
    const blockSize = rank.limits.blockSize;
    let first = true;
    while (rank.runningCount > 1 && (first || store.freeBlocks * blockSize < steps * rank.runningCount)) {
      first = false;
      let victim = 0;
      for (let j = 1; j < rank.runningCount; j++) {
        const a = running[j];
        const b = running[victim];
        if (generated[a] !== generated[b] ? generated[a] < generated[b] : prompt[a] !== prompt[b] ? prompt[a] > prompt[b] : a > b)
          victim = j;
      }
      if (rank.evictAt(victim, false) === this.chunked[rank.index]) this.chunked[rank.index] = -1;
    }
    // The last request alone cannot get its block: it leaves too (the pool is smaller than its sequence).
    if (rank.runningCount === 1 && running[0] === needy && !store.grow(needy, prompt[needy] + generated[needy])) {
      rank.evictAt(0, false);
    }
  }

  /** Orders `waiting` by cached prefix, longest first, ties in queue order (SGLang's lpm). */
  private sortByCachedPrefix(rank: EngineRank): void {
    const waiting = rank.waiting;
    const t = rank.table;
    const n = waiting.size;
    if (this.keys.length < n) this.keys = new Float64Array(Math.max(n, this.keys.length * 2));
    if (this.scratch.length < n) this.scratch = new Int32Array(Math.max(n, this.scratch.length * 2));
    const keys = this.keys;
    const ids = this.scratch;
    for (let i = 0; i < n; i++) {
      const r = waiting.at(i);
      ids[i] = r;
      keys[i] = rank.store.cachedPrefix(r, t.prompt[r] + t.generated[r] - 1);
    }
    // Insertion sort, stable: at most LPM_MAX_QUEUE entries.
    for (let i = 1; i < n; i++) {
      const id = ids[i];
      const key = keys[i];
      let j = i - 1;
      while (j >= 0 && keys[j] < key) {
        ids[j + 1] = ids[j];
        keys[j + 1] = keys[j];
        j--;
      }
      ids[j + 1] = id;
      keys[j + 1] = key;
    }
    for (let i = 0; i < n; i++) waiting.set(i, ids[i]);
  }
}
