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

  it('pass time: a panel per kind of pass, log-log where it spans a decade, held-out rows marked apart, nothing cut short', async () => {
    const outcome = await runPassTimeFit(PASS_TIME);
    const spec = fitChartSpec(outcome.report, PASS_FEATURES) as unknown as { hconcat: Panel[] };
    expect(spec.hconcat.map((p) => p.title)).toEqual([
      'prefill tokens: pass_ms, fitted against measured',
      'decode batch: pass_ms, fitted against measured',
    ]);
    const [prefill, decode] = spec.hconcat.map((p) => p.layer[1]);
    // Numeric order, not text order ("1, 16-31, 2-3").
    expect(decode.encoding.color.scale?.domain).toEqual(['1', '2-3', '4-7', '8-15', '16-31', '32-63', '64-127']);
    expect(decode.encoding.color.scale?.scheme).toBe('viridis');
    expect(decode.encoding.color.legend).toMatchObject({ labelLimit: 0, symbolLimit: 0 });
    // Prefill passes span 30 ms to 4 s: log-log. Decode steps span 14 to 62 ms, under a decade: linear,
    // so that every tick is labelled (a log axis over 15-60 labels only 20 and 50).
    const rows = (kind: string) => outcome.report.fit.rows.filter((r) => r.bucket.startsWith(kind)).flatMap((r) => [r.measured, r.fitted]);
    expect(Math.max(...rows('prefill')) / Math.min(...rows('prefill'))).toBeGreaterThan(10);
    expect(Math.max(...rows('decode')) / Math.min(...rows('decode'))).toBeLessThan(10);
    expect(prefill.encoding.x.scale?.type).toBe('log');
    expect(decode.encoding.x.scale?.type).toBeUndefined();
    expect(decode.encoding.y.scale).toEqual(decode.encoding.x.scale);
    // Held-out rows: a shape, a size and an outline of their own, in one legend.
    const shape = decode.encoding.shape as unknown as { field: string; scale: { domain: string[]; range: string[] } };
    const size = decode.encoding.size as unknown as { field: string; scale: { domain: string[]; range: number[] } };
    expect(shape.field).toBe('set');
    expect(shape.scale).toMatchObject({ domain: ['fitted on', 'held out'], range: ['circle', 'diamond'] });
    expect(size.scale.range[1]).toBeGreaterThanOrEqual(2 * size.scale.range[0]);
    expect(JSON.stringify(decode.encoding.stroke)).toContain('held out');
    // Each panel holds only its own kind of rows.
    expect(new Set(decode.data?.values.map((v) => v.kind))).toEqual(new Set(['decode batch']));
    const svg = await fitChartSvg(outcome.report, PASS_FEATURES);
    expect(svg).toContain('64-127');
    expect(svg).not.toContain('…');
  });

  it('response overhead: gaps against the other requests in flight, the term the fit identified, and their distribution', async () => {
    const runs = [1, 2, 4, 8].map((c) => `calibration/aiperf-mlx-qwen3-0.6b-c${c}`);
    const outcome = await runResponseOverheadFit({ aiperf: runs });
    const { coefficients } = outcome.report.fit;
    expect(coefficients.per_output_token_us.status).toBe('not identifiable: fixed at 0');
    expect(coefficients.per_inflight_us.status).toBe('fitted');
    const spec = fitChartSpec(outcome.report, ['output_tokens', 'inflight']) as unknown as { hconcat: Panel[] };
    expect(spec.hconcat.map((p) => p.title)).toEqual([
      'gap_ms against other requests in flight',
      'distribution of gap_ms (red: mean fitted value)',
    ]);
    const [points, means, line] = spec.hconcat[0].layer;
    // x is the in-flight count of each row (0 to 7), spread by less than half a request.
    const drawn = points.data?.values ?? [];
    expect(drawn).toHaveLength(outcome.report.fit.rows.length);
    drawn.forEach((v, i) => {
      expect(v.x).toBe(outcome.report.fit.rows[i].x[1]);
      expect(Math.abs((v.drawnX as number) - (v.x as number))).toBeLessThanOrEqual(0.25);
    });
    expect(means.mark).toMatchObject({ type: 'point', shape: 'diamond' });
    // The fitted line: base + per_inflight x others, from 0 to 7 others.
    const [a, b] = line.data?.values ?? [];
    expect([a.drawnX, b.drawnX]).toEqual([0, 7]);
    expect(a.y).toBeCloseTo(coefficients.base_ms.value, 9);
    expect(((b.y as number) - (a.y as number)) / 7).toBeCloseTo(coefficients.per_inflight_us.value / 1000, 9);
    // The histogram's bars stop short of the plot's top.
    const bars = spec.hconcat[1].layer[0];
    const counts = (bars.data?.values ?? []).map((v) => v.count as number);
    expect(counts.reduce((sum, n) => sum + n, 0)).toBe(outcome.report.fit.rows.length);
    expect((bars.encoding.y.scale as { domainMax: number }).domainMax).toBeGreaterThan(1.05 * Math.max(...counts));
  });

  it('response overhead of one run: no term but the base is identifiable, so only the distribution', async () => {
    const outcome = await runResponseOverheadFit({ aiperf: 'calibration/aiperf-mlx-qwen3-0.6b-c1' });
    const spec = fitChartSpec(outcome.report, ['output_tokens', 'inflight']) as unknown as { hconcat: Panel[] };
    expect(spec.hconcat.map((p) => p.title)).toEqual(['distribution of gap_ms (red: mean fitted value)']);
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
    const spec = fitChartSpec(outcome.report, ['outputs']) as unknown as { hconcat: Panel[]; title: { subtitle: string } };
    expect(spec.hconcat).toHaveLength(1);
    const layers = spec.hconcat[0].layer;
    const line = layers[layers.length - 1];
    // The rows are generated, not measured: the chart says "rows".
    expect(JSON.stringify(spec)).not.toContain('measured rows');
    expect((layers[0].encoding.shape as unknown as { title: string }).title).toBe('rows');
    expect(line.mark.type).toBe('line');
    const [a, b] = line.data?.values ?? [];
    const slopeMsPerOutput = ((b.y as number) - (a.y as number)) / ((b.drawnX as number) - (a.drawnX as number));
    expect(slopeMsPerOutput * 1000).toBeCloseTo(outcome.report.fit.coefficients.per_output_us.value, 6);
  });
});
