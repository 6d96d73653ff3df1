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
import { costPerMillionOutputTokens } from '../config/cost.js';
import type { Candidate, Knob } from './candidates.js';
import { dominatorByRates } from './dominance.js';
import type { PlanSpec } from './plan-file.js';
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
  weights_gib_per_gpu: number | null;
  kv_cache_tokens_per_rank: number | null;
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

export interface RowExtras {
  weightsGibPerGpu: number | null;
  kvTokensPerRank: number | null;
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
    const binding = at === null ? null : bindingCheck(at.checks);
    const above = search !== null && Number.isFinite(search.hi) ? state.tested.find((t) => t.rateRps === search.hi) : undefined;
    return {
      index: c.index,
      id: c.id,
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
