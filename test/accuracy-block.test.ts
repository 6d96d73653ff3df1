/**
 * What a prediction from the catalog says of its own accuracy: its stratum's row of the
 * accuracy table (the row of its lengths, or a GPU's row, when it has enough points), or that
 * there is no evidence.
 */
import { describe, expect, it } from 'vitest';
import { accuracyFor, describeAccuracy, MIN_GPU_ROW_POINTS, stratumOf, type AccuracyTable } from '../src/catalog/accuracy.js';
import { parseRunConfig } from '../src/config/load.js';
import { lengthsOf, predictionAccuracy, replay } from '../src/replay.js';
import { formatSummaryTable } from '../src/cli/format-table.js';
import { measuredPointsOn, UNFITTED_EFFICIENCY } from '../src/catalog/efficiency.js';
import { protocolLengths } from '../src/calibrate/catalog-calibration.js';

const table: AccuracyTable = {
  basis: 'leave-one-model-out',
  rows: [
    { stratum: 'vLLM dense', ttft_mape: 18.2, itl_mape: 9.1, points: 312, deployments: 60 },
    { stratum: 'vLLM dense', hardware: 'h100_sxm', ttft_mape: 15, itl_mape: 7, points: 25, deployments: 5 },
    { stratum: 'SGLang MoE', ttft_mape: 30, itl_mape: 12, points: 200, deployments: 40 },
    { stratum: 'SGLang MoE', hardware: 'b200_sxm', ttft_mape: 4, itl_mape: 2, points: 5, deployments: 1 },
    { stratum: 'vLLM dense', lengths: 'fixed', ttft_mape: 95, itl_mape: 12, points: 40, deployments: 9 },
    { stratum: 'vLLM dense', lengths: 'drawn', ttft_mape: 11, itl_mape: 8.5, points: 272, deployments: 51 },
    { stratum: 'SGLang MoE', lengths: 'fixed', ttft_mape: 70, itl_mape: 20, points: 19, deployments: 4 },
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

  it("quotes the row of the run's lengths before a GPU's, when it has at least 20 points", () => {
    expect(accuracyFor('vllm', false, 'h100_sxm', table, false, 'fixed')).toEqual({
      basis: 'leave-one-model-out',
      stratum: 'vLLM dense, fixed lengths',
      ttft_mape: 95,
      itl_mape: 12,
      points: 40,
    });
    expect(accuracyFor('vllm', false, 'b200_sxm', table, false, 'drawn').stratum).toBe('vLLM dense, drawn lengths');
    // Without lengths (a trace), the GPU's row; 19 points of fixed lengths are too few: the stratum's.
    expect(accuracyFor('vllm', false, 'h100_sxm', table).stratum).toBe('vLLM dense on h100_sxm');
    expect(accuracyFor('sglang', true, 'h100_sxm', table, false, 'fixed').stratum).toBe('SGLang MoE');
    // No row of those lengths: the stratum's.
    expect(accuracyFor('sglang', true, 'h100_sxm', table, false, 'drawn').ttft_mape).toBe(30);
    expect(describeAccuracy(accuracyFor('vllm', false, 'h100_sxm', table, false, 'fixed'))).toBe(
      'zero-shot; vLLM dense, fixed lengths: typical error TTFT 95 %, ITL 12 % (40 measured points, leave-one-model-out)',
    );
  });

  it("quotes every point replayed with the run's lengths before the points measured with them", () => {
    const replayed: AccuracyTable = {
      ...table,
      rows: [
        ...table.rows,
        { stratum: 'vLLM dense', lengths: 'fixed', all_points: true, ttft_mape: 286, itl_mape: 15, points: 169, deployments: 49 },
        { stratum: 'vLLM dense', lengths: 'drawn', all_points: true, ttft_mape: 41, itl_mape: 18, points: 169, deployments: 49 },
        { stratum: 'SGLang MoE', lengths: 'drawn', all_points: true, ttft_mape: 50, itl_mape: 30, points: 12, deployments: 3 },
      ],
    };
    expect(accuracyFor('vllm', false, 'h100_sxm', replayed, false, 'fixed')).toEqual({
      basis: 'leave-one-model-out',
      stratum: 'vLLM dense, replayed with fixed lengths',
      ttft_mape: 286,
      itl_mape: 15,
      points: 169,
    });
    expect(accuracyFor('vllm', false, 'b200_sxm', replayed, false, 'drawn').ttft_mape).toBe(41);
    // A trace has no lengths of its own to sweep: the GPU's row, as before.
    expect(accuracyFor('vllm', false, 'h100_sxm', replayed).stratum).toBe('vLLM dense on h100_sxm');
    // 12 points are too few: the stratum's row (no measured row of drawn lengths either).
    expect(accuracyFor('sglang', true, 'h100_sxm', replayed, false, 'drawn').stratum).toBe('SGLang MoE');
    // A row of every point replayed with some lengths never stands for the stratum's own row.
    expect(
      accuracyFor('vllm', false, 'b200_sxm', { ...replayed, rows: replayed.rows.filter((r) => r.lengths !== undefined) }),
    ).toMatchObject({
      basis: 'none',
    });
  });

  it("reads a run's lengths from its synthetic source, and a measured point's from its load generator", () => {
    const run = (source: object) =>
      parseRunConfig({ engine: { model: 'Qwen/Qwen3-32B', hardware: 'h100_sxm' }, traffic: { source } }, 'run.yaml');
    expect(lengthsOf(run({ type: 'synthetic', input_tokens: 1024, output_tokens: 128 }))).toBe('fixed');
    expect(lengthsOf(run({ type: 'synthetic', input_tokens: 1024, output_tokens: 128, dataset_entries: 100 }))).toBe('fixed');
    expect(lengthsOf(run({ type: 'synthetic', input_tokens: 1024, output_tokens: 128, random_range_ratio: 0.8 }))).toBe('drawn');
    expect(lengthsOf(run({ type: 'synthetic', input_tokens: 1024, output_tokens: 128, output_tokens_stddev: 16 }))).toBe('drawn');
    expect(lengthsOf(run({ type: 'synthetic', input_tokens: 1024, output_tokens: 128, input_tokens_stddev: 10 }))).toBe('drawn');
    expect(predictionAccuracy(run({ type: 'synthetic', input_tokens: 1024, output_tokens: 128 }))?.stratum).toMatch(/^vLLM dense/);
    // InferenceX's bench_serving drew in [0.8 L, L]; the gap-analysis campaign's AIPerf sent fixed lengths.
    expect(protocolLengths({ rangeRatio: 0.8 })).toBe('drawn');
    expect(protocolLengths({ rangeRatio: 1 })).toBe('fixed');
    expect(protocolLengths({ rangeRatio: 1, outputSpreadTokens: 16 })).toBe('drawn');
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
    // Nothing named: the placeholder pass times, which say they predict nothing.
    expect(predictionAccuracy(parseRunConfig({}, 'run.yaml'))).toEqual({
      basis: 'placeholder',
      stratum: 'placeholder pass times (fixed 10 ms with prefill work, 2 ms otherwise): no model is named and no GPU is named',
      ttft_mape: null,
      itl_mape: null,
      points: 0,
    });
  });

  it('says when the GPU had no measured point under the backend', () => {
    const table = {
      default: { ...UNFITTED_EFFICIENCY },
      entries: [
        { hardware: 'h100_sxm', backend: 'vllm', ...UNFITTED_EFFICIENCY, fit: { points: 72 } },
        { hardware: 'h100_sxm', backend: 'vllm', version: '0.18', ...UNFITTED_EFFICIENCY, fit: { points: 40 } },
        { hardware: 'l40s', backend: 'vllm', ...UNFITTED_EFFICIENCY, fit: { points: 0, note: 'not measured' } },
        { hardware: 'b200_sxm', backend: 'vllm', version: '0.19', ...UNFITTED_EFFICIENCY, fit: { points: 9 } },
      ],
    };
    expect(measuredPointsOn('h100_sxm', 'vllm', table)).toBe(72);
    expect(measuredPointsOn('h100_sxm', 'sglang', table)).toBe(0);
    expect(measuredPointsOn('l40s', 'vllm', table)).toBe(0);
    // A version's entry alone is not the pair's count.
    expect(measuredPointsOn('b200_sxm', 'vllm', table)).toBe(0);
    // The shipped table: vLLM was measured on H100, never on an L40S.
    const run = (hardware: string) =>
      predictionAccuracy(
        parseRunConfig(
          { engine: { model: 'meta-llama/Llama-3.1-70B', hardware, workers: { aggregated: { parallelism: { tensor: 4 } } } } },
          'run.yaml',
        ),
      );
    expect(run('h100_sxm')?.stratum).toBe('vLLM dense, replayed with fixed lengths');
    const l40s = run('l40s');
    expect(l40s?.stratum).toBe('vLLM dense, replayed with fixed lengths; none measured on l40s');
    expect(l40s?.basis).toMatch(/^leave-one-model-out; no point was measured on l40s under vllm/);
    expect(l40s?.ttft_mape).toBe(run('h100_sxm')?.ttft_mape);
  });

  it('says when a run falls back to the placeholder pass times, and why', () => {
    const run = (engine: object) => predictionAccuracy(parseRunConfig({ engine }, 'run.yaml'));
    expect(run({ model: 'acme/unlisted-7b', hardware: 'h100_sxm' })?.stratum).toMatch(/: model acme\/unlisted-7b is not in the catalog$/);
    expect(run({ model: 'Qwen/Qwen3-32B', hardware: 'tpu-v9' })?.stratum).toMatch(/: GPU tpu-v9 is not in the catalog$/);
    // Timing the config gives is the user's own: no block, whatever the catalog holds.
    expect(
      run({ model: 'acme/unlisted-7b', workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 30, decode_ms: 5 } } } }),
    ).toBeUndefined();
    expect(run({ model: 'acme/unlisted-7b', workers: { aggregated: { timing: { type: 'polynomial' } } } })).toBeUndefined();
    // Even of the placeholder's values: written, they are the user's choice.
    expect(
      run({ model: 'acme/unlisted-7b', workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 } } } }),
    ).toBeUndefined();
  });

  it('prints the placeholder below the table, and no error row', () => {
    const summary = replay(parseRunConfig({ engine: { model: 'acme/unlisted-7b' }, traffic: { stop: { requests: 4 } } }, 'run.yaml'), {
      baseDir: '.',
    }).summary;
    const text = formatSummaryTable(summary);
    expect(text).not.toMatch(/Prediction error/);
    expect(text.split('\n').at(-1)).toBe(
      'not a prediction: placeholder pass times (fixed 10 ms with prefill work, 2 ms otherwise): model acme/unlisted-7b is not in the catalog and no GPU is named; name a catalog model and GPU (servesim catalog) or give the timing (docs/config.md)',
    );
    const catalog = replay(
      parseRunConfig({ engine: { model: 'Qwen/Qwen3-32B', hardware: 'h100_sxm' }, traffic: { stop: { requests: 4 } } }, 'run.yaml'),
      { baseDir: '.' },
    ).summary;
    expect(formatSummaryTable(catalog)).toMatch(/Prediction error \(zero-shot, vLLM dense/);
    expect(formatSummaryTable(catalog)).not.toMatch(/not a prediction/);
  });
});
