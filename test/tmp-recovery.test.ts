import { it } from 'vitest';
import { fitEngine } from '../src/calibrate/engine-fit.js';
import { pointConfig, resolveSimLoad, type EngineConstants } from '../src/calibrate/sim-load.js';
import { parseRunConfig } from '../src/config/load.js';
import { replay } from '../src/replay.js';
import { parseMetricList } from '../src/score/metric-names.js';
import { metricsOfSummary } from '../src/score/points.js';
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}
it('scratch', () => {
  const truth: EngineConstants = JSON.parse(process.env.TRUTH ?? '{"base_ms":9,"prefill_token_us":30,"prefill_pair_ns":0,"decode_request_us":0,"decode_kv_token_ns":150,"client_delay_ms":40}');
  const base = parseRunConfig({ engine: { workers: { aggregated: { parallelism: { tensor: 4 } } } }, traffic: { source: { type: 'synthetic', input_tokens: 1024, output_tokens: 256 } } }, 'base.yaml');
  const load = resolveSimLoad({ requestsPerSlot: 16 });
  const metrics = parseMetricList(['time_to_first_token.avg', 'inter_token_latency.avg']);
  const noise = rng(23);
  const shapes: Array<[number, number, number]> = JSON.parse(process.env.SHAPES ?? '[[4,1024,256],[8,1024,256],[16,1024,256],[32,1024,256],[64,1024,256]]');
  const train = shapes.map(([concurrency, isl, osl]) => {
    const key = { concurrency, isl, osl };
    const values = metricsOfSummary(replay(pointConfig(base, key, truth, load), { baseDir: '.' }).summary);
    return { key, measured: {
      'time_to_first_token.avg': (values.time_to_first_token.avg as number) * (1 + (noise() - 0.5) * 0.002),
      'inter_token_latency.avg': (values.inter_token_latency.avg as number) * (1 + (noise() - 0.5) * 0.002) } };
  });
  const t0 = Date.now();
  const fit = fitEngine({ base, baseDir: '.', train, metrics, load, fitClient: true, prefillShare: 0.5, maxIterations: Number(process.env.ITER ?? 60) });
  console.log(JSON.stringify({ free: fit.free, constants: fit.constants, trainMape: fit.trainMape, iterations: fit.iterations, replays: fit.replays, ms: Date.now() - t0 }));
  for (const k of fit.free) console.log(k, ((fit.constants as any)[k] / (truth as any)[k] - 1) * 100);
}, 600_000);
