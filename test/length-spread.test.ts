/**
 * The length spread of measured runs: AIPerf's ISL/OSL stddev read from every place a run states
 * it, turned into the simulated range (uniform, same mean and standard deviation).
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../src/config/load.js';
import { pointConfig, resolveSimLoad, spreadOfRuns } from '../src/calibrate/sim-load.js';
import { loadFromCliCommand, loadFromInputConfig } from '../src/io/read-aiperf-load.js';
import { readMeasuredPoints } from '../src/score/score-inputs.js';

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
