/**
 * The accuracy bench's fit of a disaggregated deployment on its lowest load points
 * (bench/disagg-fit-task.ts): the pass-time scaling by hand, and a deployment generated at known
 * parameters recovered from its three lowest points.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import disaggFitTask, {
  fittedPointConfig,
  replayMetrics,
  resolveDisaggPoint,
  runMetrics,
  scaledFactors,
  swappedRun,
} from '../bench/disagg-fit-task.js';
import type { MeasuredPoint } from '../src/calibrate/catalog-calibration.js';
import { resolveSimLoad } from '../src/calibrate/sim-load.js';
import { readSiliconDeployments } from '../src/calibrate/silicon-deployments.js';
import type { EfficiencyFactors } from '../src/catalog/efficiency.js';

/**
 * Factors of an H100 under vLLM, written here rather than read from data/efficiency.yaml, so that
 * refitting the shipped table does not move the deployment these tests generate.
 */
const FACTORS: EfficiencyFactors = {
  compute: 0.6809,
  memory: 0.8758,
  attention: 0.3304,
  fp8_compute: 0.9442,
  fp4_compute: 0.6623,
  link: 0.3365,
  collective_us: 13.09,
  pass_overhead_ms: 0.3541,
  per_request_us: 12.4,
  per_layer_us: 51.53,
  layer_floor_us: 44.85,
  moe: 0.6898,
  frontend_ms: 34.92,
  frontend_us_per_token: 1.028,
  frontend_us_per_inflight: 58.33,
};

describe('disaggregated fit: pass-time scaling', () => {
  it('divides the shares by the scale (at most 1) and multiplies the host costs', () => {
    const twice = scaledFactors(FACTORS, 2);
    for (const name of ['compute', 'memory', 'attention', 'link', 'moe'] as const) expect(twice[name]).toBe(FACTORS[name] / 2);
    for (const name of ['collective_us', 'pass_overhead_ms', 'per_request_us', 'per_layer_us', 'layer_floor_us'] as const)
      expect(twice[name]).toBe(FACTORS[name] * 2);
    // Factors the scale does not touch.
    expect(twice.fp8_compute).toBe(FACTORS.fp8_compute);
    expect(twice.frontend_ms).toBe(FACTORS.frontend_ms);
    // A share cannot pass 1: at a scale of 1/10 every share is capped.
    const fast = scaledFactors(FACTORS, 0.1);
    for (const name of ['compute', 'memory', 'attention', 'link', 'moe'] as const) expect(fast[name]).toBe(Math.min(1, FACTORS[name] * 10));
    expect(fast.compute).toBe(1);
  });
});

/** One disaggregated deployment of Llama-3.1-8B on H100 (one TP 1 prefill and one TP 1 decode worker), ISL 512 / OSL 32. */
function deploymentPoints(concurrencies: number[]): MeasuredPoint[] {
  const pool = '1,1,1,1,1,1,1';
  const header =
    'id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,' +
    'batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,' +
    ['prefill', 'decode']
      .map((r) =>
        ['batch_size', 'num_workers', 'tp_size', 'pp_size', 'attention_dp_size', 'moe_tp_size', 'moe_ep_size']
          .map((c) => `${r}_${c}`)
          .join(','),
      )
      .join(',') +
    ',silicon_ttft_ms,silicon_tpot_ms';
  const rows = concurrencies.map(
    (c) =>
      `r${c},"db-dump/2026-04-27; config_id=1; silicon_concurrency=${c}; measured=2026-04-18T00:00:00.000Z",vllm,0.18.0,meta-llama/Llama-3.1-8B,h100_sxm,bf16,disagg,512,32,,,,,,,,,${pool},${pool},100,10`,
  );
  const file = join(mkdtempSync(join(tmpdir(), 'disagg-fit-')), 'sample.csv');
  writeFileSync(file, `${[header, ...rows].join('\n')}\n`);
  const [d] = readSiliconDeployments(file, 1, { mode: 'disagg' });
  return d.points.map((p, i) => ({
    label: d.label,
    model: d.modelPath,
    hardware: d.system,
    backend: d.backend,
    family: '0.18',
    deployment: d,
    concurrency: Number(p.key.concurrency),
    measuredOn: d.info[i].measured,
    warmedUp: d.info[i].warmedUp,
    measured: { ttftMs: 0, itlMs: 0 },
    setup: { tp: d.tp, attentionDp: d.attentionDp, expert: d.expert, launch: {}, apart: null },
  }));
}

describe('disaggregated fit: recovery', () => {
  it('fits a deployment generated at known parameters on its three lowest points and predicts the others', () => {
    const load = resolveSimLoad({});
    // "Measured": replays with prefill passes 1.6 x, the decode pool's fixed costs 0.8 x and its
    // per-batch costs 1.4 x the zero-shot ones, and a 60 ms frontend.
    const truth = [1.6, 0.8, 1.4, 60];
    // Training points with queueing in them (4 to 24 clients): below that, the frontend delay and
    // the prefill scale both only add a constant to TTFT, and the fit cannot tell them apart.
    const points = deploymentPoints([4, 12, 24, 48, 64]).map((p) => ({
      ...p,
      measured: replayMetrics(fittedPointConfig(p, FACTORS, load, truth)),
    }));
    const zeroShot = points.map((p) => replayMetrics(fittedPointConfig(p, FACTORS, load, [1, 1, 1, FACTORS.frontend_ms])));
    // The zero-shot replay is far off, so the test cannot pass without a fit.
    expect(Math.abs(zeroShot[4].ttftMs / points[4].measured.ttftMs - 1)).toBeGreaterThan(0.1);
    const fit = disaggFitTask({ points, train: 3, factors: FACTORS, load });
    // The held-out points (48 and 64 clients) within 3 %.
    for (const i of [3, 4]) {
      expect(Math.abs(fit.predicted[i].ttftMs / points[i].measured.ttftMs - 1)).toBeLessThan(0.03);
      expect(Math.abs(fit.predicted[i].itlMs / points[i].measured.itlMs - 1)).toBeLessThan(0.03);
    }
  });
});

describe('disaggregated fit: a point resolved once', () => {
  it('gives the metrics a fresh resolution gives, at parameters far from where it was resolved', () => {
    const load = resolveSimLoad({});
    const points = deploymentPoints([4, 32]);
    const vectors = [
      [1, 1, 1, FACTORS.frontend_ms],
      [1.6, 0.8, 1.4, 60],
      [0.3, 4.5, 0.25, 0.5],
      [4.9, 0.21, 3.3, 900],
    ];
    for (const p of points) {
      const resolved = resolveDisaggPoint(p, FACTORS, load);
      for (const x of vectors) {
        const swapped = runMetrics(swappedRun(resolved, FACTORS, x));
        const fresh = replayMetrics(fittedPointConfig(p, FACTORS, load, x));
        expect(swapped, `C=${p.concurrency} x=${x.join(',')}`).toEqual(fresh);
      }
    }
  });
});
