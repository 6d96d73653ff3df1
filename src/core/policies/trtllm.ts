/**
 * TensorRT-LLM's in-flight batching (NVIDIA/TensorRT-LLM
 * `cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp` and `microBatchScheduler.cpp`;
 * docs/replay-model.md, "TensorRT-LLM"). Each step, the capacity scheduler picks the requests
 * that may run, then the micro-batch scheduler fits them into `max_num_tokens` and
 * `max_batch_size`:
 *
 * - **Capacity, `guaranteed_no_evict`** (the default): every started request runs; a waiting
 *   request starts, in arrival order, only if the blocks of its prompt plus its whole output fit
 *   the free blocks left after reserving what every started request still needs to finish; the
 *   first that does not fit stops the admissions. Nothing is ever evicted.
 * - **Capacity, `max_utilization`**: requests take only the blocks of this step; when a started
 *   request cannot get them, the most recently started request is paused (its KV freed, back to
 *   the front of the queue, recomputed later) and nothing after it runs in this step.
 * - **Micro batch**: generation requests first (one token each) in order while tokens remain,
 *   then the context requests share what is left in order, each whole if it fits, else a chunk
 *   rounded down to whole blocks (context chunking, first come first served); without chunked
 *   context a prompt that does not fit the tokens left stops the batch.
 */
import type { BatchPolicy } from './batch-policy.js';
import type { EngineRank } from '../engine-rank.js';
import { blocksFor, decodes, PassTotals, scheduledFirst, summarizePass } from './policy-steps.js';

export class TrtllmScheduler implements BatchPolicy {
  private scratch = new Int32Array(16);
  private readonly totals = new PassTotals();

  constructor(private readonly noEvict: boolean) {}

  compose(rank: EngineRank, nowMs: number): boolean {
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
    const noEvict = this.noEvict;
    if (this.scratch.length < running.length) this.scratch = new Int32Array(running.length);
    rank.rejectedCount = 0;
    let budget = maxBatchedTokens;
    let batch = 0;
    let contexts = 0;
    /** Context read by the generation requests of step 1 (the rest of the plan is in `totals`). */
    let kvTokens = 0;
    let kvMax = 0;
    let kvMin = 0;
    const totals = this.totals;
    totals.clear();
    let skipped = false;
    let paused = false;

    // Blocks a started request may still take until it finishes (guaranteed_no_evict reserves
    // them), against the free blocks before this step's growth (which comes out of the reserve).
    let reserved = 0;
    const freeBefore = store.freeBlocks;

    // 1. Generation requests, one token each, in order; contexts wait for step 2.
    let i = 0;
    while (i < rank.runningCount) {
      const r = running[i];
      const known = prompt[r] + generated[r];
      if (noEvict && limited) {
        const need = blocksFor(finalTokens(prompt[r], outputLen[r], lengthLimit), blockSize) - store.heldBlocks(r);
        if (need > 0) reserved += need;
      }
      scheduled[r] = 0;
      if (!decodes(t, r, known - computed[r])) {
        contexts++;
        i++;
        continue;
      }
      if (budget === 0 || batch >= maxSequences) {
        skipped = true;
        i++;
        continue;
      }
      if (limited && !store.grow(r, known)) {
        // Under guaranteed_no_evict the reservations keep this from happening; should it
        // happen anyway, the request is paused as under max_utilization rather than stall.
        paused = true;
        if (this.pauseLast(rank, i)) break;
        continue;
      }
      scheduled[r] = 1;
      budget--;
      if (batch++ === 0) kvMax = kvMin = known;
      else if (known > kvMax) kvMax = known;
      else if (known < kvMin) kvMin = known;
      kvTokens += known;
      i++;
    }
    const decoders = batch;

    // 2. Started contexts (chunked prompts, recomputes) share the tokens left, in order.
    if (!paused && contexts > 0) {
      for (let j = 0; j < rank.runningCount; j++) {
        const r = running[j];
        const needed = prompt[r] + generated[r] - computed[r];
        if (decodes(t, r, needed)) continue;
        if (batch >= maxSequences) {
          skipped = true;
          continue;
        }
        const tokens = contextChunk(needed, budget, maxBatchedTokens, blockSize, chunkedPrefill);
        if (tokens === 0) {
          skipped = true;
          continue;
        }
        if (limited && !store.grow(r, computed[r] + tokens)) {
          skipped = true;
          paused = true;
          this.pauseLast(rank, j);
          break;
        }
        scheduled[r] = tokens;
        budget -= tokens;
        batch++;
        totals.add(t, r, tokens, needed, computed[r], prompt[r] + generated[r], false);
      }
    }

    // 3. Admissions in arrival order (none in a step that paused a request).
    let available = limited ? freeBefore - reserved : Infinity;
    while (!paused && waiting.size > 0) {
      const r = waiting.peekFront();
      if (prompt[r] >= lengthLimit) {
        rank.rejectHead();
        continue;
      }
      if (rank.runningCount >= maxSequences || batch >= maxSequences || budget === 0) break;
      const known = prompt[r] + generated[r];
      // KV moved in from a prefill worker counts as computed (a decode worker's admission).
      const moved = t.kvReady[r];
      const cached = moved > 0 ? moved : store.cachedPrefix(r, known - 1);
      const needed = known - cached;
      if (noEvict && limited) {
        // Cached blocks no request holds come out of the free ones too: the whole sequence counts.
        const need = blocksFor(finalTokens(prompt[r], outputLen[r], lengthLimit), blockSize);
        // A rank with nothing started takes the head even if its whole output cannot be reserved.
        if (need > available && (rank.runningCount > 0 || batch > 0)) break;
        available -= need;
      }
      const tokens = contextChunk(needed, budget, maxBatchedTokens, blockSize, chunkedPrefill);
      if (tokens === 0) break;
      if (!store.admit(r, cached, cached + tokens)) break;
      rank.admitHead(nowMs, cached);
      scheduled[r] = tokens;
      budget -= tokens;
      batch++;
      totals.add(t, r, tokens, needed, cached, known, moved > 0);
    }

    if (skipped || paused) {
      const count = scheduledFirst(rank, this.scratch);
      summarizePass(rank, count);
      return count > 0 || rank.rejectedCount > 0;
    }
    // Every running request is in the plan, in order, then the admitted ones: the totals kept
    // along the way are the pass's (generation requests decode and emit one token each).
    totals.addDecodes(decoders, kvTokens, kvMax, kvMin);
    totals.emitted += decoders;
    totals.write(rank, batch);
    return batch > 0 || rank.rejectedCount > 0;
  }

  /**
   * max_utilization: pauses the most recently started request (the last in `running`), which
   * may be the one at `cursor` itself; returns true when it was, so the caller stops.
   */
  private pauseLast(rank: EngineRank, cursor: number): boolean {
    const last = rank.runningCount - 1;
    rank.evictAt(last, true);
    return last === cursor;
  }
}

/** Tokens the sequence reaches when it finishes: prompt plus output, or the length limit. */
function finalTokens(prompt: number, output: number, lengthLimit: number): number {
  const total = prompt + output;
  return total < lengthLimit ? total : lengthLimit;
}

/**
 * A context request's tokens in this step: all `needed` if they fit `budget`; else, with chunked
 * context, the budget rounded down to whole blocks (TensorRT-LLM's chunk unit), and without it
 * none (the prompt waits for a step with room). A context that could never fit a step (a
 * recompute longer than the budget, or a budget below one block) is chunked anyway.
 */
function contextChunk(needed: number, budget: number, maxBatchedTokens: number, blockSize: number, chunked: boolean): number {
  if (needed <= budget) return needed;
  if (!chunked && needed <= maxBatchedTokens) return 0;
  const rounded = budget - (budget % blockSize);
  return rounded > 0 ? rounded : budget === maxBatchedTokens ? budget : 0;
}
