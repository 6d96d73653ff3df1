/**
 * vLLM v1's scheduler with its default policy, first come first served (vllm-project/vllm
 * `vllm/v1/core/sched/scheduler.py`; docs/replay-model.md, "Engine").
 */
import type { EngineRank } from '../engine-rank.js';
import type { BatchPolicy } from './batch-policy.js';
import { decodes, PassTotals } from './policy-steps.js';
import { admitFromHead } from './vllm-admission.js';

/**
 * vLLM v1's scheduler, first come first served: running requests first (in admission order,
 * preempting the newest when a block cannot be had), then admissions from the head of
 * `waiting` with head-of-line blocking, none in a pass that preempted; prompts at or above the
 * length limit are rejected when they reach the head.
 */
export class VllmV1Fcfs implements BatchPolicy {
  private readonly totals = new PassTotals();

  compose(rank: EngineRank, nowMs: number): boolean {
    const t = rank.table;
    const prompt = t.prompt;
    const generated = t.generated;
    const computed = t.computed;
    const scheduled = t.scheduled;
    const store = rank.store;
    // An unlimited pool always has the blocks: no call per running request for it.
    const limited = store.totalBlocks > 0;
    const running = rank.running;
    const totals = this.totals;
    totals.clear();
    let budget = rank.limits.maxBatchedTokens;
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
      totals.add(t, r, tokens, needed, done, known, decodes(t, r, needed));
      i++;
    }
    let count = i;

    // 2. Admissions from the head of `waiting`, strictly FCFS with head-of-line blocking;
    // none in a pass that preempted. 4. Rejections are decided at the head.
    if (!preempted) count += admitFromHead(rank, nowMs, budget, totals);
    totals.write(rank, count);
    return count > 0 || rank.rejectedCount > 0;
  }
}
