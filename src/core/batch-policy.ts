/**
 * Batch policies: how a rank composes a pass from its queues and its KV store (docs/replay-model.md,
 * "Engine"). A policy decides; the rank applies the effects (`admitHead`, `preemptNewest`,
 * `rejectHead`) and the store keeps the block books. The plan a policy leaves behind is
 * `rank.running[0 .. rank.scheduledCount)`, each with its tokens in `table.scheduled`, the
 * rank's rejections, and `rank.view` for the timing provider.
 *
 * A policy sees everything another engine's scheduler needs: each request's prompt, output
 * length, generated and computed tokens (request table), the store's free and used blocks and
 * cached prefixes, and the `waiting` deque it may reorder; it may preempt running requests.
 * One policy per run (the `Simulation` builds it), so the call in the loop stays monomorphic.
 */
import type { EngineRank } from './engine-rank.js';
import type { ResolvedRun } from './run.js';
import { SglangScheduler } from './sglang-policy.js';
import { TrtllmScheduler } from './trtllm-policy.js';
import { VllmV1Priority } from './vllm-priority.js';

export interface BatchPolicy {
  /** Composes `rank`'s pass starting at `nowMs`; true when it has anything to do (compute or rejections). */
  compose(rank: EngineRank, nowMs: number): boolean;
}

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
      if (generated[r] > 0 && needed === 1) {
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
        const cached = store.cachedPrefix(r, known - 1);
        const needed = known - cached;
        if (!chunkedPrefill && needed > budget && needed <= maxBatchedTokens) break;
        const tokens = needed < budget ? needed : budget;
        if (!store.admit(r, cached, cached + tokens)) break;
        rank.admitHead(nowMs, cached);
        scheduled[r] = tokens;
        budget -= tokens;
        prefillTokens += tokens;
        prefillPairs += tokens * (cached + tokens / 2);
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

/**
 * The batch policy of a run (one instance for all its ranks): vLLM v1 FCFS or priority, SGLang,
 * TensorRT-LLM (docs/replay-model.md, "Schedulers").
 */
export function createBatchPolicy(run: ResolvedRun): BatchPolicy {
  const spec = run.policy;
  switch (spec.kind) {
    case 'vllm':
      return spec.order === 'priority' ? new VllmV1Priority(spec.priorities, run.replicas * run.ranksPerWorker) : new VllmV1Fcfs();
    case 'sglang':
      return new SglangScheduler(spec, run.replicas * run.ranksPerWorker);
    case 'trtllm':
      return new TrtllmScheduler(spec.capacity === 'guaranteed_no_evict');
  }
}
