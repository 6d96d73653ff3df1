/** The scheduler seam's factory: the batch policy a pool's ranks run, built once per pool. */
import type { PolicySpec } from '../run.js';
import type { BatchPolicy } from './batch-policy.js';
import { SglangScheduler } from './sglang.js';
import { TrtllmScheduler } from './trtllm.js';
import { VllmV1Fcfs } from './vllm-fcfs.js';
import { VllmV1Priority } from './vllm-priority.js';

/**
 * The batch policy of a pool (one instance for all its `ranks` ranks, which index its per-rank
 * state by `EngineRank.index`): vLLM v1 FCFS or priority, SGLang, TensorRT-LLM
 * (docs/replay-model.md, "Schedulers").
 */
export function createBatchPolicy(spec: PolicySpec, ranks: number): BatchPolicy {
  switch (spec.kind) {
    case 'vllm':
      return spec.order === 'priority' ? new VllmV1Priority(spec.priorities, ranks) : new VllmV1Fcfs();
    case 'sglang':
      return new SglangScheduler(spec, ranks);
    case 'trtllm':
      return new TrtllmScheduler(spec.capacity === 'guaranteed_no_evict');
  }
}
