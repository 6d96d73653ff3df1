/**
 * Disaggregated candidates of a plan (docs/planning.md, "Disaggregated candidates"): the
 * `search.workers` entry and its refusals, the prefill:decode splits it lists (counted by hand),
 * their run configs, the plan-file field behind each of their keys, the starting estimate of two
 * pools, pruning within a layout, and the frontiers and the words that compare the layouts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/errors.js';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { roleOf } from '../src/config/roles.js';
import { prepareRun } from '../src/replay.js';
import { candidateRunConfig, countCandidates, enumerateCandidates } from '../src/plan/candidates.js';
import { dominatorByRates, dominatorOf } from '../src/plan/dominance.js';
import { estimateMaxRps } from '../src/plan/estimate.js';
import { parsePlanFile } from '../src/plan/plan-file.js';
import { frontierTable, whyBest } from '../src/plan/plan-output.js';
import { deploymentWords, layoutFrontiers, type CandidateRow } from '../src/plan/plan-result.js';
import { planFieldOf } from '../src/plan/run-plan.js';
import { thrownBy } from './helpers/errors.js';

const BASE = {
  model: 'Qwen/Qwen3-8B',
  hardware: { h100_sxm: { price_per_gpu_hour: 2 }, b200_sxm: { price_per_gpu_hour: 4 } },
  traffic: { source: { input_tokens: 4096, output_tokens: 64 }, target_rps: 10 },
  slo: { time_to_first_token: { p90: 1000 }, inter_token_latency: { p90: 15 } },
};

/** Both layouts: TP 1 and 2 for prefill, TP 2 for decode, ratios 1:1 and 1:2, 6 GPUs at most. */
const BOTH = {
  ...BASE,
  search: {
    workers: ['aggregated', { disaggregated: { ratios: ['1:1', '1:2'], decode_tensor: [2] } }],
    tensor: [1, 2],
    gpu_budget: 6,
    max_sequences: [64],
  },
};

function messages(raw: unknown): string[] {
  return thrownBy(() => parsePlanFile(raw, 'plan.yaml'), ConfigError).issues.map((issue) => issue.message);
}

describe('search.workers: disaggregated entries', () => {
  it('reads the ratios and the tensor lists of each pool (the search tensor list where the entry has none)', () => {
    const plan = parsePlanFile(BOTH, 'plan.yaml');
    expect(plan.search.workers).toEqual([
      { kind: 'aggregated', field: 'search.workers.0' },
      {
        kind: 'disaggregated',
        field: 'search.workers.1',
        ratios: [
          { prefill: 1, decode: 1 },
          { prefill: 1, decode: 2 },
        ],
        prefillTensor: [1, 2],
        decodeTensor: [2],
        prefillTensorField: 'search.tensor',
        decodeTensorField: 'search.workers.1.disaggregated.decode_tensor',
      },
    ]);
  });

  it('refuses a bad entry at its dotted field', () => {
    expect(messages({ ...BASE, search: { workers: ['disaggregated'] } })).toEqual([
      'plan.yaml: search.workers.0: must list its prefill:decode ratios: {disaggregated: {ratios: ["1:1", "1:2"]}} (prefill workers : decode workers)',
    ]);
    expect(
      messages({
        ...BASE,
        search: {
          workers: [
            { disaggregated: { ratios: ['2:4', '1:0', 'one:two', '1:2', 3], prefill_tensor: [2, 2], pools: 2 } },
            'mixed',
            { aggregated: { tensor: 2 } },
          ],
        },
      }),
    ).toEqual([
      'plan.yaml: search.workers.0.disaggregated.pools: unknown key (allowed: ratios, prefill_tensor, decode_tensor)',
      'plan.yaml: search.workers.0.disaggregated.prefill_tensor: lists a value twice',
      'plan.yaml: search.workers.0.disaggregated.ratios.1: must be a prefill:decode ratio of worker counts, like "1:2" (each from 1 to 1,024), got "1:0"',
      'plan.yaml: search.workers.0.disaggregated.ratios.2: must be a prefill:decode ratio of worker counts, like "1:2" (each from 1 to 1,024), got "one:two"',
      'plan.yaml: search.workers.0.disaggregated.ratios.4: must be a prefill:decode ratio of worker counts, like "1:2" (each from 1 to 1,024), got 3',
      'plan.yaml: search.workers.1: must be aggregated or {disaggregated: {ratios: [...]}}, got "mixed"',
      'plan.yaml: search.workers.2: must be aggregated (aggregated workers take no settings here), got a mapping',
    ]);
    // Ratios that are one another's multiples list the same candidates; a layout listed twice.
    expect(
      messages({
        ...BASE,
        search: { workers: [{ disaggregated: { ratios: ['1:2', '3:3', '2:4'] } }, 'aggregated', { disaggregated: { ratios: ['1:1'] } }] },
      }),
    ).toEqual([
      "plan.yaml: search.workers.0.disaggregated.ratios.2: 2:4 is 1:2 again (a ratio's multiples are candidates already, up to search.gpu_budget or search.replicas)",
      'plan.yaml: search.workers: lists disaggregated twice',
    ]);
    expect(messages({ ...BASE, search: { workers: [{ disaggregated: {} }] } })).toEqual([
      'plan.yaml: search.workers.0.disaggregated.ratios: is required (must be a list of prefill:decode ratios, like ["1:1", "1:2"])',
    ]);
  });

  it("refuses the pools' keys the plan sets, non-roofline timing, and pool blocks or a transfer no candidate reads", () => {
    expect(
      messages({
        ...BASE,
        engine: {
          workers: { prefill: { parallelism: { tensor: 2 } }, decode: { timing: { type: 'fixed' }, scheduler: { max_sequences: 8 } } },
          kv_transfer: { latency_ms: 1 },
        },
        search: { workers: ['aggregated'] },
      }),
    ).toEqual([
      'plan.yaml: engine.workers.prefill.parallelism.tensor: is set by the plan (search.workers (disaggregated prefill_tensor) or search.tensor); remove it here',
      'plan.yaml: engine.workers.decode.scheduler.max_sequences: is set by the plan (search.max_sequences); remove it here',
      'plan.yaml: engine.workers.decode.timing: must be roofline timing (or left out): a plan compares GPUs and parallelism, which only roofline timing predicts, got type "fixed"',
      'plan.yaml: engine.workers.prefill: applies to disaggregated candidates, and search.workers lists none',
      'plan.yaml: engine.workers.decode: applies to disaggregated candidates, and search.workers lists none',
      'plan.yaml: engine.kv_transfer: applies to disaggregated candidates, and search.workers lists none',
    ]);
  });
});

describe('disaggregated candidates', () => {
  const plan = parsePlanFile(BOTH, 'plan.yaml');

  it('lists every ratio, prefill TP, decode TP and multiple within the GPU budget (counted by hand)', () => {
    // Per GPU. Aggregated: TP1 x 1..6 replicas, TP2 x 1..3: 9.
    // Disaggregated, decode TP 2 (the entry's list), prefill TP 1 or 2 (search.tensor):
    //   1:1 TP1+TP2 = 3 GPUs a copy: 1 or 2 copies (1P:1D, 2P:2D) = 2; 1:1 TP2+TP2 = 4 GPUs: 1;
    //   1:2 TP1+2xTP2 = 5 GPUs: 1; 1:2 TP2+2xTP2 = 6 GPUs: 1. That is 5.
    // Two GPUs: 2 x (9 + 5) = 28.
    const candidates = enumerateCandidates(plan);
    expect(candidates).toHaveLength(28);
    expect(countCandidates(plan)).toBe(28);
    const disagg = candidates.filter((c) => c.kind === 'disaggregated' && c.hardware === 'h100_sxm');
    expect(disagg.map((c) => [c.id, c.gpus, c.costPerHour])).toEqual([
      ['h100_sxm-1p-tp1-1d-tp2-mbt8192-seq64', 3, 6],
      ['h100_sxm-2p-tp1-2d-tp2-mbt8192-seq64', 6, 12],
      ['h100_sxm-1p-tp2-1d-tp2-mbt8192-seq64', 4, 8],
      ['h100_sxm-1p-tp1-2d-tp2-mbt8192-seq64', 5, 10],
      ['h100_sxm-1p-tp2-2d-tp2-mbt8192-seq64', 6, 12],
    ]);
    // GPUs in file order, then the layouts in search.workers order.
    expect(candidates.map((c) => `${c.hardware} ${c.kind}`).filter((v, i, all) => all.indexOf(v) === i)).toEqual([
      'h100_sxm aggregated',
      'h100_sxm disaggregated',
      'b200_sxm aggregated',
      'b200_sxm disaggregated',
    ]);
    expect(disagg[1].knobs).toEqual({
      workers: 'disaggregated',
      ratio: '1:1',
      prefill_workers: 2,
      prefill_tensor: 1,
      decode_workers: 2,
      decode_tensor: 2,
      attention_data: 1,
      max_batched_tokens: 8192,
      max_sequences: 64,
    });
  });

  it('takes copies of a ratio from search.replicas when it is listed, within the budget', () => {
    const listed = parsePlanFile({ ...BOTH, search: { ...BOTH.search, replicas: [1, 3] } }, 'plan.yaml');
    // 1:1 TP1+TP2 (3 GPUs): 1 copy (3 copies = 9 GPUs > 6); the others: 1 copy each. Aggregated TP1: r1, r3; TP2: r1, r3.
    const ids = enumerateCandidates(listed)
      .filter((c) => c.hardware === 'h100_sxm')
      .map((c) => c.id);
    expect(ids).toEqual([
      'h100_sxm-tp1-r1-mbt8192-seq64',
      'h100_sxm-tp1-r3-mbt8192-seq64',
      'h100_sxm-tp2-r1-mbt8192-seq64',
      'h100_sxm-tp2-r3-mbt8192-seq64',
      'h100_sxm-1p-tp1-1d-tp2-mbt8192-seq64',
      'h100_sxm-1p-tp2-1d-tp2-mbt8192-seq64',
      'h100_sxm-1p-tp1-2d-tp2-mbt8192-seq64',
      'h100_sxm-1p-tp2-2d-tp2-mbt8192-seq64',
    ]);
    // Without a budget or a list: one copy of each ratio.
    const one = parsePlanFile({ ...BOTH, search: { workers: [{ disaggregated: { ratios: ['2:3'] } }], tensor: [4] } }, 'plan.yaml');
    expect(enumerateCandidates(one).map((c) => [c.id, c.gpus])).toEqual([
      ['h100_sxm-2p-tp4-3d-tp4-mbt8192-seq256', 20],
      ['b200_sxm-2p-tp4-3d-tp4-mbt8192-seq256', 20],
    ]);
  });

  it('lists the 13 candidates docs/planning.md counts for its entry of 16 GPUs', () => {
    const entry = { disaggregated: { ratios: ['1:1', '1:2', '2:1'], prefill_tensor: [2, 4], decode_tensor: [4, 8] } };
    const spec = parsePlanFile(
      { ...BASE, hardware: { h100_sxm: { price_per_gpu_hour: 2 } }, search: { workers: [entry], tensor: [1, 2, 4, 8], gpu_budget: 16 } },
      'p',
    );
    // GPUs a copy (P x p + D x d) and copies within 16:
    // 1:1: 2+4=6 (2), 2+8=10 (1), 4+4=8 (2), 4+8=12 (1) = 6; 1:2: 2+8=10 (1), 2+16=18 (0), 4+8=12 (1), 4+16=20 (0) = 2;
    // 2:1: 4+4=8 (2), 4+8=12 (1), 8+4=12 (1), 8+8=16 (1) = 5.
    const candidates = enumerateCandidates(spec);
    expect(candidates).toHaveLength(13);
    expect(candidates.slice(0, 2).map((c) => [c.id, c.gpus])).toEqual([
      ['h100_sxm-1p-tp2-1d-tp4-mbt8192-seq256', 6],
      ['h100_sxm-2p-tp2-2d-tp4-mbt8192-seq256', 12],
    ]);
  });

  it('law: countCandidates is the number enumerateCandidates lists', () => {
    const list = (max: number) => fc.uniqueArray(fc.integer({ min: 1, max }), { minLength: 1, maxLength: 3 });
    const ratio = fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 4 })).map(([p, d]) => `${p}:${d}`);
    fc.assert(
      fc.property(
        list(8),
        list(2),
        fc.option(list(6), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
        fc.uniqueArray(ratio, { minLength: 1, maxLength: 3, selector: (r) => r }),
        fc.option(list(8), { nil: undefined }),
        (tensor, attention, replicas, budget, ratios, decodeTensor) => {
          // Ratios that reduce to one another are refused: keep the first of each.
          const seen = new Set<number>();
          const distinct = ratios.filter((r) => {
            const [p, d] = r.split(':').map(Number);
            const key = p / d;
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          });
          const spec = parsePlanFile(
            {
              ...BASE,
              search: {
                workers: ['aggregated', { disaggregated: { ratios: distinct, ...(decodeTensor ? { decode_tensor: decodeTensor } : {}) } }],
                tensor,
                attention_data: attention,
                replicas,
                gpu_budget: budget,
              },
            },
            'plan.yaml',
          );
          expect(countCandidates(spec)).toBe(enumerateCandidates(spec).length);
        },
      ),
    );
  });

  it("builds a run config of prefill and decode pools: the plan's pool blocks and transfer, not its aggregated block", () => {
    const withEngine = parsePlanFile(
      {
        ...BOTH,
        engine: {
          precision: 'fp8',
          workers: {
            aggregated: { kv_cache: { capacity: { gpu_memory_utilization: 0.8 } } },
            prefill: { scheduler: { chunked_prefill: false } },
            decode: { kv_cache: { capacity: { gpu_memory_utilization: 0.85 } } },
          },
          kv_transfer: { latency_ms: 2 },
        },
      },
      'plan.yaml',
    );
    const candidates = enumerateCandidates(withEngine);
    const disagg = candidates.find((c) => c.id === 'b200_sxm-2p-tp1-2d-tp2-mbt8192-seq64')!;
    const config = loadRunConfigFromObject(candidateRunConfig(withEngine, disagg, 5), 'plan.yaml');
    expect(config.engine.workers.aggregated).toBeUndefined();
    const prefill = roleOf(config.engine, 'prefill');
    const decode = roleOf(config.engine, 'decode');
    expect(prefill.parallelism).toEqual({ replicas: 2, tensor: 1, attention_data: 1, expert: 1 });
    expect(decode.parallelism).toEqual({ replicas: 2, tensor: 2, attention_data: 1, expert: 1 });
    expect([prefill.scheduler.max_sequences, decode.scheduler.max_sequences]).toEqual([64, 64]);
    expect(prefill.scheduler.chunked_prefill).toBe(false);
    expect([prefill.timing.type, decode.timing.type]).toEqual(['roofline', 'roofline']);
    expect(decode.kv_cache.capacity).toEqual({ type: 'auto', gpu_memory_utilization: 0.85 });
    expect(config.engine.kv_transfer?.latency_ms).toBe(2);
    expect(config.engine.precision).toBe('fp8');
    // 2 x TP1 + 2 x TP2 = 6 GPUs: the replay's deployment counts both pools.
    expect(prepareRun(config, { baseDir: '.' }).deployment.gpus).toBe(6);

    // An aggregated candidate of the same plan gets the aggregated block, and no pool or transfer.
    const aggregated = candidates.find((c) => c.id === 'b200_sxm-tp2-r3-mbt8192-seq64')!;
    const agg = loadRunConfigFromObject(candidateRunConfig(withEngine, aggregated, 5), 'plan.yaml');
    expect(Object.keys(agg.engine.workers)).toEqual(['aggregated']);
    expect(agg.engine.kv_transfer).toBeUndefined();
    expect(roleOf(agg.engine, 'aggregated').kv_cache.capacity).toEqual({ type: 'auto', gpu_memory_utilization: 0.8 });
  });

  it("names the plan-file field behind a disaggregated candidate's keys", () => {
    const candidate = enumerateCandidates(plan).find((c) => c.kind === 'disaggregated')!;
    const field = (path: string) => planFieldOf(plan, candidate, path, 1);
    expect(field('engine.workers.prefill.parallelism.tensor')).toEqual({ field: 'search.tensor', candidate: true });
    expect(field('engine.workers.decode.parallelism.tensor')).toEqual({
      field: 'search.workers.1.disaggregated.decode_tensor',
      candidate: true,
    });
    expect(field('engine.workers.decode.parallelism.replicas')).toEqual({
      field: 'search.workers.1.disaggregated.ratios',
      candidate: true,
    });
    expect(field('engine.workers.prefill.scheduler.max_sequences')).toEqual({ field: 'search.max_sequences', candidate: true });
    expect(field('engine.workers.decode.kv_cache.capacity')).toEqual({ field: 'engine.workers.decode.kv_cache.capacity', candidate: true });
    expect(field('engine.kv_transfer.bandwidth_gb_per_s')).toEqual({ field: 'engine.kv_transfer.bandwidth_gb_per_s', candidate: true });
  });
});

describe('starting estimate of two pools', () => {
  /** Prefill: 2 workers; decode: 1; linear timing 10 ms a pass + prefill_token_us per prompt token + 1 ms per decoding request. */
  function run(prefillTokenUs: number) {
    const timing = { type: 'linear', base_ms: 10, prefill_token_us: prefillTokenUs, decode_request_us: 1000 };
    const pool = (replicas: number) => ({
      parallelism: { replicas },
      scheduler: { max_batched_tokens: 1000, max_sequences: 8 },
      kv_cache: { capacity: { type: 'unlimited' } },
      timing,
    });
    const config = loadRunConfigFromObject(
      {
        engine: { workers: { prefill: pool(2), decode: pool(1) }, kv_transfer: { kv_bytes_per_token: 0, bandwidth_gb_per_s: 100 } },
        traffic: {
          source: { input_tokens: 100, output_tokens: 100 },
          load: { type: 'poisson', requests_per_second: 1 },
          stop: { requests: 10 },
        },
      },
      'x',
    );
    return prepareRun(config, { baseDir: '.' }).run;
  }
  const slos = parsePlanFile({ ...BASE, slo: { time_to_first_token: { p90: 1e6 }, inter_token_latency: { p90: 15 } } }, 'p').slos;

  it('is the lower of the two pools, times 0.8', () => {
    // Decode: a pass of B decoding requests takes 10 + B ms (no prompt tokens: the KV arrives);
    // ITL p90 <= 15 ms allows B = 5: 5 / (100 x 15 ms) per ms = 3.333 rps on its one worker.
    // Prefill at 10 us a token: a pass of min(1000 / 100, 8) = 8 prompts, 10 + 800 x 0.01 = 18 ms:
    // 8 / 18 per ms per worker, 888.9 rps on two. The decode pool binds: 3.333 x 0.8.
    expect(estimateMaxRps(run(10), slos)).toBeCloseTo((5 / (100 * 15)) * 1000 * 0.8, 9);
    // Prefill at 10 ms a token: 8 prompts in 10 + 8,000 ms, 2 x 8 / 8,010 per ms = 1.998 rps: it binds.
    expect(estimateMaxRps(run(10_000), slos)).toBeCloseTo(((2 * 8) / 8010) * 1000 * 0.8, 9);
  });
});

describe('pruning and frontiers by layout', () => {
  it('a candidate of another layout does not prune, and does not take a place on the frontier', () => {
    // B (disaggregated, 8/h, broke the SLOs at 10 rps) against A (aggregated, 6/h, met them at 12 rps): A would prune B were they of one layout.
    const bounds = [
      { costPerHour: 6, lo: 12, hi: Infinity, group: 'aggregated' },
      { costPerHour: 8, lo: 5, hi: 10, group: 'disaggregated' },
    ];
    expect(dominatorOf(1, bounds)).toBeNull();
    expect(
      dominatorOf(
        1,
        bounds.map((b) => ({ ...b, group: 'aggregated' })),
      ),
    ).toBe(0);
    expect(dominatorByRates(1, [6, 8], [12, 9])).toBe(0);
    expect(dominatorByRates(1, [6, 8], [12, 9], ['aggregated', 'disaggregated'])).toBeNull();
  });

  /** Rows as candidateRows writes them, with what the frontier and the comparison read. */
  function row(
    index: number,
    id: string,
    layout: 'aggregated' | 'disaggregated',
    knobs: Record<string, number>,
    extra: Partial<CandidateRow>,
  ): CandidateRow {
    return {
      index,
      id,
      layout,
      knobs: { workers: layout, ...knobs },
      limited_by: null,
      rate_hi_rps: null,
      meets_target: null,
      dominated_by: null,
      slo: {},
      binding_slo: null,
      accuracy: null,
      ...extra,
    } as unknown as CandidateRow;
  }
  const rows = [
    row(
      0,
      'agg-r2',
      'aggregated',
      { replicas: 2, tensor: 2, attention_data: 1 },
      {
        gpus: 4,
        cost_per_hour: 8,
        max_rate_rps: 8.27,
        on_frontier: true,
        meets_target: false,
        gpus_for_target: 8,
        cost_per_hour_for_target: 16,
      },
    ),
    row(
      1,
      'agg-r3',
      'aggregated',
      { replicas: 3, tensor: 2, attention_data: 1 },
      {
        gpus: 6,
        cost_per_hour: 12,
        max_rate_rps: 12.9,
        on_frontier: true,
        meets_target: true,
        limited_by: 'inter_token_latency.p90 15.2 > 15',
        rate_hi_rps: 13.5,
      },
    ),
    row(
      2,
      'pd-3p1d',
      'disaggregated',
      { prefill_workers: 3, prefill_tensor: 1, decode_workers: 1, decode_tensor: 1, attention_data: 1 },
      { gpus: 4, cost_per_hour: 8, max_rate_rps: 14.5, on_frontier: true, meets_target: true, config: 'configs/pd-3p1d.yaml' },
    ),
    row(
      3,
      'pd-1p2d',
      'disaggregated',
      { prefill_workers: 1, prefill_tensor: 2, decode_workers: 2, decode_tensor: 4, attention_data: 1 },
      { gpus: 10, cost_per_hour: 20, max_rate_rps: 14, on_frontier: false, meets_target: true },
    ),
  ];

  it("lists each layout's frontier cheapest first, and sets the two side by side", () => {
    const plan = parsePlanFile(BOTH, 'plan.yaml');
    const frontiers = layoutFrontiers(plan, rows);
    expect(frontiers.map((f) => [f.layout, f.candidates.map((c) => c.id)])).toEqual([
      ['aggregated', ['agg-r2', 'agg-r3']],
      ['disaggregated', ['pd-3p1d']],
    ]);
    expect(frontierTable(frontiers).split('\n')).toEqual([
      'aggregated frontier  GPUs  cost/h  max rps    disaggregated frontier  GPUs  cost/h  max rps',
      'agg-r2                  4    8.00     8.27    pd-3p1d                    4    8.00     14.5',
      'agg-r3                  6   12.00     12.9',
    ]);
    // A plan of one layout has no such table.
    expect(frontierTable(frontiers.slice(0, 1))).toBe('');
  });

  it('says what the other layout would need', () => {
    expect(deploymentWords(rows[2])).toBe('disaggregated 3P:1D (4 x TP1, 4 GPUs)');
    expect(deploymentWords(rows[3])).toBe('disaggregated 1P:2D (TP2 prefill, TP4 decode, 10 GPUs)');
    expect(deploymentWords(rows[1])).toBe('aggregated 3 x TP2 (6 GPUs)');
    const plan = parsePlanFile(BOTH, 'plan.yaml');
    const ranked = [rows[2], rows[1], rows[3], rows[0]];
    const best = {
      id: 'pd-3p1d',
      config: 'configs/pd-3p1d.yaml',
      max_rate_rps: 14.5,
      gpus: 4,
      cost_per_hour: 8,
      cost_per_million_output_tokens: 1.6,
      accuracy: null,
    };
    const lines = whyBest(plan, rows, ranked, best).split('\n');
    // 12 / 8 - 1 = 50 %.
    expect(lines.at(-1)).toBe(
      'Disaggregated 3P:1D (4 x TP1, 4 GPUs) meets the SLOs at 10 rps (up to 14.5) for 8.00/h; aggregated needs agg-r3, 3 x TP2 (6 GPUs), at 12.00/h (+50.0 %), up to 12.9 rps; above it, at 13.5 rps, inter_token_latency.p90 15.2 > 15.',
    );
    // No aggregated candidate reaching the target: the fastest, and the copies of the cheapest that would.
    const short = [
      rows[0],
      { ...rows[1], max_rate_rps: 9.5, meets_target: false, gpus_for_target: 12, cost_per_hour_for_target: 24 } as CandidateRow,
      rows[2],
    ];
    expect(whyBest(plan, short, [rows[2], short[0], short[1]], best).split('\n').at(-1)).toBe(
      'Disaggregated 3P:1D (4 x TP1, 4 GPUs) meets the SLOs at 10 rps (up to 14.5) for 8.00/h; no aggregated candidate reaches 10 rps within the SLOs: the fastest, aggregated 3 x TP2 (6 GPUs), sustains 9.5 rps; above it, at 13.5 rps, inter_token_latency.p90 15.2 > 15 (copies of agg-r2 would need 8 GPUs, 16.00/h).',
    );
  });
});
