import { roleOf } from '../src/config/roles.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../src/config/load.js';
import { decodeExponentOf, DEFAULT_PREFILL_OVERLAP, loadRankWeights, prefillOverlapOf } from '../src/calibrate/engine-calibration.js';
import { pointConfig, resolveSimLoad } from '../src/calibrate/sim-load.js';
import { freeConstants } from '../src/calibrate/engine-fit.js';
import { DECODE_EXPONENT, defaultDecodeExponent, isMixtureOfExperts } from '../src/calibrate/model-family.js';
import { MIXED_SERIES_ITL_DROP, readSiliconDeployments, saturatedConcurrencies } from '../src/calibrate/silicon-deployments.js';

const SAMPLE = 'data/silicon/aic-silicon-sample.csv';

describe('model families', () => {
  it('tells the mixture-of-experts models of the silicon sample from the dense ones', () => {
    for (const model of [
      'MiniMaxAI/MiniMax-M2.5',
      'deepseek-ai/DeepSeek-R1',
      'nvidia/DeepSeek-V3.1-NVFP4',
      'moonshotai/Kimi-K2.5',
      'Qwen/Qwen3-235B-A22B-FP8',
      'Qwen/Qwen3.5-397B-A17B',
      'openai/gpt-oss-120b',
      'zhipuai/GLM-5',
      'Qwen3-30B-A3B',
    ]) {
      expect(isMixtureOfExperts(model), model).toBe(true);
    }
    for (const model of [
      'meta-llama/Llama-3.1-70B',
      'meta-llama/Llama-3.1-8B-Instruct',
      'nvidia/Llama-3.1-8B-Instruct-FP8',
      'nvidia/Qwen3-32B-NVFP4',
      'Qwen/Qwen3-0.6B',
    ]) {
      expect(isMixtureOfExperts(model), model).toBe(false);
    }
    expect(defaultDecodeExponent('Kimi-K2.5')).toBe(DECODE_EXPONENT.moe);
    expect(defaultDecodeExponent('Llama-3.1-70B')).toBe(DECODE_EXPONENT.dense);
  });

  it('takes the decode exponent from the base config when it sets one, else from the family', () => {
    const base = (model: string, timing?: Record<string, unknown>) =>
      parseRunConfig(
        {
          engine: { model, workers: { aggregated: { parallelism: { tensor: 1 }, ...(timing ? { timing } : {}) } } },
          traffic: { source: { type: 'synthetic', input_tokens: 128, output_tokens: 16 } },
        },
        'base.yaml',
      );
    expect(decodeExponentOf(base('MiniMax-M2.5')).value).toBe(DECODE_EXPONENT.moe);
    expect(decodeExponentOf(base('Llama-3.1-70B')).value).toBe(DECODE_EXPONENT.dense);
    const set = decodeExponentOf(
      base('Llama-3.1-70B', {
        type: 'linear',
        base_ms: 5,
        prefill_token_us: 10,
        prefill_pair_ns: 0,
        decode_request_us: 100,
        decode_kv_token_ns: 0,
        decode_request_exponent: 0.5,
      }),
    );
    expect(set).toEqual({ value: 0.5, source: 'base config' });
  });

  it('takes the prefill overlap from the base config when it sets one, else the default, and keeps it in the simulated points', () => {
    const base = (timing?: Record<string, unknown>) =>
      parseRunConfig(
        {
          engine: { model: 'Llama-3.1-70B', workers: { aggregated: { ...(timing ? { timing } : {}) } } },
          traffic: { source: { type: 'synthetic', input_tokens: 128, output_tokens: 16 } },
        },
        'base.yaml',
      );
    expect(prefillOverlapOf(base())).toEqual({ value: DEFAULT_PREFILL_OVERLAP, source: 'default' });
    expect(prefillOverlapOf(base({ type: 'linear', base_ms: 5, prefill_overlap: 0.75 }))).toEqual({ value: 0.75, source: 'base config' });
    const constants = {
      base_ms: 5,
      prefill_token_us: 20,
      prefill_pair_ns: 0,
      decode_request_us: 100,
      decode_kv_token_ns: 0,
      decode_request_exponent: 0.8,
      prefill_overlap: 0.75,
      client_delay_ms: 0,
    };
    const timing = roleOf(pointConfig(base(), { concurrency: 8 }, constants, resolveSimLoad({})).engine, 'aggregated').timing;
    expect(timing).toMatchObject({ type: 'linear', decode_request_exponent: 0.8, prefill_overlap: 0.75 });
  });

  it('weighs training points by their rank of load, averaging 1', () => {
    const point = (key: Record<string, number | string>) => ({ source: 't', key, metrics: {} });
    expect(loadRankWeights([4, 8, 16].map((concurrency) => point({ concurrency })))).toEqual([0.5, 1, 1.5]);
    // Order of the input does not matter; equal loads share their mean rank.
    expect(loadRankWeights([16, 4, 8].map((concurrency) => point({ concurrency })))).toEqual([1.5, 0.5, 1]);
    expect(loadRankWeights([4, 8, 8, 16].map((concurrency) => point({ concurrency })))).toEqual([0.4, 1, 1, 1.6]);
    expect(loadRankWeights([2, 5].map((request_rate) => point({ request_rate })))).toEqual([2 / 3, 4 / 3]);
    // A point without a load key: every point weighs 1.
    expect(loadRankWeights([point({ concurrency: 4 }), point({ isl: 1024 })])).toEqual([1, 1]);
    expect(loadRankWeights([point({ concurrency: 4 })])).toEqual([1]);
  });

  it('gives weights that average 1, grow with the load, and do not depend on the order of the points', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 512 }), { minLength: 1, maxLength: 12 }), (loads) => {
        const points = loads.map((concurrency) => ({ source: 't', key: { concurrency }, metrics: {} }));
        const w = loadRankWeights(points);
        expect(w.reduce((s, x) => s + x, 0) / w.length).toBeCloseTo(1, 12);
        for (let i = 0; i < loads.length; i++) {
          for (let j = 0; j < loads.length; j++) {
            if (loads[i] < loads[j]) expect(w[i]).toBeLessThan(w[j]);
            if (loads[i] === loads[j]) expect(w[i]).toBe(w[j]);
          }
        }
        const reversed = loadRankWeights([...points].reverse());
        expect(reversed).toEqual([...w].reverse());
      }),
      { numRuns: 300, seed: 11 },
    );
  });

  it('puts the decode slope on the sublinear request term when the exponent is below 1', () => {
    const train = [4, 8, 16].map((concurrency) => ({ key: { concurrency, isl: 1024, osl: 1024 }, measured: {} }));
    expect(freeConstants(train, true, 0.65)).toEqual(['base_ms', 'decode_request_us', 'prefill_token_us', 'client_delay_ms']);
    expect(freeConstants(train, true, 1)).toEqual(['base_ms', 'decode_kv_token_ns', 'prefill_token_us', 'client_delay_ms']);
    const mixed = [...train, { key: { concurrency: 4, isl: 8192, osl: 1024 }, measured: {} }];
    expect(freeConstants(mixed, false, 0.65)).toEqual([
      'base_ms',
      'decode_request_us',
      'decode_kv_token_ns',
      'prefill_token_us',
      'prefill_pair_ns',
    ]);
  });
});

describe('silicon series rules', () => {
  it('leaves out series whose ITL drops from one concurrency to the next (mixed configurations)', () => {
    const deployments = readSiliconDeployments(SAMPLE, 5);
    expect(deployments.length).toBeGreaterThan(300);
    for (const d of deployments) {
      const itl = d.points.map((p) => p.metrics.inter_token_latency.avg as number);
      for (let i = 1; i < itl.length; i++) expect(itl[i]).toBeGreaterThanOrEqual(itl[i - 1] * (1 - MIXED_SERIES_ITL_DROP));
    }
    expect(deployments.some((d) => d.label.includes('DeepSeek-R1 gb200 fp4 1024/1024 tp36'))).toBe(false);
  });

  it('marks a sweep saturated from the first TTFT jump of more than 1.5x the concurrency ratio', () => {
    const point = (concurrency: number, ttft: number) => ({
      source: '',
      key: { concurrency },
      metrics: { time_to_first_token: { avg: ttft } },
    });
    expect(saturatedConcurrencies([point(4, 388), point(8, 663), point(16, 890), point(32, 7101), point(64, 7522)])).toEqual([32, 64]);
    expect(saturatedConcurrencies([point(4, 80), point(8, 87), point(512, 1335), point(256, 563)])).toEqual([]);
    expect(saturatedConcurrencies([point(8, 100), point(32, 590), point(64, 1800)])).toEqual([64]);
  });
});
