/**
 * The candidates of a plan: every deployment of the search space on every GPU of the plan, in
 * plan order, and the run config of a candidate at a request rate.
 *
 * A worker layout is a kind in `CANDIDATE_KINDS` (a registry): it lists its candidates for one GPU
 * and says which run-config keys each sets. The rest of the planner sees only what a kind
 * returns (knobs for the table, dotted overrides for the run config, the GPU count), so a new
 * layout (disaggregated prefill and decode workers with prefill:decode ratios) is one more entry.
 */
import { costPerHour } from '../config/cost.js';
import { applyOverride } from '../sweep/plan.js';
import type { PlanSpec, SearchSpace, WorkerKind } from './plan-file.js';

/** A knob's value as the table shows it. */
export type Knob = number | string;

export interface Candidate {
  /** Position in plan order, from 0. */
  index: number;
  /** Readable and unique in the plan: `h100_sxm-tp4-r2-mbt8192-seq256`. */
  id: string;
  kind: WorkerKind;
  /** The GPU as the plan names it (a catalog name). */
  hardware: string;
  pricePerGpuHour: number;
  gpus: number;
  costPerHour: number;
  /** What the candidate chose, by name, in column order (tensor, replicas, ...). */
  knobs: Record<string, Knob>;
  /** Run-config keys the candidate sets (dotted path, value), applied after the plan's `engine`. */
  overrides: Array<[string, unknown]>;
}

/** One candidate of a kind on one GPU, before it gets its place in the plan. */
export interface KindCandidate {
  label: string;
  gpus: number;
  knobs: Record<string, Knob>;
  overrides: Array<[string, unknown]>;
}

export interface CandidateKind {
  /** Every candidate of the search space for one GPU, in plan order. */
  enumerate(space: SearchSpace): KindCandidate[];
  /** How many candidates `enumerate` lists for one GPU, without listing them (a plan's size is checked first). */
  count(space: SearchSpace): number;
  /** The plan-file field behind a run-config key the kind sets (`search.tensor` for its tensor size), for messages. */
  planField(runConfigPath: string): string | null;
}

/**
 * Candidates of one plan at most. Each costs a few replays of a second or less; 10,000 is hours
 * on two cores, and a search space past it is more likely a list written by mistake (a GPU
 * budget of 65,536 with tensor 1 lists 65,536 replica counts).
 */
export const MAX_PLAN_CANDIDATES = 10_000;

const AGGREGATED = 'engine.workers.aggregated';

/** Replica counts for a worker of `gpusPerWorker` GPUs: the list (within the budget), or 1 .. what the budget holds. */
export function replicaCounts(space: SearchSpace, gpusPerWorker: number): number[] {
  const budget = space.gpuBudget;
  if (space.replicas !== null) return space.replicas.filter((r) => budget === null || r * gpusPerWorker <= budget);
  if (budget === null) return [1];
  return Array.from({ length: Math.floor(budget / gpusPerWorker) }, (_, i) => i + 1);
}

/** `replicaCounts(space, gpusPerWorker).length`, without the list. */
function replicaCountsLength(space: SearchSpace, gpusPerWorker: number): number {
  const budget = space.gpuBudget;
  if (space.replicas !== null) return space.replicas.filter((r) => budget === null || r * gpusPerWorker <= budget).length;
  return budget === null ? 1 : Math.floor(budget / gpusPerWorker);
}

/** Run-config keys of an aggregated candidate, with the plan-file field that lists their values. */
const AGGREGATED_FIELDS: Record<string, string> = {
  [`${AGGREGATED}.parallelism.tensor`]: 'search.tensor',
  [`${AGGREGATED}.parallelism.attention_data`]: 'search.attention_data',
  [`${AGGREGATED}.parallelism.replicas`]: 'search.replicas',
  [`${AGGREGATED}.scheduler.max_batched_tokens`]: 'search.max_batched_tokens',
  [`${AGGREGATED}.scheduler.max_sequences`]: 'search.max_sequences',
};

export const CANDIDATE_KINDS: Record<WorkerKind, CandidateKind> = {
  aggregated: {
    enumerate(space) {
      const out: KindCandidate[] = [];
      for (const tensor of space.tensor) {
        for (const attentionData of space.attentionData) {
          const perWorker = tensor * attentionData;
          for (const replicas of replicaCounts(space, perWorker)) {
            for (const maxBatchedTokens of space.maxBatchedTokens) {
              for (const maxSequences of space.maxSequences) {
                out.push({
                  label: `tp${tensor}${attentionData > 1 ? `-dp${attentionData}` : ''}-r${replicas}-mbt${maxBatchedTokens}-seq${maxSequences}`,
                  gpus: replicas * perWorker,
                  knobs: {
                    workers: 'aggregated',
                    tensor,
                    attention_data: attentionData,
                    replicas,
                    max_batched_tokens: maxBatchedTokens,
                    max_sequences: maxSequences,
                  },
                  overrides: [
                    [`${AGGREGATED}.parallelism.replicas`, replicas],
                    [`${AGGREGATED}.parallelism.tensor`, tensor],
                    [`${AGGREGATED}.parallelism.attention_data`, attentionData],
                    [`${AGGREGATED}.scheduler.max_batched_tokens`, maxBatchedTokens],
                    [`${AGGREGATED}.scheduler.max_sequences`, maxSequences],
                  ],
                });
              }
            }
          }
        }
      }
      return out;
    },
    count(space) {
      let layouts = 0;
      for (const tensor of space.tensor) for (const dp of space.attentionData) layouts += replicaCountsLength(space, tensor * dp);
      return layouts * space.maxBatchedTokens.length * space.maxSequences.length;
    },
    planField(runConfigPath) {
      return AGGREGATED_FIELDS[runConfigPath] ?? null;
    },
  },
};

/** Candidates of the plan (`enumerateCandidates(plan).length`), counted without listing them. */
export function countCandidates(plan: PlanSpec): number {
  let perGpu = 0;
  for (const kind of plan.search.workers) perGpu += CANDIDATE_KINDS[kind].count(plan.search);
  return perGpu * plan.hardware.length;
}

/** Every candidate of the plan: GPUs in file order, then each worker kind's own order. */
export function enumerateCandidates(plan: PlanSpec): Candidate[] {
  const candidates: Candidate[] = [];
  for (const hw of plan.hardware) {
    for (const kind of plan.search.workers) {
      for (const c of CANDIDATE_KINDS[kind].enumerate(plan.search)) {
        candidates.push({
          index: candidates.length,
          id: `${hw.name}-${c.label}`,
          kind,
          hardware: hw.name,
          pricePerGpuHour: hw.pricePerGpuHour,
          gpus: c.gpus,
          costPerHour: costPerHour(c.gpus, hw.pricePerGpuHour),
          knobs: c.knobs,
          overrides: c.overrides,
        });
      }
    }
  }
  return candidates;
}

/**
 * Requests a replay at `rateRps` sends (at most `maxRequests`: a trace's rows), and how many of
 * the first ones are warm-up (docs/planning.md).
 */
export function requestsAt(rates: PlanSpec['rates'], rateRps: number, maxRequests = Infinity): { requests: number; warmup: number } {
  const requests = Math.min(maxRequests, Math.max(rates.minRequests, Math.round(rateRps * rates.durationS)));
  return { requests, warmup: Math.floor(requests * rates.warmupShare) };
}

/**
 * The raw run config of a candidate at a rate (validated by the caller): the plan's engine keys,
 * the model and GPU, the candidate's keys, roofline timing and a KV cache from memory; the plan's
 * source under Poisson arrivals with the plan's seed; `requestsAt` requests.
 */
export function candidateRunConfig(plan: PlanSpec, candidate: Candidate, rateRps: number, maxRequests = Infinity): Record<string, unknown> {
  const { requests, warmup } = requestsAt(plan.rates, rateRps, maxRequests);
  let raw: Record<string, unknown> = {
    engine: { ...structuredClone(plan.engine), model: plan.model, hardware: candidate.hardware },
    traffic: {
      source: structuredClone(plan.source),
      load: { type: 'poisson', requests_per_second: rateRps, seed: plan.rates.seed },
      stop: { requests },
    },
    report: { warmup_requests: warmup },
  };
  raw = applyOverride(raw, `${AGGREGATED}.timing.type`, 'roofline');
  raw = applyOverride(raw, `${AGGREGATED}.kv_cache.capacity.type`, 'auto');
  for (const [key, value] of candidate.overrides) raw = applyOverride(raw, key, value);
  return raw;
}
