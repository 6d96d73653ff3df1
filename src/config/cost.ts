/**
 * What a deployment costs: its GPUs at a price per GPU-hour, per hour and per million output
 * tokens at a throughput. The capacity planner ranks candidates with these (plan/), and a replay
 * or a sweep point reports them in its summary when a price is known (the catalog's list price
 * for the GPU, or one given with --price-per-gpu-hour). Plain arithmetic with no imports: a
 * sweep's pool threads build summaries with it.
 */
import type { CostSummary } from '../core/report-types.js';

/** Where a price comes from and what it is. */
export interface Price {
  per_gpu_hour: number;
  /** `--price-per-gpu-hour`, or the catalog GPU, its list price's source and date. */
  source: string;
}

/** A deployment of `gpus` GPUs for an hour. */
export function costPerHour(gpus: number, pricePerGpuHour: number): number {
  return gpus * pricePerGpuHour;
}

/** A million output tokens at `outputTokensPerS`; null when the deployment emits none. */
export function costPerMillionOutputTokens(costPerHourValue: number, outputTokensPerS: number): number | null {
  return outputTokensPerS > 0 ? (costPerHourValue / (outputTokensPerS * 3600)) * 1e6 : null;
}

/** 6 significant digits: money reads better, and float noise stays out of the files (as in plan.json). */
function significant(value: number): number {
  return Number(value.toPrecision(6));
}

/** The cost block of a replay's summary: `gpus` at `price`, emitting `outputTokensPerS`. */
export function costSummary(price: Price, gpus: number, outputTokensPerS: number): CostSummary {
  const perHour = costPerHour(gpus, price.per_gpu_hour);
  const perMillion = costPerMillionOutputTokens(perHour, outputTokensPerS);
  return {
    price_per_gpu_hour: price.per_gpu_hour,
    price_source: price.source,
    gpus,
    cost_per_hour: significant(perHour),
    output_tokens_per_s: significant(outputTokensPerS),
    cost_per_million_output_tokens: perMillion === null ? null : significant(perMillion),
  };
}
