/**
 * The length spread of measured runs: AIPerf's ISL/OSL stddev read from every place a run states
 * it, turned into the simulated range (uniform, same mean and standard deviation).
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../src/config/load.js';
import { pointConfig, resolveSimLoad, spreadOfRuns } from '../src/calibrate/sim-load.js';
import { loadFromCliCommand, loadFromInputConfig } from '../src/io/read-aiperf-load.js';
import { readMeasuredPoints } from '../src/score/score-inputs.js';
import { replay } from '../src/replay.js';

describe('reading the spread', () => {
  it('takes the stddev of the newest input_config, early AIPerf, GenAI-Perf and the command line', () => {
    const newest = { datasets: [{ name: 'main', prompts: { isl: { mean: 512, stddev: 0 }, osl: { mean: 128, stddev: 12.5 } } }] };
    expect(loadFromInputConfig(newest)).toMatchObject({ isl: 512, osl: 128, islStddev: 0, oslStddev: 12.5 });
    const early = { input: { prompt: { input_tokens: { mean: 1000, stddev: 100 }, output_tokens: { mean: 200, stddev: 0 } } } };
    expect(loadFromInputConfig(early)).toMatchObject({ isl: 1000, islStddev: 100, oslStddev: 0 });
    expect(loadFromInputConfig({ synthetic_input_tokens_mean: 300, synthetic_input_tokens_stddev: 30 })).toMatchObject({
      isl: 300,
      islStddev: 30,
    });
    expect(loadFromCliCommand('aiperf profile --synthetic-input-tokens-stddev 0 --output-tokens-stddev=7')).toMatchObject({
      islStddev: 0,
      oslStddev: 7,
    });
    expect(loadFromInputConfig({ datasets: [{ prompts: { isl: { mean: 512 } } }] }).islStddev).toBeUndefined();
  });

  it('reads stddev 0 from a real run, which the engine fit then simulates with fixed lengths', () => {
    const { points } = readMeasuredPoints(['calibration/aiperf-mlx-qwen3-0.6b-c1']);
    expect(points[0].spread).toEqual({ islStddev: 0, oslStddev: 0 });
    expect(spreadOfRuns(points)?.rangeRatio).toBe(1);
  });
});

describe('simulating the spread', () => {
  it('gives the uniform range of the same mean and standard deviation', () => {
    // Mean 1000, sd 100: the range 1000 -+ sqrt(3) x 100 = [826.795, 1173.205], ratio 0.70473 (to 4 places 0.7047).
    const points = [{ key: { concurrency: 4, isl: 1000, osl: 200 }, spread: { islStddev: 100, oslStddev: 0 } }];
    const spread = spreadOfRuns(points);
    expect(spread?.rangeRatio).toBeCloseTo(0.7047, 4);
    const base = parseRunConfig({}, 'base.yaml');
    const config = pointConfig(base, points[0].key, null, resolveSimLoad({ rangeRatio: spread?.rangeRatio, lengths: 'mean' }));
    // Tops of the ranges whose middles are the means: 2 x 1000 / 1.7047 = 1173.2, 2 x 200 / 1.7047 = 234.6.
    expect(config.traffic.source).toMatchObject({ type: 'synthetic', input_tokens: 1173, output_tokens: 235, random_range_ratio: 0.7047 });
  });

  it('says nothing when a point does not state its spread (the default ratio applies)', () => {
    expect(spreadOfRuns([{ key: { isl: 100 }, spread: { islStddev: 0 } }, { key: { isl: 100 } }])).toBeUndefined();
  });
});

describe("AIPerf's normal spread in the synthetic source", () => {
  const run = (source: Record<string, unknown>, requests = 4000) =>
    replay(
      parseRunConfig(
        {
          engine: { workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 1, decode_ms: 1 } } } },
          traffic: { source: { type: 'synthetic', ...source }, load: { type: 'concurrency', concurrency: 64 }, stop: { requests } },
        },
        'run.yaml',
      ),
      { baseDir: '.', perRequest: true },
    );

  it('draws lengths of the stated mean and standard deviation, within [1, mean + 4 sd], the same for a seed', () => {
    const { requests } = run({ input_tokens: 1000, input_tokens_stddev: 100, output_tokens: 20, output_tokens_stddev: 5, seed: 3 });
    const isl = (requests ?? []).map((r) => r.input_tokens);
    const osl = (requests ?? []).map((r) => r.output_tokens);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
    // 4000 draws: the sample mean is within 4 standard errors (100 / sqrt(4000) = 1.6) of 1000.
    expect(Math.abs(mean(isl) - 1000)).toBeLessThan(4 * 1.6);
    expect(Math.abs(sd(isl) - 100)).toBeLessThan(5);
    expect(Math.abs(mean(osl) - 20)).toBeLessThan(0.5);
    expect(Math.min(...isl)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...isl)).toBeLessThanOrEqual(1400);
    expect(Math.min(...osl)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...osl)).toBeLessThanOrEqual(40);
    const again = run({ input_tokens: 1000, input_tokens_stddev: 100, output_tokens: 20, output_tokens_stddev: 5, seed: 3 });
    expect((again.requests ?? []).map((r) => r.input_tokens)).toEqual(isl);
  });

  it('keeps fixed lengths without a stddev, as AIPerf does by default', () => {
    const { requests } = run({ input_tokens: 300, output_tokens: 7 }, 200);
    expect(new Set((requests ?? []).map((r) => r.input_tokens))).toEqual(new Set([300]));
    expect(new Set((requests ?? []).map((r) => r.output_tokens))).toEqual(new Set([7]));
  });

  it('refuses a uniform range and a normal spread together', () => {
    expect(() =>
      parseRunConfig({ traffic: { source: { type: 'synthetic', random_range_ratio: 0.8, input_tokens_stddev: 10 } } }, 'run.yaml'),
    ).toThrow(
      'run.yaml: traffic.source.input_tokens_stddev: is 10 with random_range_ratio 0.8: draw lengths one way, a uniform range (random_range_ratio) or a normal spread (the stddev keys)',
    );
  });
});
