/**
 * A deployment's cost, worked out by hand: its GPUs at a price per GPU-hour, per hour and per
 * million output tokens. The planner ranks candidates with the same arithmetic; a replay reports
 * it at the catalog's list price of its GPU or at --price-per-gpu-hour, and says when it knows no
 * price.
 */
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import { costPerHour, costPerMillionOutputTokens, costSummary } from '../src/config/cost.js';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { formatSummaryTable } from '../src/cli/format-table.js';
import { replay } from '../src/replay.js';
import { thrownBy } from './helpers/errors.js';

describe('cost arithmetic', () => {
  it('prices GPUs per hour and output tokens per million', () => {
    // 2 GPUs at 3.00 = 6.00 an hour. 500 output tokens/s = 1,800,000 an hour: 6.00 / 1.8 = 3.3333... per million.
    expect(costPerHour(2, 3)).toBe(6);
    expect(costPerMillionOutputTokens(6, 500)).toBeCloseTo(3.333333333, 9);
    // 8 GPUs at 6.69 = 53.52 an hour; 10,000 tokens/s = 36 million an hour: 53.52 / 36 = 1.48666...
    expect(costPerHour(8, 6.69)).toBeCloseTo(53.52, 12);
    expect(costPerMillionOutputTokens(53.52, 10_000)).toBeCloseTo(1.486666667, 9);
    expect(costPerMillionOutputTokens(6, 0)).toBeNull();
  });

  it('rounds the summary block to 6 significant digits', () => {
    expect(costSummary({ per_gpu_hour: 3, source: 'test' }, 2, 500)).toEqual({
      price_per_gpu_hour: 3,
      price_source: 'test',
      gpus: 2,
      cost_per_hour: 6,
      output_tokens_per_s: 500,
      cost_per_million_output_tokens: 3.33333,
    });
  });
});

describe("a replay's cost", () => {
  // Two H100 SXM (tensor parallel 2); the catalog's list price is 3.99 per GPU-hour.
  const config = loadRunConfigFromObject(
    {
      engine: {
        model: 'Qwen/Qwen3-8B',
        hardware: 'h100_sxm',
        workers: { aggregated: { parallelism: { tensor: 2 }, timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 } } },
      },
      traffic: { source: { input_tokens: 128, output_tokens: 32 }, load: { concurrency: 4 }, stop: { requests: 20 } },
    },
    'cost.yaml',
  );

  it("is worked out at the catalog's list price of the GPU", () => {
    const { summary } = replay(config, { baseDir: '.' });
    const tokensPerS = summary.run.output_token_throughput;
    expect(summary.cost?.price_per_gpu_hour).toBe(3.99);
    expect(summary.cost?.price_source).toMatch(/^catalog h100_sxm, list price of \d{4}-\d{2}-\d{2}$/);
    expect(summary.cost?.cost_per_hour).toBe(7.98);
    expect(summary.cost?.cost_per_million_output_tokens).toBeCloseTo((7.98 * 1e6) / (tokensPerS * 3600), 3);
    const table = formatSummaryTable(summary);
    expect(table).toMatch(/Cost per hour \/ per million output tokens +7\.98 \/ \d/);
    expect(table).toMatch(/Price per GPU-hour \(catalog h100_sxm, list price of \d{4}-\d{2}-\d{2}\) +3\.99/);
  });

  it('takes --price-per-gpu-hour over the catalog, and refuses a price that is not one', () => {
    const { summary } = replay(config, { baseDir: '.', pricePerGpuHour: 2.5 });
    expect(summary.cost).toMatchObject({ price_per_gpu_hour: 2.5, price_source: '--price-per-gpu-hour', cost_per_hour: 5 });
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const err = thrownBy(() => replay(config, { baseDir: '.', pricePerGpuHour: bad }), InputError);
      expect(err.message).toMatch(/^--price-per-gpu-hour: must be a positive number/);
    }
  });

  it('is absent, and the table says why, when no price is known', () => {
    const unpriced = structuredClone(config);
    unpriced.engine.hardware = 'unknown';
    const { summary } = replay(unpriced, { baseDir: '.' });
    expect(summary.cost).toBeUndefined();
    expect(formatSummaryTable(summary)).toMatch(/Cost per hour \/ per million output tokens +no price known \(--price-per-gpu-hour\)/);
  });
});
