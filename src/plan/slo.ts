/**
 * Whether a replay meets the plan's SLOs, and by how much (docs/planning.md, "SLOs"). A bound is
 * checked on the statistic of summary.json that it names; a replay in which any request was
 * rejected or left unfinished meets no SLO.
 */
import type { PointSummary } from '../sweep/results.js';
import type { Slo } from './plan-file.js';

export interface SloCheck {
  /** `inter_token_latency.p90`. */
  name: string;
  limit: number;
  bound: 'max' | 'min';
  /** The replay's value (null when the replay has none: no request reached the metric). */
  value: number | null;
  /** (limit - value) / limit for an upper bound, (value - limit) / limit for a lower one: >= 0 when met. */
  margin: number | null;
  met: boolean;
}

export interface Verdict {
  meets: boolean;
  checks: SloCheck[];
  /** Why the replay does not meet the SLOs (the first bound broken), or null. */
  reason: string | null;
}

export function sloName(slo: Pick<Slo, 'metric' | 'stat'>): string {
  return `${slo.metric}.${slo.stat}`;
}

/** Formats a number for messages: 3 significant digits, more for large values. */
export function short(value: number): string {
  return Math.abs(value) >= 1000 ? value.toFixed(0) : String(Number(value.toPrecision(3)));
}

/** A value next to its limit, with the digits it takes to tell them apart (30.04 > 30, not 30 > 30). */
export function againstLimit(value: number, limit: number): string {
  for (let digits = 3; digits <= 8; digits++) {
    const text = Math.abs(value) >= 1000 && digits === 3 ? value.toFixed(0) : String(Number(value.toPrecision(digits)));
    if (Number(text) !== limit) return text;
  }
  return String(value);
}

export function evaluateSlos(slos: readonly Slo[], summary: PointSummary): Verdict {
  const checks: SloCheck[] = slos.map((slo) => {
    const stats = summary.metrics[slo.metric] as Record<string, unknown> | undefined;
    const raw = stats?.[slo.stat];
    const value = typeof raw === 'number' && Number.isFinite(raw) ? raw : null;
    const margin = value === null ? null : slo.bound === 'max' ? (slo.limit - value) / slo.limit : (value - slo.limit) / slo.limit;
    return { name: sloName(slo), limit: slo.limit, bound: slo.bound, value, margin, met: margin !== null && margin >= 0 };
  });
  const lost = summary.run.error_request_count + summary.run.incomplete_request_count;
  if (lost > 0) {
    return { meets: false, checks, reason: `${lost} request${lost === 1 ? ' was' : 's were'} rejected or left unfinished` };
  }
  const broken = checks.find((check) => !check.met);
  if (broken === undefined) return { meets: true, checks, reason: null };
  const reason =
    broken.value === null
      ? `${broken.name}: no value`
      : `${broken.name} ${againstLimit(broken.value, broken.limit)} ${broken.bound === 'max' ? '>' : '<'} ${short(broken.limit)}`;
  return { meets: false, checks, reason };
}

/** The check with the smallest margin: the SLO that limits the rate. */
export function bindingCheck(checks: readonly SloCheck[]): SloCheck | null {
  let binding: SloCheck | null = null;
  for (const check of checks) {
    if (check.margin === null) continue;
    if (binding === null || check.margin < (binding.margin as number)) binding = check;
  }
  return binding;
}
