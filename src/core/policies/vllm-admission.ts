/**
 * The admission step both vLLM v1 policies share (vllm-project/vllm
 * `vllm/v1/core/sched/scheduler.py`): requests leave the head of `waiting` (in arrival order under
 * FCFS, in (priority, arrival) order under the priority policy) with head-of-line blocking.
 */
import type { EngineRank } from '../engine-rank.js';
import type { PassTotals } from './policy-steps.js';

/**
 * Admits from the head of `rank.waiting` while a sequence slot, `budget` tokens and blocks remain;
 * prompts at or above the length limit are rejected when they reach the head. Without chunked
 * prefill a prompt that needs more than the budget left (but fits an empty pass) stops the
 * admissions. At least one token is computed, so the prefix cache serves at most all but the last
 * known token; KV moved in from a prefill worker counts as computed (a decode worker's admission)
 * and the request decodes. Returns how many requests joined the plan (added to `totals`).
 */
export function admitFromHead(rank: EngineRank, nowMs: number, budget: number, totals: PassTotals): number {
  const t = rank.table;
  const prompt = t.prompt;
  const store = rank.store;
  const { maxBatchedTokens, maxSequences, chunkedPrefill, lengthLimit } = rank.limits;
  const waiting = rank.waiting;
  let admitted = 0;
  while (waiting.size > 0) {
    const r = waiting.peekFront();
    if (prompt[r] >= lengthLimit) {
      rank.rejectHead();
      continue;
    }
    if (rank.runningCount >= maxSequences || budget === 0) break;
    const known = prompt[r] + t.generated[r];
    const moved = t.kvReady[r];
    const cached = moved > 0 ? moved : store.cachedPrefix(r, known - 1);
    const needed = known - cached;
    if (!chunkedPrefill && needed > budget && needed <= maxBatchedTokens) break;
    const tokens = needed < budget ? needed : budget;
    if (!store.admit(r, cached, cached + tokens)) break;
    rank.admitHead(nowMs, cached);
    t.scheduled[r] = tokens;
    budget -= tokens;
    totals.add(t, r, tokens, needed, cached, known, moved > 0);
    admitted++;
  }
  return admitted;
}
