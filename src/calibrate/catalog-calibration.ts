/**
 * Fitting the catalog's efficiency factors on measured deployments (`npm run fit:catalog`, and the
 * zero-shot accuracy benchmark): replay every measured point with the current factors, record its
 * trajectory, fit the factors on the trajectories (`catalog-fit.ts`), and again, a few rounds, so
 * the schedules follow the factors. Points are the closed-loop rows of the silicon sample whose
 * model and GPU are in the catalog.
 */
import { roleOf } from '../config/roles.js';
import { stringify } from 'yaml';
import { deploymentOf } from '../config/deployment.js';
import type { RunConfig } from '../config/types.js';
import { loadCatalog } from '../catalog/load.js';
import type { HardwareEntry } from '../catalog/schema.js';
import { gpusPerWorker, matmulTflops, type Deployment } from '../catalog/deployment.js';
import { parameterBreakdown } from '../catalog/architecture.js';
import { EFFICIENCY_NAMES, versionFamily, type EfficiencyFactors, type EfficiencyTable } from '../catalog/efficiency.js';
import { lengthsKindOf, type LengthsKind } from '../catalog/accuracy.js';
import { BACKENDS } from '../config/types.js';
import { compiledModule, WorkerPool } from '../sweep/worker-pool.js';
import {
  fitByRounds,
  fitFactors,
  logErrors,
  ParameterLayout,
  predictPoint,
  type FactorFit,
  type FitPoint,
  type MeasuredFactors,
} from './catalog-fit.js';
import {
  catalogBaseConfig,
  engineVersionOf,
  measuredCaps,
  readSiliconDeployments,
  type LaunchSettings,
  type SiliconDeployment,
  type SiliconProtocol,
} from './silicon-deployments.js';
import { flagsOf, valueAt, type LinearValue } from './silicon-flags.js';
import { pointConfig, resolveSimLoad, type SimLoadOptions } from './sim-load.js';
import type { Trajectory } from './trajectory.js';
import type { TrajectoryTask } from './trajectory-task.js';

/** One measured point to fit or predict, before its trajectory is recorded. */
export interface MeasuredPoint {
  label: string;
  model: string;
  hardware: string;
  backend: string;
  deployment: SiliconDeployment;
  /** The backend's version family (major.minor) as the row gives it, '' when unknown. */
  family: string;
  /** Clients of the closed loop (the sample's `silicon_concurrency`). */
  concurrency: number;
  /** `measured=` date of the row ('' when the source does not say) and whether a drained warm-up preceded it. */
  measuredOn: string;
  warmedUp: boolean | null;
  measured: { ttftMs: number; itlMs: number };
  /** How the point was launched: the parallelism that ran, the flags set, and why it is reported apart (null: it is not). */
  setup: PointSetup;
}

export interface PointSetup {
  tp: number;
  attentionDp: number;
  expert: number;
  launch: LaunchSettings;
  apart: string | null;
}

/** The InferenceX recipe a point was launched with (data/silicon/inferencex-flags.yaml), if one matches. */
function recipeOf(d: SiliconDeployment, i: number): ReturnType<typeof flagsOf> {
  return flagsOf({
    model: d.modelPath,
    system: d.system,
    backend: d.backend,
    precision: d.precision,
    measured: d.info[i].measured,
    image: d.protocol.image,
    tpSize: d.columns.tpSize,
    moeEpSize: d.columns.moeEpSize,
    attentionDpSize: d.columns.attentionDpSize,
    isl: d.isl,
    osl: d.osl,
    concurrency: Number(d.points[i].key.concurrency),
  });
}

/**
 * Whether a point's launch is known: an aiconfigurator gap-analysis row (launched as
 * aiconfigurator generates deployments, `measuredCaps`) or an InferenceX row whose recipe is in
 * data/silicon/inferencex-flags.yaml. Otherwise its parallelism comes from the sample's columns
 * and its flags are the engine's defaults, guesses that a KV capacity from memory depends on.
 */
export function launchKnown(d: SiliconDeployment, i: number): boolean {
  if (d.protocol.source === 'gap-analysis') return true;
  return d.protocol.source === 'inferencex' && recipeOf(d, i) !== undefined;
}

/**
 * A measured point as it was launched: InferenceX rows take their script's flags and the
 * parallelism that ran (data/silicon/inferencex-flags.yaml); gap-analysis rows aiconfigurator's
 * caps (`measuredCaps`); other rows the engine's defaults. Points run with speculative decoding,
 * or whose row cannot be replayed as it stands, are reported apart with the reason.
 */
export function measuredSetup(d: SiliconDeployment, i: number): PointSetup {
  const point = { isl: d.isl, osl: d.osl, concurrency: Number(d.points[i].key.concurrency) };
  const base = { tp: d.tp, attentionDp: d.attentionDp, expert: d.expert };
  if (d.protocol.source !== 'inferencex') {
    // aiconfigurator's TensorRT-LLM launch turns block reuse off unless asked (`enable_block_reuse:
    // false` in every extra_engine_args template, e.g. 1.0.0rc3 and 1.3.0rc1), so its engines
    // recompute the repeated prompts that vLLM's and SGLang's serve from their prefix caches.
    const reuse = d.protocol.source === 'gap-analysis' && d.backend === 'trtllm' ? { kvCache: { prefix_caching: false } } : {};
    return { ...base, launch: { scheduler: measuredCaps(d, d.info[i].batchSize), ...reuse }, apart: null };
  }
  const row = recipeOf(d, i);
  if (row === undefined) return { ...base, launch: {}, apart: null };
  const f = row.flags;
  const at = (v: LinearValue | undefined) => (v === undefined ? undefined : Math.max(1, Math.round(valueAt(v, point))));
  const prefill = at(f.max_prefill_tokens);
  const budget = at(f.max_batched_tokens);
  const scheduler = {
    ...(budget !== undefined || prefill !== undefined ? { max_batched_tokens: Math.min(budget ?? Infinity, prefill ?? Infinity) } : {}),
    ...(f.max_sequences !== undefined ? { max_sequences: at(f.max_sequences) } : {}),
    ...(f.chunked_prefill !== undefined ? { chunked_prefill: f.chunked_prefill } : {}),
    ...(f.cuda_graph_max_batch !== undefined ? { cuda_graph_max_batch: at(f.cuda_graph_max_batch) } : {}),
    ...(f.cuda_graph_padding !== undefined ? { cuda_graph_padding: f.cuda_graph_padding } : {}),
  };
  const kvCache = {
    ...(f.kv_cache_dtype !== undefined ? { dtype: f.kv_cache_dtype } : {}),
    ...(f.block_size !== undefined ? { block_size: f.block_size } : {}),
    ...(f.memory_fraction !== undefined ? { gpu_memory_utilization: f.memory_fraction } : {}),
  };
  const parallelism =
    row.parallelism === undefined
      ? base
      : { tp: row.parallelism.tensor, attentionDp: row.parallelism.attention_dp, expert: row.parallelism.expert };
  const apart =
    f.unusable !== undefined
      ? `not replayable as measured: ${f.unusable}`
      : f.speculative !== 'none'
        ? `measured with speculative decoding (${f.speculative}), which the replay does not simulate`
        : null;
  return { ...parallelism, launch: { scheduler, kvCache }, apart };
}

/**
 * The prompts AIPerf's requests repeat when it is not told how many to make
 * (`--num-dataset-entries`; `NUM_DATASET_ENTRIES` in ai-dynamo/aiperf
 * `src/aiperf/common/config/config_defaults.py`).
 */
export const AIPERF_DATASET_ENTRIES = 100;

/**
 * The share of its GPUs' datasheet matmul peak above which a closed loop's prompts cannot all
 * have been prefilled: their matmuls alone would run faster than the best FP8 GEMM kernels reach on
 * large matrices (DeepGEMM: "up to 1550 TFLOPS on H800", deepseek-ai/DeepGEMM README.md at
 * 54e2261, 78 % of the 1,979 TFLOP/s peak), while the same GPUs also run every decode step and the
 * attention.
 */
export const PROMPT_REUSE_PEAK_SHARE = 0.8;

/** Why a sweep of the gap-analysis campaign is replayed with repeated prompts (or reported apart). */
export const PROMPT_REUSE_RULE =
  `a point of its sweep needs more than ${PROMPT_REUSE_PEAK_SHARE * 100} % of the datasheet matmul peak for its prompts alone, ` +
  `so the sweep repeated AIPerf's ${AIPERF_DATASET_ENTRIES} prompts`;

/**
 * The share of its GPUs' datasheet matmul peak that a closed-loop point's prompts take if every
 * prompt is prefilled in full: each client sends a request every TTFT + (OSL - 1) x ITL, each
 * prompt (its load generator's mean length) costs 2 FLOPs per active parameter and token (the
 * weights a token multiplies: attention, dense and shared MLPs, its routed experts).
 */
export function prefillPeakShare(
  measured: { clients: number; ttftMs: number; itlMs: number; isl: number; osl: number; rangeRatio: number },
  deployment: Deployment,
  replicas: number,
): number {
  const requestsPerMs = measured.clients / (measured.ttftMs + (measured.osl - 1) * measured.itlMs);
  const promptTokens = (measured.isl * (1 + measured.rangeRatio)) / 2;
  const p = parameterBreakdown(deployment.model);
  const moe = deployment.model.architecture.moe;
  const active = p.attention + p.denseMlp + p.sharedMoe + (moe ? moe.experts_per_token * p.perExpert * p.moeLayers : 0);
  const peakFlopsPerMs = gpusPerWorker(deployment) * replicas * matmulTflops(deployment.hardware, deployment.precision) * 1e9;
  return (requestsPerMs * promptTokens * 2 * active) / peakFlopsPerMs;
}

/** A gap-analysis sweep: one backend version's file of one model on one GPU. */
const sweepOf = (d: SiliconDeployment) => `${d.backend}|${d.version}|${d.system}|${d.series}`;

/**
 * The silicon sample's points whose deployment the catalog can build (model, GPU, and memory for
 * the weights). A sweep of the gap-analysis campaign that repeated its prompts
 * (`PROMPT_REUSE_RULE`) is replayed with AIPerf's dataset of prompts under vLLM and SGLang, whose
 * prefix caches serve them; under TensorRT-LLM, whose launch turned block reuse off, its points
 * are reported apart.
 */
export function catalogPoints(
  csv: string,
  options: { maxOsl?: number; gapEntries?: number; gapOutputSpread?: number; gapOutputTokens?: number } = {},
): { points: MeasuredPoint[]; skipped: { label: string; reason: string }[] } {
  const points: MeasuredPoint[] = [];
  const skipped: { label: string; reason: string }[] = [];
  const reused = new Set<string>();
  for (const d of readSiliconDeployments(csv, 1)) {
    if (options.maxOsl !== undefined && d.osl > options.maxOsl) continue;
    d.points.forEach((p, i) => {
      const setup = measuredSetup(d, i);
      let deployment: Deployment | null;
      let replicas: number;
      try {
        const base = catalogBaseConfig(
          { ...d, tp: setup.tp, attentionDp: setup.attentionDp, expert: setup.expert },
          undefined,
          setup.launch,
        );
        const role = roleOf(base.engine, 'aggregated');
        deployment = deploymentOf(base.engine, role).deployment;
        replicas = role.parallelism.replicas;
        if (deployment === null) throw new Error('not in the catalog');
      } catch (err) {
        skipped.push({
          label: `${d.label} c=${String(p.key.concurrency)}`,
          reason: err instanceof Error ? err.message.split('\n')[0] : String(err),
        });
        return;
      }
      const point = measuredPointOf(d, i, setup);
      const load = { clients: point.concurrency, ...point.measured, isl: d.isl, osl: d.osl, rangeRatio: d.protocol.rangeRatio };
      if (d.protocol.source === 'gap-analysis' && prefillPeakShare(load, deployment, replicas) > PROMPT_REUSE_PEAK_SHARE)
        reused.add(sweepOf(d));
      points.push(point);
    });
  }
  // A point holds its deployment and setup by reference: what follows reaches it.
  for (const { deployment: d, setup } of points) {
    if (reused.has(sweepOf(d)) && d.protocol.datasetEntries === null) {
      if (d.backend === 'trtllm')
        setup.apart ??= `${PROMPT_REUSE_RULE}, which TensorRT-LLM's launch (block reuse off) recomputes: no replay explains it`;
      else d.protocol = { ...d.protocol, datasetEntries: AIPERF_DATASET_ENTRIES };
    }
    // `gapEntries`: the gap-analysis rows replayed with AIPerf's dataset of that many prompts.
    if (options.gapEntries !== undefined && d.protocol.source === 'gap-analysis')
      d.protocol = { ...d.protocol, datasetEntries: options.gapEntries };
    if (options.gapOutputSpread !== undefined && d.protocol.source === 'gap-analysis')
      d.protocol = { ...d.protocol, outputSpread: options.gapOutputSpread };
    if (options.gapOutputTokens !== undefined && d.protocol.source === 'gap-analysis')
      d.protocol = { ...d.protocol, outputSpreadTokens: options.gapOutputTokens };
  }
  return { points, skipped };
}

/** The `i`-th point of a silicon deployment, launched as `setup`. */
export function measuredPointOf(d: SiliconDeployment, i: number, setup: PointSetup): MeasuredPoint {
  const p = d.points[i];
  return {
    label: d.label,
    model: d.modelPath,
    hardware: d.system,
    backend: d.backend,
    family: versionFamily(engineVersionOf(d)),
    deployment: d,
    concurrency: Number(p.key.concurrency),
    measuredOn: d.info[i].measured,
    warmedUp: d.info[i].warmedUp,
    measured: { ttftMs: p.metrics.time_to_first_token.avg as number, itlMs: p.metrics.inter_token_latency.avg as number },
    setup,
  };
}

/**
 * The run config replaying one measured point with given factors, as the point was measured: its
 * clients, its load generator's lengths and request count (`SiliconProtocol`), unless `load`
 * says otherwise (`protocol: false`: the engine's default caps, `load`'s lengths and requests for
 * every point; `launch`: the point's launch and requests per client, `load`'s lengths).
 */
export function measuredPointConfig(point: MeasuredPoint, factors: EfficiencyFactors, load: SimLoadOptions): RunConfig {
  const d = point.deployment;
  const s = point.setup;
  const base = catalogBaseConfig(
    { ...d, tp: s.tp, attentionDp: s.attentionDp, expert: s.expert },
    factors,
    load.protocol === false ? {} : s.launch,
  );
  const asMeasured: SimLoadOptions =
    load.protocol === false
      ? load
      : load.protocol === 'launch'
        ? { ...load, requestsPerSlot: d.protocol.requestsPerClient }
        : { ...load, rangeRatio: d.protocol.rangeRatio, requestsPerSlot: d.protocol.requestsPerClient };
  const config = pointConfig(base, { concurrency: point.concurrency, isl: d.isl, osl: d.osl }, null, asMeasured);
  if (load.aiperfFrontendMs !== undefined && load.protocol !== false && d.protocol.source === 'gap-analysis') {
    config.engine.frontend = { base_ms: load.aiperfFrontendMs, per_input_us: 0, per_inflight_us: 0 };
  }
  const source = config.traffic.source;
  if (load.protocol !== 'launch' && source.type === 'synthetic' && source.random_range_ratio === 1) {
    if (d.protocol.outputSpread !== undefined) source.output_tokens_stddev = d.protocol.outputSpread * d.osl;
    else if (d.protocol.outputSpreadTokens !== undefined) source.output_tokens_stddev = d.protocol.outputSpreadTokens;
  }
  return config;
}

/**
 * How a user writes a zero-shot sweep of a measured deployment (docs/hardware-and-models.md,
 * "Accuracy with no measurement of the deployment"): the catalog's model and GPU with the
 * deployment's parallelism, the engine's default caps (no launch flags), KV sized from memory,
 * the synthetic source's default lengths (AIPerf's: every request `isl` / `osl` tokens, or drawn in
 * [`rangeRatio` x L, L]) and 10 requests a client; not how the point was measured.
 */
export function userSweepLoad(rangeRatio = 1): SimLoadOptions {
  return resolveSimLoad({ protocol: false, rangeRatio, requestsPerSlot: 10 });
}

/**
 * Each measured point replayed with its launch (caps, KV, requests per client) but with the
 * lengths of a synthetic source of this range ratio (1: every request `isl` / `osl` tokens; below:
 * drawn in [`rangeRatio` x L, L]), whatever its load generator drew: what a replay of those
 * lengths has cost against measurements (the `all_points` rows of data/accuracy.yaml).
 */
export function lengthsLoad(rangeRatio: number): SimLoadOptions {
  return resolveSimLoad({ protocol: 'launch', rangeRatio });
}

/** A pool of trajectory recordings (`trajectory-task.ts`). */
export class TrajectoryPool extends WorkerPool<TrajectoryTask, Trajectory> {
  constructor(threads?: number) {
    super({ filename: compiledModule('calibrate/trajectory-task.js'), threads });
  }

  /** The trajectory of a config, resolved on the pool thread. */
  record(config: RunConfig): Promise<Trajectory> {
    return this.run({ config });
  }
}

/** Factors per (GPU, backend, family) of a fitted parameter vector. */
export function factorsFor(fit: Pick<FactorFit, 'layout' | 'x'>, hardware: string, backend: string, family = ''): EfficiencyFactors {
  return fit.layout.factors(fit.x, hardware, backend, family);
}

/**
 * Runs `task` on every item, submitted costliest first so that a pool ends on short tasks instead
 * of one long one with its other threads idle; the results come back in the items' order.
 */
export async function costliestFirst<T, R>(items: readonly T[], cost: (item: T) => number, task: (item: T) => Promise<R>): Promise<R[]> {
  const order = items.map((_, i) => i).sort((a, b) => cost(items[b]) - cost(items[a]) || a - b);
  const results = new Array<R>(items.length);
  await Promise.all(
    order.map(async (i) => {
      results[i] = await task(items[i]);
    }),
  );
  return results;
}

/** What a measured point's replay costs, roughly: its clients' output tokens. */
export const replayCost = (p: MeasuredPoint): number => p.concurrency * p.deployment.osl;

/** Records every point's trajectory with the factors of its pair. */
export async function recordPoints(
  pool: TrajectoryPool,
  points: readonly MeasuredPoint[],
  factorsOf: (p: MeasuredPoint) => EfficiencyFactors,
  load: SimLoadOptions,
): Promise<FitPoint[]> {
  return costliestFirst(points, replayCost, async (p) => {
    const factors = factorsOf(p);
    const config = measuredPointConfig(p, factors, load);
    const found = deploymentOf(config.engine, roleOf(config.engine, 'aggregated'));
    if (found.deployment === null) throw new Error(`${p.label}: not in the catalog`);
    const trajectory = await pool.record(config);
    return {
      label: p.label,
      model: p.model,
      hardware: p.hardware,
      backend: p.backend,
      family: p.family,
      concurrency: p.concurrency,
      deployment: found.deployment,
      measured: p.measured,
      trajectory,
      recordedWith: factors,
    };
  });
}

export interface CatalogFitRound {
  round: number;
  /** MAPE (%) of the replays at the factors kept after the round. */
  replayed: { ttft: number; itl: number };
  /** Whether a step lowered the replayed loss, and which (1, 1/2, 1/4; 0 when none did). */
  accepted: boolean;
  step: number;
  iterations: number;
  wallMs: number;
}

function mape(points: readonly FitPoint[], predict: (p: FitPoint) => { ttftMs: number; itlMs: number }): { ttft: number; itl: number } {
  let ttft = 0;
  let itl = 0;
  for (const p of points) {
    const q = predict(p);
    ttft += Math.abs(q.ttftMs / p.measured.ttftMs - 1);
    itl += Math.abs(q.itlMs / p.measured.itlMs - 1);
  }
  return { ttft: (100 * ttft) / Math.max(1, points.length), itl: (100 * itl) / Math.max(1, points.length) };
}

/** Replayed metrics of a recorded point (the trajectory's own). */
export const replayedMetrics = (p: FitPoint) => ({ ttftMs: p.trajectory.ttftMs ?? 0, itlMs: p.trajectory.itlMs ?? 0 });

export function layoutFor(
  points: readonly { hardware: string; backend: string }[],
  options: { measuredLink?: boolean } = {},
): ParameterLayout {
  const catalog = loadCatalog();
  return ParameterLayout.of(
    points,
    catalog.hardware.map((h) => h.id),
    [...BACKENDS],
    options.measuredLink === true ? measuredFactors(catalog.hardware) : {},
  );
}

/**
 * The factors the catalog measures for a GPU rather than the fit: `link`, the share of its
 * scale-up links' bandwidth its engines' all-reduce reaches (`interconnect.all_reduce_share`).
 */
export function measuredFactors(hardware: readonly HardwareEntry[]): MeasuredFactors {
  const out: Record<string, Partial<EfficiencyFactors>> = {};
  for (const h of hardware) if (h.interconnect.all_reduce_share !== undefined) out[h.id] = { link: h.interconnect.all_reduce_share };
  return out;
}

/**
 * The outer loop (`fitByRounds`): replay every point at the current factors, fit on the
 * trajectories, keep the fitted factors only where replaying them lowers the replayed loss.
 * Returns the fit and the points replayed at its factors (for leave-one-model-out fits).
 */
export async function fitCatalogFactors(
  pool: TrajectoryPool,
  points: readonly MeasuredPoint[],
  load: SimLoadOptions,
  options: { rounds?: number; log?: (line: string) => void; measuredLink?: boolean } = {},
): Promise<{ fit: FactorFit; recorded: FitPoint[]; rounds: CatalogFitRound[] }> {
  const layout = layoutFor(points, options);
  const rounds: CatalogFitRound[] = [];
  const count = options.rounds ?? 3;
  let started = performance.now();
  const record = (x: readonly number[]) => recordPoints(pool, points, (p) => layout.factors(x, p.hardware, p.backend, p.family), load);
  const result = await fitByRounds(record, layout, {
    start: layout.start(),
    rounds: count,
    log: (r) => {
      const replayed = mape(r.points, replayedMetrics);
      rounds.push({
        round: r.round,
        replayed,
        accepted: r.accepted,
        step: r.step,
        iterations: r.iterations,
        wallMs: performance.now() - started,
      });
      options.log?.(
        `round ${r.round + 1}/${count}: ${r.accepted ? `step ${r.step}` : 'no step lowered the loss'}; replayed TTFT ${replayed.ttft.toFixed(1)} % ITL ${replayed.itl.toFixed(1)} %; ${r.iterations} iterations, ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
      started = performance.now();
    },
  });
  let dataLoss = 0;
  for (const p of result.points) for (const v of logErrors(p, layout.factors(result.x, p.hardware, p.backend, p.family))) dataLoss += v * v;
  return { fit: { layout, x: result.x, dataLoss, loss: result.loss, iterations: rounds.length }, recorded: result.points, rounds };
}

/**
 * The table `data/efficiency.yaml` holds: the global level as the default, and an entry for
 * every catalog GPU and backend (pairs without measurements take their GPU's and backend's
 * effects), each with what the fit saw of it.
 */
export function efficiencyTableOf(fit: FactorFit, points: readonly FitPoint[]): EfficiencyTable {
  const round = (name: string, v: number) =>
    Number(v.toPrecision(name === 'moe' || name === 'compute' || name === 'memory' || name === 'link' ? 4 : 4));
  const asEntry = (f: EfficiencyFactors) =>
    Object.fromEntries(EFFICIENCY_NAMES.map((n) => [n, round(n, f[n])])) as unknown as EfficiencyFactors;
  const catalog = loadCatalog();
  const entries: EfficiencyTable['entries'] = [];
  for (const h of catalog.hardware.map((x) => x.id).sort()) {
    for (const b of BACKENDS) {
      const mine = points.filter((p) => p.hardware === h && p.backend === b);
      const models = [...new Set(mine.map((p) => p.model))].sort();
      const errors = mape(mine, (p) => predictPoint(p, factorsFor(fit, h, b)));
      entries.push({
        hardware: h,
        backend: b,
        ...asEntry(factorsFor(fit, h, b)),
        fit:
          mine.length === 0
            ? { points: 0, note: 'not measured: the GPU and backend effects only' }
            : {
                points: mine.length,
                deployments: new Set(mine.map((p) => p.label)).size,
                models,
                ttft_mape: Number(errors.ttft.toFixed(1)),
                itl_mape: Number(errors.itl.toFixed(1)),
              },
      });
      // Each version family measured on this pair, with its family effect.
      for (const family of [...new Set(mine.map((p) => p.family).filter((f) => f !== ''))].sort()) {
        const own = mine.filter((p) => p.family === family);
        const ownErrors = mape(own, (p) => predictPoint(p, factorsFor(fit, h, b, family)));
        entries.push({
          hardware: h,
          backend: b,
          version: family,
          ...asEntry(factorsFor(fit, h, b, family)),
          fit: {
            points: own.length,
            deployments: new Set(own.map((p) => p.label)).size,
            models: [...new Set(own.map((p) => p.model))].sort(),
            ttft_mape: Number(ownErrors.ttft.toFixed(1)),
            itl_mape: Number(ownErrors.itl.toFixed(1)),
          },
        });
      }
    }
  }
  return { default: asEntry(fit.layout.factors(fit.x, '', '')), entries };
}

/** One predicted point of the zero-shot evaluation. */
export interface ZeroShotPoint {
  label: string;
  model: string;
  hardware: string;
  backend: string;
  moe: boolean;
  gpus: number;
  concurrency: number;
  /** How its load generator drew lengths: every request the same (`fixed`) or spread (`drawn`). */
  lengths: LengthsKind;
  /** Where the row comes from, which says how it was measured (`SiliconProtocol.source`). */
  source: SiliconProtocol['source'];
  measured: { ttftMs: number; itlMs: number };
  predicted: { ttftMs: number; itlMs: number };
}

/** How a measuring protocol drew lengths: spread (a range ratio below 1, or an output spread) or every request the same. */
export function protocolLengths(
  protocol: Pick<SiliconProtocol, 'rangeRatio'> & Partial<Pick<SiliconProtocol, 'outputSpread' | 'outputSpreadTokens'>>,
): LengthsKind {
  return lengthsKindOf(protocol.rangeRatio, protocol.outputSpread ?? 0, protocol.outputSpreadTokens ?? 0);
}

/** A measured point with what a replay predicted, on `gpus` GPUs of a dense or MoE model. */
export function zeroShotPoint(p: MeasuredPoint, predicted: { ttftMs: number; itlMs: number }, gpus: number, moe: boolean): ZeroShotPoint {
  return {
    label: p.label,
    model: p.model,
    hardware: p.hardware,
    backend: p.backend,
    moe,
    gpus,
    concurrency: p.concurrency,
    lengths: protocolLengths(p.deployment.protocol),
    source: p.deployment.protocol.source,
    measured: p.measured,
    predicted,
  };
}

/** An aggregated point with the metrics of its recorded replay `r`. */
export function aggregatedPrediction(p: MeasuredPoint, r: FitPoint): ZeroShotPoint {
  return zeroShotPoint(
    p,
    replayedMetrics(r),
    r.deployment.tensor * r.deployment.attentionData,
    r.deployment.model.architecture.moe !== undefined,
  );
}

/**
 * Leave one model out: fit the factors on every point of the other models (from the trajectories
 * of the fit on all points, so each fit starts where that one ended), then replay the left-out
 * model's points with them. No point of a model informs the factors that predict it.
 */
export async function zeroShot(
  pool: TrajectoryPool,
  points: readonly MeasuredPoint[],
  load: SimLoadOptions,
  options: { rounds?: number; log?: (line: string) => void; measuredLink?: boolean } = {},
): Promise<{
  predictions: ZeroShotPoint[];
  all: FactorFit;
  recorded: FitPoint[];
  rounds: CatalogFitRound[];
  /** Each model's fit on the other models' points (the fit that predicted it). */
  leftOut: Map<string, FactorFit>;
}> {
  const { fit: all, recorded, rounds } = await fitCatalogFactors(pool, points, load, options);
  const models = [...new Set(points.map((p) => p.model))].sort();
  const predictions: ZeroShotPoint[] = [];
  const leftOut = new Map<string, FactorFit>();
  for (const model of models) {
    const started = performance.now();
    const others = recorded.filter((p) => p.model !== model);
    const fit = fitFactors(others, all.layout, { start: all.x });
    leftOut.set(model, fit);
    const mine = points.filter((p) => p.model === model);
    const replayed = await recordPoints(pool, mine, (p) => factorsFor(fit, p.hardware, p.backend, p.family), load);
    replayed.forEach((r, i) => {
      const p = mine[i];
      predictions.push(aggregatedPrediction(p, r));
    });
    options.log?.(`left out ${model}: ${mine.length} points predicted (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  return { predictions, all, recorded, rounds, leftOut };
}

/** The text of an efficiency table file: a header saying what it was fitted on, then the table. */
export function efficiencyFileText(
  table: EfficiencyTable,
  fit: {
    points: readonly MeasuredPoint[];
    rounds: readonly CatalogFitRound[];
    load: SimLoadOptions;
    source: string;
    /** The command that wrote it (default `servesim calibrate catalog`). */
    command?: string;
  },
): string {
  const last = fit.rounds[fit.rounds.length - 1];
  const header = [
    'Efficiency factors of roofline timing, per GPU and backend (docs/hardware-and-models.md).',
    `Written by ${fit.command ?? '`servesim calibrate catalog` (npm run fit:catalog)'}; rerun it rather than editing by hand.`,
    `Fitted on ${fit.points.length} closed-loop points of ${new Set(fit.points.map((p) => p.label)).size} deployments of ${fit.source},`,
    `${fit.rounds.length} rounds of replays (${fit.load.requestsPerSlot} requests per slot, length ratio ${fit.load.rangeRatio}); replayed`,
    `at the factors below: TTFT avg MAPE ${last.replayed.ttft.toFixed(1)} %, ITL avg MAPE ${last.replayed.itl.toFixed(1)} % (in sample).`,
    "Each entry's `fit` says what it was fitted on (0 points: its GPU and backend effects only).",
  ];
  return `${header.map((l) => `# ${l}`).join('\n')}\n${stringify(table, { lineWidth: 0 })}`;
}
