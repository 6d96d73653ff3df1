import { describe, expect, it } from 'vitest';
import { runDetokenizationFit, runPassTimeFit, runResponseOverheadFit } from '../src/calibrate/direct-fits.js';
import { fitChartSpec, fitChartSvg, fitJson, splitBucket } from '../src/calibrate/fit-output.js';

interface Layer {
  data?: { values: Array<Record<string, unknown>> };
  mark: { type: string };
  encoding: Record<
    string,
    { field?: string; scale?: { type?: string; domain?: unknown[]; scheme?: string }; legend?: unknown; bin?: unknown }
  >;
}
interface Panel {
  title: string;
  layer: Layer[];
}

const PASS_TIME = {
  input: 'calibration/splitwise-perf-model.csv',
  layout: 'prefill-decode' as const,
  select: [
    { column: 'model', value: 'llama2-70b' },
    { column: 'hardware', value: 'h100-80gb' },
    { column: 'tensor_parallel', value: '4' },
  ],
  holdout: 0.2,
};
const PASS_FEATURES = ['prefill_tokens', 'prefill_pairs', 'decode_requests', 'decode_kv_tokens'];

describe('fit.svg', () => {
  it('splits bucket labels into their kind and their numeric range', () => {
    expect(splitBucket('decode batch 16-31')).toEqual({ kind: 'decode batch', range: '16-31', low: 16 });
    expect(splitBucket('prefill tokens 1024-2047')).toEqual({ kind: 'prefill tokens', range: '1024-2047', low: 1024 });
    expect(splitBucket('outputs 1')).toEqual({ kind: 'outputs', range: '1', low: 1 });
    expect(splitBucket('mixed')).toEqual({ kind: 'mixed', range: 'mixed', low: Infinity });
  });

  it('pass time: one log-log panel per kind of pass, buckets in numeric order on a sequential scale, nothing cut short', async () => {
    const outcome = await runPassTimeFit(PASS_TIME);
    const spec = fitChartSpec(outcome.report, PASS_FEATURES) as unknown as { hconcat: Panel[] };
    expect(spec.hconcat.map((p) => p.title)).toEqual([
      'prefill tokens: pass_ms, fitted against measured',
      'decode batch: pass_ms, fitted against measured',
    ]);
    const decode = spec.hconcat[1].layer[1];
    // Numeric order, not text order ("1, 16-31, 2-3").
    expect(decode.encoding.color.scale?.domain).toEqual(['1', '2-3', '4-7', '8-15', '16-31', '32-63', '64-127']);
    expect(decode.encoding.color.scale?.scheme).toBe('viridis');
    expect(decode.encoding.color.legend).toMatchObject({ labelLimit: 0, symbolLimit: 0 });
    expect(decode.encoding.x.scale?.type).toBe('log');
    expect(decode.encoding.y.scale?.type).toBe('log');
    // Each panel holds only its own kind of rows.
    expect(new Set(decode.data?.values.map((v) => v.kind))).toEqual(new Set(['decode batch']));
    const svg = await fitChartSvg(outcome.report, PASS_FEATURES);
    expect(svg).toContain('64-127');
    expect(svg).not.toContain('…');
  });

  it('response overhead: gaps against output tokens with the fitted line, and their distribution', async () => {
    const outcome = await runResponseOverheadFit({ aiperf: 'calibration/aiperf-mlx-qwen3-0.6b-c1' });
    const spec = fitChartSpec(outcome.report, ['output_tokens']) as unknown as { hconcat: Panel[] };
    expect(spec.hconcat.map((p) => p.title)).toEqual(['gap_ms against output tokens', 'distribution of gap_ms (red: mean fitted value)']);
    const [points, line] = spec.hconcat[0].layer;
    expect(points.encoding.x.field).toBe('x');
    expect(points.data?.values).toHaveLength(outcome.report.fit.rows.length);
    // The run's outputs are 126 and 127 tokens: the line spans them at the fitted base.
    const base = outcome.report.fit.coefficients.base_ms.value;
    expect(line.data?.values.map((v) => v.x)).toEqual([126, 127]);
    for (const v of line.data?.values ?? []) expect(v.y).toBeCloseTo(base, 9);
    expect(spec.hconcat[1].layer[0].encoding.x.bin).toBeTruthy();
  });

  it('writes a mean residual that is rounding noise as 0', async () => {
    // One bucket, intercept only: least squares makes its residuals sum to 0 (3.8e-17 ms before).
    const outcome = await runResponseOverheadFit({ aiperf: 'calibration/aiperf-mlx-qwen3-0.6b-c1' });
    const json = fitJson(outcome.report) as { residuals_by_bucket: Array<{ mean_residual: number; rmse: number }> };
    expect(json.residuals_by_bucket.map((b) => b.mean_residual)).toEqual([0]);
    expect(json.residuals_by_bucket[0].rmse).toBeGreaterThan(0.1);
  });

  it('detokenization: job time against outputs, the two-term fit as a line', async () => {
    const outcome = await runDetokenizationFit({ input: 'calibration/detokenization-jobs.csv', model: 'two-term' });
    const spec = fitChartSpec(outcome.report, ['outputs']) as unknown as { hconcat: Panel[] };
    expect(spec.hconcat).toHaveLength(1);
    const [, line] = spec.hconcat[0].layer;
    expect(line.mark.type).toBe('line');
    const [a, b] = line.data?.values ?? [];
    const slopeMsPerOutput = ((b.y as number) - (a.y as number)) / ((b.x as number) - (a.x as number));
    expect(slopeMsPerOutput * 1000).toBeCloseTo(outcome.report.fit.coefficients.per_output_us.value, 6);
  });
});
