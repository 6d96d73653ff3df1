/**
 * vLLM v1's scheduler with its default policy, first come first served (vllm-project/vllm
 * `vllm/v1/core/sched/scheduler.py`; docs/replay-model.md, "Engine").
 */
import type { EngineRank } from '../engine-rank.js';
import type { BatchPolicy } from './batch-policy.js';

/**
 * vLLM v1's scheduler, first come first served: running requests first (in admission order,
 * preempting the newest when a block cannot be had), then admissions from the head of
 * `waiting` with head-of-line blocking, none in a pass that preempted; prompts at or above the
 * length limit are rejected when they reach the head.
 */
export class VllmV1Fcfs implements BatchPolicy {
  compose(rank: EngineRank, nowMs: number): boolean {
    const t = rank.table;
    const prompt = t.prompt;
    const generated = t.generated;
    const computed = t.computed;
    const scheduled = t.scheduled;
    const outputLen = t.outputLen;
    const store = rank.store;
    // An unlimited pool always has the blocks: no call per running request for it.
    const limited = store.totalBlocks > 0;
    const { maxBatchedTokens, maxSequences, chunkedPrefill, lengthLimit } = rank.limits;
    const view = rank.view;
    const running = rank.running;
    let budget = maxBatchedTokens;
    let prefillTokens = 0;
    let prefillPairs = 0;
    let decodeRequests = 0;
    let decodeKvTokens = 0;
    let emitted = 0;
    let preempted = false;
    rank.rejectedCount = 0;

    // 1. Running requests first, in admission order, while budget remains.
    let i = 0;
    while (i < rank.runningCount && budget > 0) {
      const r = running[i];
      const known = prompt[r] + generated[r];
      const done = computed[r];
      const needed = known - done;
      const tokens = needed < budget ? needed : budget;
      if (limited && !store.grow(r, done + tokens)) {
        // 3. Preempt the newest running request until the blocks can be had (vLLM v1,
        // recompute). The newest is always at or after the cursor, so it has not been given
        // budget in this pass and nothing needs refunding; when it is this request itself,
        // this request is not scheduled.
        let selfPreempted = false;
        do {
          preempted = true;
          if (rank.preemptNewest() === r) {
            selfPreempted = true;
            break;
          }
        } while (!store.grow(r, done + tokens));
        if (selfPreempted) break;
      }
      scheduled[r] = tokens;
      budget -= tokens;
      if (needed === 1 && (generated[r] > 0 || t.kvReady[r] > 0)) {
        decodeRequests++;
        decodeKvTokens += known;
      } else {
        prefillTokens += tokens;
        prefillPairs += tokens * (done + tokens / 2);
      }
      if (tokens === needed && generated[r] < outputLen[r]) emitted++;
      i++;
    }
    let count = i;

    // 2. Admissions from the head of `waiting`, strictly FCFS with head-of-line blocking;
    // none in a pass that preempted. 4. Rejections are decided at the head.
    if (!preempted) {
      const waiting = rank.waiting;
      while (waiting.size > 0) {
        const r = waiting.peekFront();
        if (prompt[r] >= lengthLimit) {
          rank.rejectHead();
          continue;
        }
        if (rank.runningCount >= maxSequences || budget === 0) break;
        const known = prompt[r] + generated[r];
        // At least one token is computed: the cache serves at most known - 1 tokens.
        // KV moved in from a prefill worker counts as computed (a decode worker's admission).
        const moved = t.kvReady[r];
        const cached = moved > 0 ? moved : store.cachedPrefix(r, known - 1);
        const needed = known - cached;
        if (!chunkedPrefill && needed > budget && needed <= maxBatchedTokens) break;
        const tokens = needed < budget ? needed : budget;
        if (!store.admit(r, cached, cached + tokens)) break;
        rank.admitHead(nowMs, cached);
        scheduled[r] = tokens;
        budget -= tokens;
        if (moved > 0) {
          decodeRequests++;
          decodeKvTokens += known;
        } else {
          prefillTokens += tokens;
          prefillPairs += tokens * (cached + tokens / 2);
        }
        if (tokens === needed && generated[r] < outputLen[r]) emitted++;
        count++;
      }
    }
    rank.scheduledCount = count;
    view.prefillTokens = prefillTokens;
    view.prefillPairs = prefillPairs;
    view.decodeRequests = decodeRequests;
    view.decodeKvTokens = decodeKvTokens;
    view.emittedTokens = emitted;
    view.kvBlocksUsed = store.usedBlocks;
    return count > 0 || rank.rejectedCount > 0;
  }
}
