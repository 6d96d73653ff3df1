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
 * One policy per pool (the pool builds it with `createBatchPolicy`, create-batch-policy.ts), so the call in the
 * loop stays monomorphic. The implementations are beside this file; this one imports none of them.
 */
import type { EngineRank } from '../engine-rank.js';

export interface BatchPolicy {
  /** Composes `rank`'s pass starting at `nowMs`; true when it has anything to do (compute or rejections). */
  compose(rank: EngineRank, nowMs: number): boolean;
}
