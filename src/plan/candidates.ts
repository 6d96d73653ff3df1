/**
 * The candidates of a plan: every deployment of the search space on every GPU of the plan, in
 * plan order, and the run config of a candidate at a request rate.
 *
 * A worker layout is a kind in `CANDIDATE_KINDS` (a registry): aggregated workers, or
 * disaggregated prefill and decode pools split by prefill:decode ratios. A kind lists its
 * candidates for one GPU and says which run-config keys each sets; the rest of the planner sees
 * only what a kind returns (knobs for the table, dotted overrides for the run config, the roles,
 * the GPU count).
 */
import { costPerHour } from '../config/cost.js';
import { applyOverride } from '../sweep/plan.js';
import type { PlanSpec, SearchSpace, WorkerKind, WorkerLayout } from './plan-file.js';
import { WORKER_ROLES, rolePath, type WorkerRoleName } from '../config/roles.js';

/** A knob's value as the table shows it. */
export type Knob = number | string;

export interface Candidate {
  /** Position in plan order, from 0. */
  index: number;
  /** Readable and unique in the plan: `h100_sxm-tp4-r2-mbt8192-seq256`. */
  id: string;
  kind: WorkerKind;
  /** The `search.workers` entry it comes from. */
  layout: WorkerLayout;
  /** Its run config's worker roles, in pool order. */
  roles: readonly WorkerRoleName[];
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

export interface CandidateKind<L extends WorkerLayout> {
  /** The worker roles of its candidates' run configs, in pool order. */
  roles: readonly WorkerRoleName[];
  /** Every candidate of the search space and the layout's entry for one GPU, in plan order. */
  enumerate(space: SearchSpace, layout: L): KindCandidate[];
  /** How many candidates `enumerate` lists for one GPU, without listing them (a plan's size is checked first). */
  count(space: SearchSpace, layout: L): number;
  /** The plan-file field behind a run-config key the kind sets (`search.tensor` for its tensor size), for messages. */
  planField(layout: L, runConfigPath: string): string | null;
}

/**
 * Candidates of one plan at most. Each costs a few replays of a second or less; 10,000 is hours
 * on two cores, and a search space past it is more likely a list written by mistake (a GPU
 * budget of 65,536 with tensor 1 lists 65,536 replica counts).
 */
export const MAX_PLAN_CANDIDATES = 10_000;

const AGGREGATED = rolePath('aggregated');

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

type LayoutOf<K extends WorkerKind> = Extract<WorkerLayout, { kind: K }>;

const aggregatedKind: CandidateKind<LayoutOf<'aggregated'>> = {
  roles: ['aggregated'],
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
  planField(_layout, runConfigPath) {
    return AGGREGATED_FIELDS[runConfigPath] ?? null;
  },
};

const PREFILL = rolePath('prefill');
const DECODE = rolePath('decode');

/**
 * Disaggregated candidates: for each prefill:decode ratio P:D, prefill tensor size, decode tensor
 * size and attention DP, the multiples k x P prefill and k x D decode workers (k as
 * `replicaCounts` gives for a unit of P + D workers' GPUs: the listed replicas, or 1 .. what the
 * budget holds), each with every max_batched_tokens and max_sequences (both pools take the same).
 */
const disaggregatedKind: CandidateKind<LayoutOf<'disaggregated'>> = {
  roles: ['prefill', 'decode'],
  enumerate(space, layout) {
    const out: KindCandidate[] = [];
    for (const ratio of layout.ratios) {
      for (const prefillTensor of layout.prefillTensor) {
        for (const decodeTensor of layout.decodeTensor) {
          for (const attentionData of space.attentionData) {
            const unit = (ratio.prefill * prefillTensor + ratio.decode * decodeTensor) * attentionData;
            const dp = attentionData > 1 ? `-dp${attentionData}` : '';
            for (const copies of replicaCounts(space, unit)) {
              const prefillWorkers = copies * ratio.prefill;
              const decodeWorkers = copies * ratio.decode;
              for (const maxBatchedTokens of space.maxBatchedTokens) {
                for (const maxSequences of space.maxSequences) {
                  out.push({
                    label: `${prefillWorkers}p-tp${prefillTensor}${dp}-${decodeWorkers}d-tp${decodeTensor}${dp}-mbt${maxBatchedTokens}-seq${maxSequences}`,
                    gpus: copies * unit,
                    knobs: {
                      workers: 'disaggregated',
                      ratio: `${ratio.prefill}:${ratio.decode}`,
                      prefill_workers: prefillWorkers,
                      prefill_tensor: prefillTensor,
                      decode_workers: decodeWorkers,
                      decode_tensor: decodeTensor,
                      attention_data: attentionData,
                      max_batched_tokens: maxBatchedTokens,
                      max_sequences: maxSequences,
                    },
                    overrides: [
                      ...poolOverrides(PREFILL, prefillWorkers, prefillTensor, attentionData, maxBatchedTokens, maxSequences),
                      ...poolOverrides(DECODE, decodeWorkers, decodeTensor, attentionData, maxBatchedTokens, maxSequences),
                    ],
                  });
                }
              }
            }
          }
        }
      }
    }
    return out;
  },
  count(space, layout) {
    let layouts = 0;
    for (const ratio of layout.ratios) {
      for (const pt of layout.prefillTensor) {
        for (const dt of layout.decodeTensor) {
          for (const dp of space.attentionData) layouts += replicaCountsLength(space, (ratio.prefill * pt + ratio.decode * dt) * dp);
        }
      }
    }
    return layouts * space.maxBatchedTokens.length * space.maxSequences.length;
  },
  planField(layout, runConfigPath) {
    for (const [role, tensorField] of [
      [PREFILL, layout.prefillTensorField],
      [DECODE, layout.decodeTensorField],
    ] as const) {
      if (!runConfigPath.startsWith(`${role}.`)) continue;
      const key = runConfigPath.slice(role.length + 1);
      if (key === 'parallelism.tensor') return tensorField;
      if (key === 'parallelism.attention_data') return 'search.attention_data';
      if (key === 'parallelism.replicas') return `${layout.field}.disaggregated.ratios`;
      if (key === 'scheduler.max_batched_tokens') return 'search.max_batched_tokens';
      if (key === 'scheduler.max_sequences') return 'search.max_sequences';
    }
    return null;
  },
};

function poolOverrides(
  role: string,
  workers: number,
  tensor: number,
  attentionData: number,
  maxBatchedTokens: number,
  maxSequences: number,
): Array<[string, unknown]> {
  return [
    [`${role}.parallelism.replicas`, workers],
    [`${role}.parallelism.tensor`, tensor],
    [`${role}.parallelism.attention_data`, attentionData],
    [`${role}.scheduler.max_batched_tokens`, maxBatchedTokens],
    [`${role}.scheduler.max_sequences`, maxSequences],
  ];
}

/** The worker layouts a plan can search, by kind. */
export const CANDIDATE_KINDS: { [K in WorkerKind]: CandidateKind<LayoutOf<K>> } = {
  aggregated: aggregatedKind,
  disaggregated: disaggregatedKind,
};

/** The kind of a layout, typed for it. */
export function kindOf(layout: WorkerLayout): CandidateKind<WorkerLayout> {
  return CANDIDATE_KINDS[layout.kind];
}

/** The plan-file field behind a run-config key a candidate sets (`search.tensor`), or null when the candidate's kind does not set it. */
export function searchFieldOf(candidate: Candidate, runConfigPath: string): string | null {
  return kindOf(candidate.layout).planField(candidate.layout, runConfigPath);
}

/** Candidates of the plan (`enumerateCandidates(plan).length`), counted without listing them. */
export function countCandidates(plan: PlanSpec): number {
  let perGpu = 0;
  for (const layout of plan.search.workers) perGpu += kindOf(layout).count(plan.search, layout);
  return perGpu * plan.hardware.length;
}

/** Every candidate of the plan: GPUs in file order, then the layouts in `search.workers` order, then each kind's own order. */
export function enumerateCandidates(plan: PlanSpec): Candidate[] {
  const candidates: Candidate[] = [];
  for (const hw of plan.hardware) {
    for (const layout of plan.search.workers) {
      const kind = kindOf(layout);
      for (const c of kind.enumerate(plan.search, layout)) {
        candidates.push({
          index: candidates.length,
          id: `${hw.name}-${c.label}`,
          kind: layout.kind,
          layout,
          roles: kind.roles,
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
  // The plan's role blocks and transfer apply to the candidates of their layout (plan-file.ts).
  const engine: Record<string, unknown> = { ...structuredClone(plan.engine), model: plan.model, hardware: candidate.hardware };
  const workers = engine.workers as Record<string, unknown> | undefined;
  if (workers !== undefined && workers !== null && typeof workers === 'object') {
    for (const name of WORKER_ROLES) if (!candidate.roles.includes(name)) delete workers[name];
  }
  if (!candidate.roles.includes('prefill')) delete engine.kv_transfer;
  let raw: Record<string, unknown> = {
    engine,
    traffic: {
      source: structuredClone(plan.source),
      load: { type: 'poisson', requests_per_second: rateRps, seed: plan.rates.seed },
      stop: { requests },
    },
    report: { warmup_requests: warmup },
  };
  for (const role of candidate.roles) {
    raw = applyOverride(raw, `${rolePath(role)}.timing.type`, 'roofline');
    raw = applyOverride(raw, `${rolePath(role)}.kv_cache.capacity.type`, 'auto');
  }
  for (const [key, value] of candidate.overrides) raw = applyOverride(raw, key, value);
  return raw;
}
