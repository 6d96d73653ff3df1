/**
 * What a prediction from the catalog says of its own accuracy: its stratum's row of the
 * accuracy table (a GPU's row when it has enough points), or that there is no evidence.
 */
import { describe, expect, it } from 'vitest';
import { accuracyFor, describeAccuracy, MIN_GPU_ROW_POINTS, stratumOf, type AccuracyTable } from '../src/catalog/accuracy.js';
import { parseRunConfig } from '../src/config/load.js';
import { predictionAccuracy } from '../src/replay.js';

const table: AccuracyTable = {
  basis: 'leave-one-model-out',
  rows: [
    { stratum: 'vLLM dense', ttft_mape: 18.2, itl_mape: 9.1, points: 312, deployments: 60 },
    { stratum: 'vLLM dense', hardware: 'h100_sxm', ttft_mape: 15, itl_mape: 7, points: 25, deployments: 5 },
    { stratum: 'SGLang MoE', ttft_mape: 30, itl_mape: 12, points: 200, deployments: 40 },
    { stratum: 'SGLang MoE', hardware: 'b200_sxm', ttft_mape: 4, itl_mape: 2, points: 5, deployments: 1 },
  ],
};

describe('the accuracy block', () => {
  it('names strata by backend and family', () => {
    expect(stratumOf('vllm', false)).toBe('vLLM dense');
    expect(stratumOf('trtllm', true)).toBe('TensorRT-LLM MoE');
  });

  it("quotes a GPU's row when it has at least 20 points, else its stratum's", () => {
    expect(MIN_GPU_ROW_POINTS).toBe(20);
    expect(accuracyFor('vllm', false, 'h100_sxm', table)).toEqual({
      basis: 'leave-one-model-out',
      stratum: 'vLLM dense on h100_sxm',
      ttft_mape: 15,
      itl_mape: 7,
      points: 25,
    });
    expect(accuracyFor('vllm', false, 'b200_sxm', table)).toEqual({
      basis: 'leave-one-model-out',
      stratum: 'vLLM dense',
      ttft_mape: 18.2,
      itl_mape: 9.1,
      points: 312,
    });
    // 5 points on B200 are too few: the stratum's row.
    expect(accuracyFor('sglang', true, 'b200_sxm', table).ttft_mape).toBe(30);
  });

  it('says when a stratum has no evidence', () => {
    const none = accuracyFor('trtllm', true, 'gb200', table);
    expect(none).toEqual({ basis: 'none', stratum: 'TensorRT-LLM MoE', ttft_mape: null, itl_mape: null, points: 0 });
    expect(describeAccuracy(none)).toBe('zero-shot; TensorRT-LLM MoE: no measured evidence, error unknown');
    expect(accuracyFor('vllm', false, 'h100_sxm', null).basis).toBe('none');
    expect(describeAccuracy(accuracyFor('vllm', false, 'b200_sxm', table))).toBe(
      'zero-shot; vLLM dense: typical error TTFT 18 %, ITL 9 % (312 measured points, leave-one-model-out)',
    );
  });

  it('goes with roofline timing only, and says when the config overrides the factors it was measured with', () => {
    const config = (timing?: object) =>
      parseRunConfig(
        { engine: { model: 'Qwen/Qwen3-32B', hardware: 'h100_sxm', workers: { aggregated: timing ? { timing } : {} } } },
        'run.yaml',
      );
    expect(predictionAccuracy(config())?.stratum).toMatch(/^vLLM dense/);
    expect(predictionAccuracy(config({ type: 'fixed' }))).toBeUndefined();
    expect(predictionAccuracy(config({ type: 'roofline', efficiency: { compute: 0.3 } }))?.basis).toMatch(
      /the config overrides efficiency factors/,
    );
    expect(predictionAccuracy(parseRunConfig({}, 'run.yaml'))).toBeUndefined();
  });
});
