/**
 * What a finished search says of each candidate (one row of plan.csv / plan.json) and which
 * candidate is best (docs/planning.md, "Which deployment wins"):
 *
 * - with a target rate: the cheapest per hour among the candidates whose max rate reaches it;
 *   ties go to the higher max rate, then to plan order;
 * - as much as possible: the lowest cost per million output tokens at the max rate; ties go to
 *   the higher max rate, then to plan order.
 *
 * Costs: a candidate's hour costs GPUs x the GPU's price; at its max rate it emits max rate x the
 * mean output tokens of a request of the traffic each second.
 */
import type { ReplaySummary } from '../core/report-types.js';
import type { WorkerRoleName } from '../config/roles.js';
import { costPerMillionOutputTokens } from '../config/cost.js';
import type { Candidate, Knob } from './candidates.js';
import { dominatorByRates } from './dominance.js';
import type { PlanSpec, WorkerKind } from './plan-file.js';
import { bindingCheck, type SloCheck } from './slo.js';
import type { CandidateState, CandidateStatus, TestedPoint } from './search.js';

export interface SloAtMax {
  value: number | null;
  limit: number;
  margin: number | null;
}

export interface CandidateRow {
  index: number;
  id: string;
  /** The worker layout (`search.workers`): aggregated or disaggregated. */
  layout: WorkerKind;
  hardware: string;
  knobs: Record<string, Knob>;
  gpus: number;
  price_per_gpu_hour: number;
  cost_per_hour: number;
  status: Exclude<CandidateStatus, 'searching'>;
  reason: string | null;
  /** Highest tested rate within every SLO (null when the search was pruned, failed or never ran). */
  max_rate_rps: number | null;
  /** The bracket: a rate that met the SLOs (0: none) and the lowest that did not (null: none). */
  rate_lo_rps: number;
  rate_hi_rps: number | null;
  replays: number;
  dominated_by: string | null;
  /** On its layout's frontier: it has a max rate, and no candidate of its layout costs no more per hour and sustains more. */
  on_frontier: boolean;
  /** At the max rate, per SLO (`metric.stat`). */
  slo: Record<string, SloAtMax>;
  /** The SLO with the smallest margin at the max rate. */
  binding_slo: string | null;
  /** What broke at the next tested rate above the max rate (`time_to_first_token.p90 2310 > 2000`). */
  limited_by: string | null;
  mean_output_tokens: number | null;
  output_tokens_per_s: number | null;
  goodput_rps_per_gpu: number | null;
  output_tokens_per_s_per_gpu: number | null;
  cost_per_million_output_tokens: number | null;
  /** With a target rate: whether the max rate reaches it, and copies of this deployment that would (ceil(target / max rate)). */
  meets_target: boolean | null;
  gpus_for_target: number | null;
  cost_per_hour_for_target: number | null;
  /** The most weights one GPU of any pool holds, and the smallest KV cache of a rank of any pool. */
  weights_gib_per_gpu: number | null;
  kv_cache_tokens_per_rank: number | null;
  /** Each pool's workers, GPUs, weights and KV cache (null when the run config was refused before). */
  pools: PoolRow[] | null;
  /** Path of the run config at the max rate, relative to plan.json's folder. */
  config: string | null;
  /** With roofline timing: how far such a prediction may be off (a replay summary's `accuracy`). */
  accuracy: ReplaySummary['accuracy'] | null;
  warnings: string[];
  tested: Array<{ rate_rps: number; meets: boolean; id: string; reason: string | null }>;
}

export interface BestDeployment {
  id: string;
  config: string;
  max_rate_rps: number;
  gpus: number;
  cost_per_hour: number;
  cost_per_million_output_tokens: number;
  /** How far the prediction may be off (with roofline timing), or null. */
  accuracy: ReplaySummary['accuracy'] | null;
}

/** Rounds to 6 significant digits (money and rates read better, and float noise stays out of the files). */
export function sig(value: number): number {
  return Number(value.toPrecision(6));
}

/** A replay's window is short when its mean request takes more than this share of it (docs/planning.md). */
export const WINDOW_LATENCIES = 5;

function maxPoint(state: CandidateState): TestedPoint | null {
  const lo = state.search?.lo ?? 0;
  return lo > 0 ? (state.tested.find((t) => t.rateRps === lo) ?? null) : null;
}

function sloAtMax(checks: readonly SloCheck[]): Record<string, SloAtMax> {
  return Object.fromEntries(
    checks.map((check) => [
      check.name,
      {
        value: check.value === null ? null : sig(check.value),
        limit: check.limit,
        margin: check.margin === null ? null : sig(check.margin),
      },
    ]),
  );
}

/** One pool of a candidate (one for aggregated workers; prefill then decode), from the catalog's memory arithmetic. */
export interface PoolRow {
  role: WorkerRoleName;
  workers: number;
  tensor: number;
  attention_data: number;
  gpus: number;
  weights_gib_per_gpu: number | null;
  kv_cache_tokens_per_rank: number | null;
}

export interface RowExtras {
  /** The most weights a GPU of any pool holds, and the smallest KV cache of a rank of any pool. */
  weightsGibPerGpu: number | null;
  kvTokensPerRank: number | null;
  /** Null when the candidate's run config is refused before its pools are known. */
  pools: PoolRow[] | null;
  config: string | null;
  accuracy?: ReplaySummary['accuracy'];
}

/**
 * The rows of a finished search. `meanOutputTokens` is the traffic's mean output tokens per request
 * (its source's mean, estimate.ts `meanLengths`), the same for every candidate: a replay's own
 * mean moves by a percent or so with how many requests its rate sends, which would rank two
 * candidates by sampling noise and break the pruning rule (a higher max rate at no higher cost is
 * a lower cost per output token).
 */
export function candidateRows(
  plan: PlanSpec,
  states: readonly CandidateState[],
  extras: readonly RowExtras[],
  meanOutputTokens: number | null,
): CandidateRow[] {
  const costs = states.map((s) => s.candidate.costPerHour);
  const rates = states.map((s) => (s.status === 'searched' && (s.search?.lo ?? 0) > 0 ? (s.search?.lo as number) : null));
  const kinds = states.map((s) => s.candidate.kind);
  return states.map((state, i): CandidateRow => {
    const c: Candidate = state.candidate;
    const search = state.search;
    const at = state.status === 'searched' ? maxPoint(state) : null;
    const maxRate = at === null ? null : at.rateRps;
    const meanOut = at === null ? null : meanOutputTokens;
    const tokensPerS = maxRate !== null && meanOut !== null ? maxRate * meanOut : null;
    const perMillion = tokensPerS === null ? null : costPerMillionOutputTokens(c.costPerHour, tokensPerS);
    const warnings: string[] = [];
    if (at !== null) {
      const latencyS = (at.summary.metrics.request_latency?.avg ?? 0) / 1000;
      const windowS = at.summary.run.request_count / maxRate!;
      if (latencyS * WINDOW_LATENCIES > windowS) {
        warnings.push(
          `the replay sends requests for ${sig(windowS)} s, less than ${WINDOW_LATENCIES} mean request latencies (${sig(latencyS)} s each): raise rates.duration_s`,
        );
      }
    }
    const target = plan.targetRps;
    const copies = target !== null && maxRate !== null && maxRate > 0 ? Math.ceil(target / maxRate - 1e-9) : null;
    const dominatedBy = state.dominatedBy ?? (state.status === 'searched' ? dominatorByRates(i, costs, rates) : null);
    const onFrontier = rates[i] !== null && dominatorByRates(i, costs, rates, kinds) === null;
    const binding = at === null ? null : bindingCheck(at.checks);
    const above = search !== null && Number.isFinite(search.hi) ? state.tested.find((t) => t.rateRps === search.hi) : undefined;
    return {
      index: c.index,
      id: c.id,
      layout: c.kind,
      hardware: c.hardware,
      knobs: c.knobs,
      gpus: c.gpus,
      price_per_gpu_hour: c.pricePerGpuHour,
      cost_per_hour: sig(c.costPerHour),
      status: state.status === 'searching' ? 'failed' : state.status,
      reason: state.reason,
      max_rate_rps: maxRate,
      rate_lo_rps: search?.lo ?? 0,
      rate_hi_rps: search !== null && Number.isFinite(search.hi) ? search.hi : null,
      replays: state.tested.length,
      dominated_by: dominatedBy === null ? null : states[dominatedBy].candidate.id,
      on_frontier: onFrontier,
      slo: at === null ? {} : sloAtMax(at.checks),
      binding_slo: binding?.name ?? null,
      limited_by: above?.reason ?? null,
      mean_output_tokens: meanOut === null ? null : sig(meanOut),
      output_tokens_per_s: tokensPerS === null ? null : sig(tokensPerS),
      goodput_rps_per_gpu: maxRate === null ? null : sig(maxRate / c.gpus),
      output_tokens_per_s_per_gpu: tokensPerS === null ? null : sig(tokensPerS / c.gpus),
      cost_per_million_output_tokens: perMillion === null ? null : sig(perMillion),
      meets_target: target === null ? null : maxRate !== null && maxRate >= target,
      gpus_for_target: copies === null ? null : copies * c.gpus,
      cost_per_hour_for_target: copies === null ? null : sig(copies * c.costPerHour),
      weights_gib_per_gpu: extras[i].weightsGibPerGpu,
      kv_cache_tokens_per_rank: extras[i].kvTokensPerRank,
      pools: extras[i].pools,
      config: at === null ? null : extras[i].config,
      accuracy: extras[i].accuracy ?? null,
      warnings,
      tested: state.tested.map((t) => ({ rate_rps: t.rateRps, meets: t.meets, id: t.id, reason: t.reason })),
    };
  });
}

/**
 * The candidates in the order they rank (best first): with a target, those that reach it by cost
 * per hour, then the others by the cost per hour of the copies that would reach it; without one,
 * by cost per million output tokens. Candidates with no max rate are left out.
 */
export function rankRows(rows: readonly CandidateRow[], targetRps: number | null): CandidateRow[] {
  const ranked = rows.filter((r) => r.max_rate_rps !== null && r.max_rate_rps > 0);
  const byRate = (a: CandidateRow, b: CandidateRow) => (b.max_rate_rps as number) - (a.max_rate_rps as number) || a.index - b.index;
  if (targetRps === null) {
    return ranked.sort(
      (a, b) => (a.cost_per_million_output_tokens ?? Infinity) - (b.cost_per_million_output_tokens ?? Infinity) || byRate(a, b),
    );
  }
  return ranked.sort(
    (a, b) =>
      Number(b.meets_target) - Number(a.meets_target) ||
      (a.meets_target ? a.cost_per_hour - b.cost_per_hour : (a.cost_per_hour_for_target ?? 0) - (b.cost_per_hour_for_target ?? 0)) ||
      byRate(a, b),
  );
}

/** The best deployment (null when none reaches the target, or no candidate meets the SLOs at any rate). */
export function bestOf(ranked: readonly CandidateRow[], targetRps: number | null): BestDeployment | null {
  const first = ranked[0];
  if (first === undefined || (targetRps !== null && first.meets_target !== true) || first.config === null) return null;
  return {
    id: first.id,
    config: first.config,
    max_rate_rps: first.max_rate_rps as number,
    gpus: first.gpus,
    cost_per_hour: first.cost_per_hour,
    cost_per_million_output_tokens: first.cost_per_million_output_tokens as number,
    accuracy: first.accuracy,
  };
}

/** A candidate on its layout's frontier, as plan.json lists it. */
export interface FrontierEntry {
  id: string;
  gpus: number;
  cost_per_hour: number;
  max_rate_rps: number;
  cost_per_million_output_tokens: number | null;
}

/**
 * Each layout's frontier (plan.json `frontiers`), in `search.workers` order: its candidates on
 * the frontier, cheapest first (each costs more than the one before and sustains more).
 */
export function layoutFrontiers(plan: PlanSpec, rows: readonly CandidateRow[]): Array<{ layout: WorkerKind; candidates: FrontierEntry[] }> {
  return plan.search.workers.map(({ kind }) => ({
    layout: kind,
    candidates: rows
      .filter((r) => r.layout === kind && r.on_frontier)
      .sort((a, b) => a.cost_per_hour - b.cost_per_hour || (a.max_rate_rps as number) - (b.max_rate_rps as number) || a.index - b.index)
      .map((r) => ({
        id: r.id,
        gpus: r.gpus,
        cost_per_hour: r.cost_per_hour,
        max_rate_rps: r.max_rate_rps as number,
        cost_per_million_output_tokens: r.cost_per_million_output_tokens,
      })),
  }));
}

/**
 * A candidate's deployment in words: `aggregated 2 x TP4 (8 GPUs)`, `disaggregated 1P:2D (3 x TP4,
 * 12 GPUs)`, or with pools of different sizes `disaggregated 1P:2D (TP2 prefill, TP4 decode, 10 GPUs)`.
 */
export function deploymentWords(row: CandidateRow): string {
  const k = row.knobs;
  const dp = Number(k.attention_data) > 1 ? ` DP${k.attention_data}` : '';
  const gpus = `${row.gpus} GPU${row.gpus === 1 ? '' : 's'}`;
  if (row.layout === 'aggregated') return `aggregated ${k.replicas} x TP${k.tensor}${dp} (${gpus})`;
  const workers = `${k.prefill_workers}P:${k.decode_workers}D`;
  const sizes =
    k.prefill_tensor === k.decode_tensor
      ? `${Number(k.prefill_workers) + Number(k.decode_workers)} x TP${k.prefill_tensor}${dp}`
      : `TP${k.prefill_tensor}${dp} prefill, TP${k.decode_tensor}${dp} decode`;
  return `disaggregated ${workers} (${sizes}, ${gpus})`;
}
