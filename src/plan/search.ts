/**
 * The search over a plan's candidates, in rounds: each candidate still searching proposes its
 * next rate (rate-search.ts), the round's replays run together, each candidate records whether
 * its replay met the SLOs, and candidates that are dominated for certain stop (dominance.ts).
 *
 * Rounds make the search deterministic: every decision after round k depends only on the replays
 * of rounds 0..k, never on which replay finished first, so the same plan tests the same rates and
 * writes the same files whatever the number of pool threads, and a resumed search retraces the
 * same path (its replays come from the log instead of the pool).
 */
import type { Candidate } from './candidates.js';
import { dominatorOf } from './dominance.js';
import type { Slo } from './plan-file.js';
import { type RateSearch } from './rate-search.js';
import { evaluateSlos, type SloCheck } from './slo.js';
import type { PointSummary } from '../sweep/point-summary.js';

export type CandidateStatus = 'searching' | 'searched' | 'pruned' | 'does_not_fit' | 'no_rate' | 'failed';

export interface TestedPoint {
  rateRps: number;
  /** The replay's id (its effective config's hash, as a sweep point's). */
  id: string;
  meets: boolean;
  reason: string | null;
  checks: SloCheck[];
  summary: PointSummary;
}

export interface CandidateState {
  candidate: Candidate;
  status: CandidateStatus;
  /** Why the candidate does not fit, failed, or met the SLOs at no rate. */
  reason: string | null;
  /** Null for a candidate that does not fit. */
  search: RateSearch | null;
  tested: TestedPoint[];
  /** Index of the candidate that dominates this one (pruned, or found dominated after the search). */
  dominatedBy: number | null;
}

/** What a round's replay came to: a summary, or the reason it failed. */
export type RoundOutcome = { status: 'ok'; summary: PointSummary } | { status: 'failed'; error: string };

export interface RoundJob {
  state: CandidateState;
  rateRps: number;
  id: string;
}

export interface SearchHooks {
  /** The replay of a candidate at a rate: its id (the caller keeps the config that goes with it). */
  jobId(candidate: Candidate, rateRps: number): string;
  /** Runs a round's replays; the outcome of each id, or null when the search was stopped. */
  runRound(jobs: readonly RoundJob[]): Promise<Map<string, RoundOutcome> | null>;
  /** After each round. */
  onRound?(round: number, states: readonly CandidateState[], replays: number): void;
}

/** Marks a candidate whose search has no next rate as searched (a rate met the SLOs) or no_rate. */
function finish(state: CandidateState): void {
  const search = state.search as RateSearch;
  if (search.lo > 0) {
    state.status = 'searched';
    return;
  }
  state.status = 'no_rate';
  const lowest = Math.min(...search.tested.map((t) => t.rateRps));
  const last = state.tested.find((t) => t.rateRps === lowest);
  state.reason = `no tested rate meets the SLOs, down to ${lowest} rps${last?.reason ? ` (${last.reason})` : ''}`;
}

/** Runs the search to its end; returns false when it was stopped first. */
export async function searchCandidates(states: CandidateState[], slos: readonly Slo[], hooks: SearchHooks): Promise<boolean> {
  for (let round = 0; ; round++) {
    const jobs: RoundJob[] = [];
    for (const state of states) {
      if (state.status !== 'searching') continue;
      const rateRps = (state.search as RateSearch).next();
      if (rateRps === null) finish(state);
      else jobs.push({ state, rateRps, id: hooks.jobId(state.candidate, rateRps) });
    }
    if (jobs.length === 0) return true;
    const outcomes = await hooks.runRound(jobs);
    if (outcomes === null) return false;
    for (const job of jobs) {
      const outcome = outcomes.get(job.id);
      const { state } = job;
      if (outcome === undefined || outcome.status === 'failed') {
        state.status = 'failed';
        state.reason = `replay at ${job.rateRps} rps failed: ${outcome === undefined ? 'no result' : outcome.error}`;
        continue;
      }
      const verdict = evaluateSlos(slos, outcome.summary);
      (state.search as RateSearch).record(job.rateRps, verdict.meets);
      state.tested.push({
        rateRps: job.rateRps,
        id: job.id,
        meets: verdict.meets,
        reason: verdict.reason,
        checks: verdict.checks,
        summary: outcome.summary,
      });
    }
    for (const state of states) if (state.status === 'searching' && (state.search as RateSearch).done) finish(state);
    const bounds = states.map((s) => ({
      costPerHour: s.candidate.costPerHour,
      group: s.candidate.kind,
      lo: s.search?.lo ?? 0,
      hi: s.search?.hi ?? Infinity,
    }));
    for (let i = 0; i < states.length; i++) {
      if (states[i].status !== 'searching') continue;
      const by = dominatorOf(i, bounds);
      if (by !== null) {
        states[i].status = 'pruned';
        states[i].dominatedBy = by;
      }
    }
    hooks.onRound?.(round, states, jobs.length);
  }
}
