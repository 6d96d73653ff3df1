/**
 * vLLM v1's scheduler with `--scheduling-policy priority` (vllm-project/vllm
 * `vllm/v1/core/sched/scheduler.py`, commit 6cf7b26, and `request_queue.py`): the waiting queue
 * is ordered by (priority, arrival time), lower first; when a running request cannot get a
 * block, the running request with the largest (priority, arrival time) is preempted, whether or
 * not it was already given tokens in this step (its tokens are refunded). Everything else is
 * vLLM v1 FCFS (vllm-fcfs.ts): running requests first, no admission in a step that preempted,
 * head-of-line blocking at the head of the ordered queue.
 */
import type { BatchPolicy } from './batch-policy.js';
import type { EngineRank } from '../engine-rank.js';
import { decodes, PassTotals, summarizePass } from './policy-steps.js';
import { admitFromHead } from './vllm-admission.js';
import type { PrioritySpec } from '../run.js';

export class VllmV1Priority implements BatchPolicy {
  private readonly values: Int32Array | null;
  private readonly levels: number;
  private readonly seed: number;

  /** Per rank: how many entries at the front of `waiting` are in order since the last composition (-1: none known). */
  private readonly sortedCount: Int32Array;
  private scratch = new Int32Array(16);
  private readonly totals = new PassTotals();

  constructor(spec: PrioritySpec | null, ranks: number) {
    this.sortedCount = new Int32Array(ranks);
    this.values = spec !== null && spec.kind === 'values' ? spec.values : null;
    this.levels = spec !== null && spec.kind === 'hash' ? spec.levels : 1;
    this.seed = spec !== null && spec.kind === 'hash' ? spec.seed : 0;
  }

  /** Request `id`'s priority: lower runs first. */
  priority(id: number): number {
    if (this.values !== null) return this.values[id];
    if (this.levels <= 1) return 0;
    // An integer hash of the id (murmur3's finalizer): priorities spread evenly over the levels.
    let h = (id ^ this.seed) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
    return (h >>> 0) % this.levels;
  }

  /** Whether request a comes before request b: (priority, arrival, id), lowest first. */
  private before(rank: EngineRank, a: number, b: number): boolean {
    const pa = this.priority(a);
    const pb = this.priority(b);
    if (pa !== pb) return pa < pb;
    const sent = rank.table.sentMs;
    if (sent[a] !== sent[b]) return sent[a] < sent[b];
    return a < b;
  }

  compose(rank: EngineRank, nowMs: number): boolean {
    const t = rank.table;
    const prompt = t.prompt;
    const generated = t.generated;
    const computed = t.computed;
    const scheduled = t.scheduled;
    const store = rank.store;
    const limited = store.totalBlocks > 0;
    const running = rank.running;
    const waiting = rank.waiting;
    let budget = rank.limits.maxBatchedTokens;
    let preempted = false;
    let refunded = false;
    const totals = this.totals;
    totals.clear();
    rank.rejectedCount = 0;

    // The waiting queue in (priority, arrival) order. It was left in order by the last
    // composition unless that one preempted; since then arrivals only joined at the back, so
    // only they are inserted.
    const sorted = this.sortedCount[rank.index];
    const fresh = waiting.size - (sorted > 1 ? sorted : waiting.size > 0 ? 1 : 0);
    if (fresh > 0) {
      if (this.scratch.length < fresh) this.scratch = new Int32Array(Math.max(fresh, this.scratch.length * 2));
      const tail = this.scratch;
      for (let k = fresh - 1; k >= 0; k--) tail[k] = waiting.popBack();
      for (let k = 0; k < fresh; k++) {
        const v = tail[k];
        // Binary search in the ordered queue for the first entry v goes before.
        let lo = 0;
        let hi = waiting.size;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (this.before(rank, v, waiting.at(mid))) hi = mid;
          else lo = mid + 1;
        }
        waiting.insertAt(lo, v);
      }
    }

    let i = 0;
    while (i < rank.runningCount && budget > 0) {
      const r = running[i];
      const known = prompt[r] + generated[r];
      const done = computed[r];
      const needed = known - done;
      const tokens = needed < budget ? needed : budget;
      let selfPreempted = false;
      if (limited) {
        while (!store.grow(r, done + tokens)) {
          // Preempt the running request of largest (priority, arrival); refund it if it was
          // given tokens earlier in this step.
          let victim = 0;
          for (let k = 1; k < rank.runningCount; k++) if (this.before(rank, running[victim], running[k])) victim = k;
          preempted = true;
          if (victim < i) {
            budget += scheduled[running[victim]];
            refunded = true;
            i--;
          }
          const id = rank.evictAt(victim, true);
          if (id === r) {
            selfPreempted = true;
            break;
          }
        }
      }
      // The request preempted itself: nothing after it runs in this step (vLLM stops there).
      if (selfPreempted) break;
      scheduled[r] = tokens;
      budget -= tokens;
      totals.add(t, r, tokens, needed, done, known, decodes(t, r, needed));
      i++;
    }
    let count = i;

    if (!preempted) count += admitFromHead(rank, nowMs, budget, totals);
    // Preempted requests went to the front out of order: sort everything next time.
    this.sortedCount[rank.index] = preempted ? 0 : waiting.size;
    // Requests left unscheduled after the cursor (budget spent) stay behind the plan. A refund
    // took a request out of the totals kept along the way: total the plan again.
    if (refunded) summarizePass(rank, count);
    else totals.write(rank, count);
    return count > 0 || rank.rejectedCount > 0;
  }
}
