/**
 * The plan file (plan-file.ts), its candidates and their run configs (candidates.ts), the SLO
 * verdict of a replay (slo.ts) and the starting estimate (estimate.ts), with the numbers written
 * out by hand.
 */
import { roleOf } from '../src/config/roles.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/errors.js';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { prepareRun } from '../src/replay.js';
import { candidateRunConfig, countCandidates, enumerateCandidates, replicaCounts, requestsAt } from '../src/plan/candidates.js';
import { estimateMaxRps, meanLengths } from '../src/plan/estimate.js';
import { parsePlanFile } from '../src/plan/plan-file.js';
import { planFieldOf } from '../src/plan/run-plan.js';
import { bindingCheck, evaluateSlos } from '../src/plan/slo.js';
import type { PointSummary } from '../src/sweep/point-summary.js';
import { thrownBy } from './helpers/errors.js';

const MINIMAL = {
  model: 'meta-llama/Llama-3.1-70B',
  hardware: { h100_sxm: { price_per_gpu_hour: 2 }, b200_sxm: { price_per_gpu_hour: 4 } },
  traffic: { source: { input_tokens: 1024, output_tokens: 256 } },
  slo: { time_to_first_token: { p90: 2000 }, inter_token_latency: { p90: 50, avg: 30 } },
  search: { tensor: [1, 2, 4, 8], gpu_budget: 8, max_sequences: [64, 256] },
};

function messages(raw: unknown): string[] {
  return thrownBy(() => parsePlanFile(raw, 'plan.yaml'), ConfigError).issues.map((issue) => issue.message);
}

describe('plan file', () => {
  it('fills the defaults and lists the SLOs in file order', () => {
    const plan = parsePlanFile(MINIMAL, 'plans/llama.yaml');
    expect(plan.name).toBe('llama');
    expect(plan.targetRps).toBeNull();
    expect(plan.hardware).toEqual([
      { name: 'h100_sxm', pricePerGpuHour: 2 },
      { name: 'b200_sxm', pricePerGpuHour: 4 },
    ]);
    expect(plan.slos.map((s) => `${s.metric}.${s.stat} ${s.bound} ${s.limit}`)).toEqual([
      'time_to_first_token.p90 max 2000',
      'inter_token_latency.avg max 30',
      'inter_token_latency.p90 max 50',
    ]);
    expect(plan.rates).toEqual({ tolerance: 0.05, durationS: 300, minRequests: 1000, warmupShare: 0.1, seed: 42, startRps: null });
    expect(plan.search.maxBatchedTokens).toEqual([8192]);
    expect(plan.search.attentionData).toEqual([1]);
  });

  it('names the file and the dotted field of every bad field', () => {
    expect(
      messages({
        ...MINIMAL,
        hardware: { h100_sxm: { price_per_gpu_hour: 0 } },
        traffic: { target_rps: 'lots' },
        slo: { inter_token_latency: { p42: 1 } },
        search: { tensor: [2, 2] },
        rates: { tolerance: 2 },
      }),
    ).toEqual([
      'plan.yaml: hardware.h100_sxm.price_per_gpu_hour: must be a positive finite number, got 0',
      'plan.yaml: rates.tolerance: must be a number in (0, 1], got 2',
      'plan.yaml: search.tensor: lists a value twice',
      'plan.yaml: slo.inter_token_latency: must bound at least one of avg, p1, p5, p10, p25, p50, p75, p90, p95, p99',
      'plan.yaml: slo.inter_token_latency.p42: unknown key (allowed: avg, p1, p5, p10, p25, p50, p75, p90, p95, p99)',
      'plan.yaml: traffic.target_rps: must be a number of requests per second from 0.000001 to 10,000,000, or max, got "lots"',
    ]);
    expect(messages({ ...MINIMAL, slo: {} })).toEqual([
      'plan.yaml: slo: must set at least one SLO (time_to_first_token, inter_token_latency, request_latency, output_token_throughput_per_user)',
    ]);
  });

  it('holds every value within the limits of the run configs it makes', () => {
    expect(
      messages({
        ...MINIMAL,
        traffic: { target_rps: 2e7 },
        search: { tensor: [8192], gpu_budget: 100_000, max_sequences: [2 ** 21] },
        rates: { seed: 2 ** 32, min_requests: 2e9, duration_s: 86_401, start_rps: 1e-7 },
      }),
    ).toEqual([
      'plan.yaml: rates.duration_s: must be a positive number of seconds, at most 86,400, got 86401',
      'plan.yaml: rates.min_requests: must be an integer from 1 to 1,000,000,000, got 2000000000',
      'plan.yaml: rates.seed: must be an integer from 0 to 4,294,967,295, got 4294967296',
      'plan.yaml: rates.start_rps: must be a number of requests per second from 0.000001 to 10,000,000, got 1e-7',
      'plan.yaml: search.gpu_budget: must be an integer from 1 to 65,536, got 100000',
      'plan.yaml: search.max_sequences.0: must be an integer from 1 to 1,048,576, got 2097152',
      'plan.yaml: search.tensor.0: must be an integer from 1 to 4,096, got 8192',
      'plan.yaml: traffic.target_rps: must be a number of requests per second from 0.000001 to 10,000,000, or max, got 20000000',
    ]);
  });

  it('refuses engine keys the plan sets, timings other than roofline, and a disaggregated entry without its ratios', () => {
    expect(
      messages({
        ...MINIMAL,
        engine: { model: 'x', workers: { aggregated: { scheduler: { max_sequences: 8 }, timing: { type: 'linear' } } } },
        search: { ...MINIMAL.search, workers: ['aggregated', { disaggregated: { prefill_decode: ['1:3'] } }] },
      }),
    ).toEqual([
      'plan.yaml: engine.model: is set by the plan (model); remove it here',
      'plan.yaml: engine.workers.aggregated.scheduler.max_sequences: is set by the plan (search.max_sequences); remove it here',
      'plan.yaml: engine.workers.aggregated.timing: must be roofline timing (or left out): a plan compares GPUs and parallelism, which only roofline timing predicts, got type "linear"',
      'plan.yaml: search.workers.1.disaggregated.prefill_decode: unknown key (allowed: ratios, prefill_tensor, decode_tensor)',
      'plan.yaml: search.workers.1.disaggregated.ratios: is required (must be a list of prefill:decode ratios, like ["1:1", "1:2"])',
    ]);
  });
});

describe('candidates', () => {
  const plan = parsePlanFile(MINIMAL, 'plan.yaml');

  it('fills a GPU budget with every replica count, and cuts a replica list to it', () => {
    expect(replicaCounts(plan.search, 1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(replicaCounts(plan.search, 4)).toEqual([1, 2]);
    expect(replicaCounts(plan.search, 16)).toEqual([]);
    expect(replicaCounts({ ...plan.search, replicas: [1, 2, 4] }, 4)).toEqual([1, 2]);
    expect(replicaCounts({ ...plan.search, replicas: null, gpuBudget: null }, 4)).toEqual([1]);
  });

  it('lists GPUs in file order, then tensor, replicas, max_batched_tokens and max_sequences', () => {
    const candidates = enumerateCandidates(plan);
    // Per GPU: (8 + 4 + 2 + 1) replica counts over TP 1, 2, 4, 8, times 2 max_sequences values.
    expect(candidates).toHaveLength(2 * 15 * 2);
    expect(candidates.slice(0, 3).map((c) => c.id)).toEqual([
      'h100_sxm-tp1-r1-mbt8192-seq64',
      'h100_sxm-tp1-r1-mbt8192-seq256',
      'h100_sxm-tp1-r2-mbt8192-seq64',
    ]);
    const last = candidates.at(-1)!;
    expect(last.id).toBe('b200_sxm-tp8-r1-mbt8192-seq256');
    expect(last.gpus).toBe(8);
    expect(last.costPerHour).toBe(32);
    expect(candidates.map((c) => c.index)).toEqual(candidates.map((_, i) => i));
  });

  it('law: countCandidates is the number enumerateCandidates lists', () => {
    const list = (max: number) => fc.uniqueArray(fc.integer({ min: 1, max }), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(
        list(8),
        list(4),
        fc.option(list(12), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
        list(3),
        fc.integer({ min: 1, max: 3 }),
        (tensor, attention, replicas, budget, sequences, gpus) => {
          const hardware = Object.fromEntries(
            ['h100_sxm', 'h200_sxm', 'b200_sxm'].slice(0, gpus).map((name) => [name, { price_per_gpu_hour: 1 }]),
          );
          const spec = parsePlanFile(
            {
              ...MINIMAL,
              hardware,
              search: { tensor, attention_data: attention, replicas, gpu_budget: budget, max_sequences: sequences.map((s) => s * 32) },
            },
            'plan.yaml',
          );
          expect(countCandidates(spec)).toBe(enumerateCandidates(spec).length);
        },
      ),
    );
    // By hand: 2 GPUs x (8 + 4 + 2 + 1 replica counts for TP 1, 2, 4, 8 in 8 GPUs) x 2 max_sequences values.
    expect(countCandidates(plan)).toBe(2 * 15 * 2);
  });

  it("names the plan-file field behind a candidate's run-config key", () => {
    const candidate = enumerateCandidates(plan)[0];
    const field = (path: string, rate = 1) => planFieldOf(plan, candidate, path, rate);
    expect(field('engine.workers.aggregated.parallelism.tensor')).toEqual({ field: 'search.tensor', candidate: true });
    expect(field('engine.workers.aggregated.scheduler.max_batched_tokens')).toEqual({
      field: 'search.max_batched_tokens',
      candidate: true,
    });
    expect(field('engine.workers.aggregated.kv_cache.capacity')).toEqual({
      field: 'engine.workers.aggregated.kv_cache.capacity',
      candidate: true,
    });
    expect(field('engine.precision')).toEqual({ field: 'engine.precision', candidate: false });
    expect(field('engine.model')).toEqual({ field: 'model', candidate: false });
    expect(field('engine.hardware')).toEqual({ field: 'hardware.h100_sxm', candidate: true });
    expect(field('traffic.source.input_tokens')).toEqual({ field: 'traffic.source.input_tokens', candidate: false });
    // 1 rps x 300 s = 300 requests, below min_requests (1000): the count is min_requests'; at 10 rps it is duration_s'.
    expect(field('traffic.stop.requests', 1)).toEqual({ field: 'rates.min_requests', candidate: false });
    expect(field('traffic.stop.requests', 10)).toEqual({ field: 'rates.duration_s', candidate: false });
    expect(field('traffic.load.seed')).toEqual({ field: 'rates.seed', candidate: false });
    expect(field('report.warmup_requests')).toEqual({ field: 'rates.warmup_share', candidate: false });
  });

  it('sends max(min_requests, rate x duration) requests, a tenth of them warm-up', () => {
    // 3.3 rps x 300 s = 990 < 1000; 5 rps x 300 s = 1500, warm-up floor(150); a trace of 1200 rows caps it.
    expect(requestsAt(plan.rates, 3.3)).toEqual({ requests: 1000, warmup: 100 });
    expect(requestsAt(plan.rates, 5)).toEqual({ requests: 1500, warmup: 150 });
    expect(requestsAt(plan.rates, 5, 1200)).toEqual({ requests: 1200, warmup: 120 });
  });

  it("builds a candidate's run config: the plan's engine keys, the candidate's, roofline timing and Poisson arrivals", () => {
    const withEngine = parsePlanFile(
      { ...MINIMAL, engine: { precision: 'fp8', workers: { aggregated: { kv_cache: { capacity: { gpu_memory_utilization: 0.85 } } } } } },
      'plan.yaml',
    );
    const candidate = enumerateCandidates(withEngine).find((c) => c.id === 'b200_sxm-tp2-r3-mbt8192-seq256')!;
    const config = loadRunConfigFromObject(candidateRunConfig(withEngine, candidate, 5), 'plan.yaml');
    expect(config.engine.model).toBe('meta-llama/Llama-3.1-70B');
    expect(config.engine.hardware).toBe('b200_sxm');
    expect(config.engine.precision).toBe('fp8');
    const role = roleOf(config.engine, 'aggregated');
    expect(role.parallelism).toEqual({ replicas: 3, tensor: 2, attention_data: 1, expert: 1 });
    expect(role.scheduler.max_sequences).toBe(256);
    expect(role.timing.type).toBe('roofline');
    expect(role.kv_cache.capacity).toEqual({ type: 'auto', gpu_memory_utilization: 0.85 });
    expect(config.traffic.load).toEqual({ type: 'poisson', requests_per_second: 5, seed: 42 });
    expect(config.traffic.stop).toEqual({ requests: 1500 });
    expect(config.report.warmup_requests).toBe(150);
  });
});

function summaryWith(metrics: Record<string, Record<string, number>>, errors = 0): PointSummary {
  return {
    metrics,
    run: { error_request_count: errors, incomplete_request_count: 0 },
  } as unknown as PointSummary;
}

describe('SLO verdict', () => {
  const slos = parsePlanFile(
    { ...MINIMAL, slo: { time_to_first_token: { p90: 2000 }, output_token_throughput_per_user: { p10: 20 } } },
    'plan.yaml',
  ).slos;

  it('an upper bound has margin (limit - value) / limit, a lower bound (value - limit) / limit', () => {
    const verdict = evaluateSlos(slos, summaryWith({ time_to_first_token: { p90: 1500 }, output_token_throughput_per_user: { p10: 21 } }));
    expect(verdict.meets).toBe(true);
    // (2000 - 1500) / 2000 = 0.25; (21 - 20) / 20 = 0.05: the per-user throughput binds.
    expect(verdict.checks.map((c) => [c.name, c.margin])).toEqual([
      ['time_to_first_token.p90', 0.25],
      ['output_token_throughput_per_user.p10', 0.05],
    ]);
    expect(bindingCheck(verdict.checks)?.name).toBe('output_token_throughput_per_user.p10');
  });

  it('fails on the first bound broken, on a missing value, and on any rejected request', () => {
    const slow = evaluateSlos(slos, summaryWith({ time_to_first_token: { p90: 2500 }, output_token_throughput_per_user: { p10: 19 } }));
    expect(slow.meets).toBe(false);
    expect(slow.reason).toBe('time_to_first_token.p90 2500 > 2000');
    // A value just past its limit keeps the digits that tell the two apart.
    expect(
      evaluateSlos(slos, summaryWith({ time_to_first_token: { p90: 2000.4 }, output_token_throughput_per_user: { p10: 30 } })).reason,
    ).toBe('time_to_first_token.p90 2000.4 > 2000');
    expect(evaluateSlos(slos, summaryWith({ time_to_first_token: { p90: 10 } })).reason).toBe(
      'output_token_throughput_per_user.p10: no value',
    );
    const rejected = evaluateSlos(
      slos,
      summaryWith({ time_to_first_token: { p90: 10 }, output_token_throughput_per_user: { p10: 50 } }, 2),
    );
    expect(rejected).toMatchObject({ meets: false, reason: '2 requests were rejected or left unfinished' });
  });
});

describe('starting estimate', () => {
  it('is the best batch rate within the ITL bound: B / (OSL x pass time), times the ranks and 0.8', () => {
    const config = loadRunConfigFromObject(
      {
        engine: {
          workers: {
            aggregated: {
              parallelism: { replicas: 2 },
              scheduler: { max_sequences: 8 },
              timing: { type: 'linear', base_ms: 10, decode_request_us: 1000 },
            },
          },
        },
        traffic: {
          source: { input_tokens: 100, output_tokens: 100 },
          load: { type: 'poisson', requests_per_second: 1 },
          stop: { requests: 10 },
        },
      },
      'x',
    );
    const { run } = prepareRun(config, { baseDir: '.' });
    expect(meanLengths(run)).toEqual({ inputTokens: 100, outputTokens: 100 });
    // A pass with B decoding requests takes 10 + B ms. ITL p90 <= 15 ms allows B <= 5:
    // 5 / (100 x 15 ms) = 1/300 per ms = 3.333 rps per rank; x 2 replicas x 0.8 = 5.333 rps.
    const slos = parsePlanFile({ ...MINIMAL, slo: { time_to_first_token: { p90: 1e6 }, inter_token_latency: { p90: 15 } } }, 'p').slos;
    expect(estimateMaxRps(run, slos)).toBeCloseTo((5 / (100 * 15)) * 1000 * 2 * 0.8, 9);
    // Without the ITL bound, max_sequences 8: 8 / (100 x 18 ms) x 1000 x 2 x 0.8 = 7.111 rps.
    const loose = parsePlanFile({ ...MINIMAL, slo: { time_to_first_token: { p90: 1e6 } } }, 'p').slos;
    expect(estimateMaxRps(run, loose)).toBeCloseTo((8 / (100 * 18)) * 1000 * 2 * 0.8, 9);
  });
});
