/**
 * `servesim calibrate engine`: read the base config and the measured points, split them into
 * training and held-out points (`--train`), fit (`engine-calibration.ts`), and write into the
 * output folder: `fitted-config.yaml` (the base config with the fitted constants),
 * `snippet.yaml`, `fit.json`, `points.csv` (every point: measured, simulated, APE, train or
 * held out) and the scoring report of the held-out points (`score/report.html`, scores.csv,
 * scores.json, report.md).
 */
import { join, relative, resolve } from 'node:path';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import { stringify as stringifyYaml } from 'yaml';
import { deploymentOf } from '../config/deployment.js';
import { LINEAR_TERMS } from '../config/linear-timing.js';
import { ConfigError } from '../config/errors.js';
import { loadRunConfig, readYamlFile, type LoadedRunConfig } from '../config/load.js';
import { loadVllmLogRunConfig, vllmLogRawConfig } from '../config/vllm-log-config.js';
import { isVllmLog } from '../io/read-vllm-log.js';
import type { RunConfig } from '../config/types.js';
import { EFFICIENCY_NAMES } from '../catalog/efficiency.js';
import { parseMappingArguments } from '../io/read-tabular.js';
import { checkOutputDir, writeOutputFiles } from '../io/write-output.js';
import { parseMetricList, type MetricName } from '../score/metric-names.js';
import { selectPoints } from '../score/pair.js';
import { formatKey, metricValue, missingMetrics, type ScorePoint } from '../score/points.js';
import { readMeasuredPoints, shortPath } from '../score/score-inputs.js';
import { selectTraining, TrainSelectionError } from '../score/train-select.js';
import { scoreReportFiles } from '../score/score-report.js';
import type { ScoreResult } from '../score/score-result.js';
import { CalibrateUsageError, parseSelectionArgs, refuseUntrusted } from './arguments.js';
import { calibrateEngine, type EngineCalibration } from './engine-calibration.js';
import { freeConstants } from './engine-fit.js';
import type { FormReport } from './fit-form.js';
import { autoForm, type FormChoice } from './form-choice.js';
import { saturationNotes } from './saturation-notes.js';
import { stratumOf } from '../catalog/accuracy.js';
import {
  calibrateRoofline,
  DEPLOYMENT_PRIOR_SD,
  HELD_SHRINK,
  MEASUREMENT_NOISE,
  type RooflineCalibration,
} from './roofline-calibration.js';
import { round6, snippetYaml } from './fit-output.js';
import {
  childObject,
  resolveSimLoad,
  spreadOfRuns,
  withConstants,
  type EngineConstants,
  type RawObject,
  type SimLoadOptions,
} from './sim-load.js';
import { isDisaggregated, roleOf, rolePath } from '../config/roles.js';

export const DEFAULT_ENGINE_METRICS = ['time_to_first_token.avg', 'inter_token_latency.avg'] as const;

export interface EngineCommandOptions {
  config: string;
  measured: readonly string[];
  select?: readonly string[];
  map?: readonly string[];
  train: string;
  metrics?: readonly string[];
  out: string;
  fitClient: boolean;
  simLoad?: Partial<SimLoadOptions>;
  threads?: number;
  sets?: readonly string[];
  /** Iterations of each refining search (`EngineFitTask.refineIterations`); default 0. */
  refineIterations?: number;
  /** Weigh every training point 1 instead of by rank of load (`loadRankWeights`). */
  uniformPointWeights?: boolean;
  /** Which form to fit (`formOf`); default auto. */
  form?: 'auto' | 'roofline' | 'linear';
  /** Fit even when the training points are fewer than what a trustworthy fit needs (`--force`). */
  force?: boolean;
}

/** The numeric flags of `calibrate engine`, refused with the flag named before anything is read. */
function checkEngineFlags(options: EngineCommandOptions): void {
  const bad = (flag: string, value: unknown, rule: string) => new CalibrateUsageError(`${flag} ${String(value)}: ${rule}`);
  const { requestsPerSlot, rangeRatio } = options.simLoad ?? {};
  if (requestsPerSlot !== undefined && !(Number.isFinite(requestsPerSlot) && requestsPerSlot > 0 && requestsPerSlot <= 1e6)) {
    throw bad(
      '--requests-per-slot',
      requestsPerSlot,
      'must be a number of simulated requests per slot above 0 (and at most 1,000,000), e.g. 10',
    );
  }
  if (rangeRatio !== undefined && !(rangeRatio > 0 && rangeRatio <= 1)) {
    throw bad('--range-ratio', rangeRatio, 'must be in (0, 1]: lengths are drawn between ratio x L and L');
  }
  if (options.threads !== undefined && !(Number.isInteger(options.threads) && options.threads >= 1)) {
    throw bad('--threads', options.threads, 'must be a positive integer (pool threads)');
  }
  if (
    options.refineIterations !== undefined &&
    !(Number.isInteger(options.refineIterations) && options.refineIterations >= 0 && options.refineIterations <= 1000)
  ) {
    throw bad('--refine', options.refineIterations, 'must be a whole number of iterations from 0 to 1000');
  }
}

export interface EngineCommandOutcome {
  calibration: EngineCalibration | RooflineCalibration;
  fitJson: Record<string, unknown>;
  files: string[];
  text: string;
}

/** Constants of the model's form that the fit holds fixed: where their value comes from, and their value when absent. */
const MODEL_CHOICES = {
  decode_request_exponent: { from: 'base config or model family default', absent: 1 },
  prefill_overlap: { from: 'base config or default', absent: 0 },
} as const;
type ModelChoice = keyof typeof MODEL_CHOICES;

/** The constants as the run config spells them, with units. */
export function coefficientsJson(
  constants: EngineConstants,
  free: readonly string[],
): Record<string, { value: number; unit: string; status: string }> {
  const timing = `${rolePath('aggregated')}.timing`;
  const units = {
    base_ms: ['ms', `${timing}.base_ms`],
    ...Object.fromEntries(LINEAR_TERMS.map((term) => [term.name, [term.unit, `${timing}.${term.name}`]])),
    decode_request_exponent: ['', `${timing}.decode_request_exponent`],
    prefill_overlap: ['', `${timing}.prefill_overlap`],
    client_delay_ms: ['ms', 'engine.frontend.base_ms'],
  } as Record<keyof EngineConstants, [string, string]>;
  const out: Record<string, { value: number; unit: string; status: string }> = {};
  for (const [name, [unit, path]] of Object.entries(units) as Array<[keyof EngineConstants, [string, string]]>) {
    const choice = MODEL_CHOICES[name as ModelChoice];
    const value = constants[name] ?? choice?.absent ?? 1;
    out[name] = {
      value: round6(value),
      unit,
      status: free.includes(name)
        ? `fitted (${path})`
        : choice !== undefined
          ? `fixed at ${round6(value)}: ${choice.from}, not fitted (${path})`
          : `not identifiable from the training points: fixed at ${round6(value)} (${path})`,
    };
  }
  return out;
}

/** fit.json's `method.simulated_load`: the simulated load a fit replays its training points under. */
function simulatedLoadJson(load: SimLoadOptions): Record<string, unknown> {
  return {
    start: 'all slots at t = 0',
    requests_per_slot: load.requestsPerSlot,
    random_range_ratio: load.rangeRatio,
    lengths: load.lengths ?? 'upper',
    warmup: load.warmup,
    seed: load.seed,
  };
}

export function engineFitJson(
  calibration: EngineCalibration,
  metrics: readonly MetricName[],
  load: SimLoadOptions,
  fitClient: boolean,
  refineIterations = 0,
): Record<string, unknown> {
  const { best } = calibration;
  const holdoutMetrics: Record<string, { mape: number | null; points: number }> = {};
  for (const metric of metrics) {
    holdoutMetrics[metric.id] = {
      mape: calibration.holdoutMape[metric.id] === null ? null : round6(calibration.holdoutMape[metric.id] as number),
      points: calibration.score.metrics[metric.id]?.points ?? 0,
    };
  }
  const trainMetrics: Record<string, { mape: number | null }> = {};
  for (const metric of metrics) {
    const mape = calibration.trainScore.metrics[metric.id]?.mape;
    trainMetrics[metric.id] = { mape: mape === undefined || mape === null ? null : round6(mape) };
  }
  return {
    form: 'linear',
    coefficients: coefficientsJson(best.constants, best.free),
    train: calibration.train.map((p) => p.key),
    holdout: { points: calibration.holdout.map((p) => p.key), metrics: holdoutMetrics },
    train_fit: { metrics: trainMetrics, mape_all_metrics: round6(best.trainMape) },
    wall_ms: Math.round(calibration.wallMs),
    method: {
      optimizer: 'Levenberg-Marquardt (ml-levenberg-marquardt) over log-coefficients, relative residuals',
      refine_iterations: refineIterations,
      starts: calibration.fits.map((fit) => ({
        prefill_share: fit.prefillShare,
        train_mape: round6(fit.trainMape),
        loss: round6(fit.loss),
        iterations: fit.iterations,
        replays: fit.replays,
      })),
      fit_client_delay: fitClient,
      decode_request_exponent: calibration.decodeExponent,
      prefill_overlap: calibration.prefillOverlap,
      prefill_prior:
        calibration.prefillPrior === null
          ? null
          : {
              ...calibration.prefillPrior,
              residual: 'weight x ln((prefill_token_us / base_ms) / ratio), applied with a fitted client delay',
            },
      metric_weights: calibration.metricWeights,
      point_weights: {
        scheme: calibration.pointWeights.scheme,
        weights: calibration.train.map((p, i) => ({ key: p.key, weight: round6(calibration.pointWeights.weights[i]) })),
      },
      simulated_load: simulatedLoadJson(load),
      kv_capacity: 'as in the base config (unlimited unless it says otherwise)',
    },
  };
}

/** What the points table and the printed text need of either form's result. */
type FitPoints = Pick<EngineCalibration, 'train' | 'holdout' | 'simulated' | 'holdoutMape' | 'trainScore'>;

function pointsCsv(calibration: FitPoints, metrics: readonly MetricName[]): string {
  const keyNames = [...new Set(calibration.simulated.flatMap((p) => Object.keys(p.key)))];
  const header = [...keyNames, 'set', ...metrics.flatMap((m) => [`measured_${m.id}`, `simulated_${m.id}`, `ape_${m.id}`])];
  const trainKeys = new Set(calibration.train.map((p) => formatKey(p.key)));
  const measuredByKey = new Map([...calibration.train, ...calibration.holdout].map((p) => [formatKey(p.key), p]));
  const rows = calibration.simulated.map((sim) => {
    const measured = measuredByKey.get(formatKey(sim.key)) as ScorePoint;
    const cells: Array<string | number> = keyNames.map((k) => sim.key[k] ?? '');
    cells.push(trainKeys.has(formatKey(sim.key)) ? 'train' : 'held out');
    for (const metric of metrics) {
      const m = metricValue(measured, metric);
      const s = metricValue(sim, metric);
      cells.push(
        m ?? '',
        s === undefined ? '' : round6(s),
        m !== undefined && s !== undefined && m !== 0 ? round6((Math.abs(s - m) / m) * 100) : '',
      );
    }
    return cells;
  });
  return stringifyCsv([header, ...rows]);
}

function fmt(value: number | null | undefined, digits = 4): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '-' : Number(value.toPrecision(digits)).toString();
}

/** The printed lines of the linear form's coefficients. */
function linearConstantLines(fitJson: Record<string, unknown>): string[] {
  const coefficients = fitJson.coefficients as Record<string, { value: number; unit: string; status: string }>;
  return Object.entries(coefficients).map(([name, c]) => {
    const choice = MODEL_CHOICES[name as ModelChoice];
    const note = c.status.startsWith('fitted') ? '' : choice !== undefined ? `(fixed: ${choice.from})` : '(not identifiable: fixed)';
    return `  ${name.padEnd(23)} ${fmt(c.value, 5).padStart(11)} ${c.unit.padEnd(3)} ${note}`;
  });
}

/** The printed lines of the physics form's factors, beside the catalog's. */
function rooflineFactorLines(calibration: RooflineCalibration): string[] {
  const moved = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}`;
  return [
    `  ${'factor'.padEnd(24)} ${'fitted'.padStart(10)} ${'catalog'.padStart(10)} ${'moved %'.padStart(8)} ${'SE %'.padStart(6)}`,
    ...EFFICIENCY_NAMES.map((name) => {
      const r = calibration.report[name];
      const tail = r.held ? `${'-'.padStart(6)}  held` : r.sePct.toFixed(1).padStart(6);
      return `  ${name.padEnd(24)} ${fmt(r.value, 4).padStart(10)} ${fmt(r.catalog, 4).padStart(10)} ${moved(r.movedPct).padStart(8)} ${tail}`;
    }),
    `  (catalog: ${calibration.catalogSource}; held: the training points barely inform it (posterior sd above ${HELD_SHRINK} x the prior's),`,
    `  kept at the catalog's value; SE: standard error of the fitted value; docs/hardware-and-models.md explains each factor)`,
  ];
}

export function formatEngineText(
  calibration: FitPoints & { wallMs: number },
  metrics: readonly MetricName[],
  headline: { form: string; replays: number; constantLines: string[]; choice?: FormChoice },
  outDir: string | null,
): string {
  const lines: string[] = [];
  lines.push(
    `engine fit (${headline.form} form): ${calibration.train.length} training points, ${calibration.holdout.length} held out; ${headline.replays} replays, ${fmt(calibration.wallMs / 1000, 3)} s`,
  );
  if (headline.choice !== undefined && headline.choice.requested === 'auto') lines.push(`form (--form auto): ${headline.choice.reason}`);
  lines.push('');
  lines.push(...headline.constantLines);
  lines.push('');
  const keyNames = [...new Set(calibration.simulated.flatMap((p) => Object.keys(p.key)))];
  const header = ['set', ...keyNames, ...metrics.flatMap((m) => [`${m.id} meas`, 'sim', 'APE %'])];
  const trainKeys = new Set(calibration.train.map((p) => formatKey(p.key)));
  const measuredByKey = new Map([...calibration.train, ...calibration.holdout].map((p) => [formatKey(p.key), p]));
  const rows: string[][] = [header];
  for (const sim of calibration.simulated) {
    const measured = measuredByKey.get(formatKey(sim.key)) as ScorePoint;
    const row = [trainKeys.has(formatKey(sim.key)) ? 'train' : 'held out', ...keyNames.map((k) => String(sim.key[k] ?? ''))];
    for (const metric of metrics) {
      const m = metricValue(measured, metric);
      const s = metricValue(sim, metric);
      row.push(fmt(m), fmt(s), m !== undefined && s !== undefined && m !== 0 ? fmt((Math.abs(s - m) / m) * 100, 3) : '-');
    }
    rows.push(row);
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const row of rows) lines.push(`  ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')}`);
  lines.push('');
  // Without held-out points there is no held-out error (and no score report): the training error is all there is.
  const heldOut = calibration.holdout.length > 0;
  for (const metric of metrics) {
    const training = fmt(calibration.trainScore.metrics[metric.id]?.mape, 3);
    lines.push(
      heldOut
        ? `  held-out MAPE ${metric.id}: ${fmt(calibration.holdoutMape[metric.id], 3)} %   (training: ${training} %)`
        : `  training MAPE ${metric.id}: ${training} %`,
    );
  }
  if (!heldOut) lines.push('  no point held out (--train took every measured point): nothing here says how the fit predicts other loads');
  if (outDir !== null) {
    const report = heldOut ? ` and ${join(outDir, 'score', 'report.html')}` : '';
    lines.push('', `wrote ${join(outDir, 'fit.json')}, fitted-config.yaml, snippet.yaml, points.csv${report}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The base config file's own object with the fitted constants (keeps its comments out, its keys in). */
/**
 * The base config as written: the YAML file, or the config of a vLLM request log, whose trace path
 * is then made relative to `outDir` (the fitted config is written there, and a relative path in a
 * config is relative to its folder).
 */
function baseConfigObject(path: string, outDir?: string): RawObject {
  if (!isVllmLog(path)) return readYamlFile(path, path) as RawObject;
  const raw = vllmLogRawConfig(path) as RawObject;
  if (outDir !== undefined) {
    const source = childObject(childObject(raw, 'traffic'), 'source');
    source.path = relative(resolve(outDir), resolve(path)) || '.';
  }
  return raw;
}

export function fittedConfigYaml(
  configPath: string,
  constants: EngineConstants,
  header: string,
  load: SimLoadOptions,
  outDir?: string,
): string {
  const raw = baseConfigObject(configPath, outDir);
  return simLoadYaml(withConstants(raw, constants), header, load);
}

/** A fitted config object as YAML, with the simulated load the fit ran under. */
function simLoadYaml(fitted: RawObject, header: string, load: SimLoadOptions): string {
  // The simulated load the constants were fitted under, so that replays of this config
  // reproduce it (a first-wave warmup depends on the concurrency: set it per point).
  const traffic = childObject(fitted, 'traffic');
  const source = childObject(traffic, 'source');
  if ((source.type ?? 'synthetic') === 'synthetic') traffic.source = { ...source, random_range_ratio: load.rangeRatio, seed: load.seed };
  const loadType = (traffic.load as RawObject | undefined)?.type ?? 'concurrency';
  if (loadType === 'concurrency') traffic.stop = { requests_per_load_unit: load.requestsPerSlot };
  return `${header
    .split('\n')
    .map((l) => `# ${l}`)
    .join('\n')}\n${stringifyYaml(fitted)}`;
}

/** Writes a fit's files into `out` and, when points were held out, their score report into `out/score`; returns the paths written. */
async function writeFitFiles(
  out: string,
  files: ReadonlyArray<[string, string]>,
  calibration: { holdout: readonly unknown[]; score: ScoreResult },
): Promise<string[]> {
  // The fit and its score report appear together or not at all.
  const all: Array<readonly [string, string]> = files.map(([name, text]) => [join(out, name), text] as const);
  if (calibration.holdout.length > 0) all.push(...(await scoreReportFiles(join(out, 'score'), calibration.score)));
  writeOutputFiles(all);
  return all.map(([file]) => file);
}

export function engineSnippet(constants: EngineConstants): Record<string, unknown> {
  const fitted = withConstants(
    {},
    {
      ...constants,
      ...Object.fromEntries(Object.entries(constants).map(([k, v]) => [k, round6(v)])),
    },
  );
  const engine = childObject(fitted, 'engine');
  const snippet: Record<string, unknown> = {
    [`${rolePath('aggregated')}.timing`]: childObject(childObject(engine, 'workers'), 'aggregated').timing,
  };
  if (engine.frontend !== undefined) snippet['engine.frontend'] = engine.frontend;
  return snippet;
}

export async function runEngineCalibration(options: EngineCommandOptions): Promise<EngineCommandOutcome> {
  checkEngineFlags(options);
  checkOutputDir(options.out);
  // A vLLM request log is a base config of its own: its engine (meta.json) and its requests.
  const loaded = isVllmLog(options.config)
    ? loadVllmLogRunConfig(options.config, options.sets ?? [])
    : loadRunConfig(options.config, options.sets ?? []);
  if (isDisaggregated(loaded.config.engine)) {
    throw new ConfigError(
      loaded.file,
      'engine.workers',
      'has prefill and decode workers; calibrate engine fits aggregated workers (fit each layout from its own measurements: a disaggregated fit is not available yet)',
    );
  }
  let mapping: Record<string, string>;
  let metrics: MetricName[];
  try {
    mapping = parseMappingArguments(options.map ?? []);
    const names = (options.metrics ?? []).flatMap((m) => m.split(',')).filter((m) => m.trim() !== '');
    metrics = parseMetricList(names.length > 0 ? names : [...DEFAULT_ENGINE_METRICS]);
  } catch (error) {
    throw new CalibrateUsageError((error as Error).message);
  }
  const selections = parseSelectionArgs(options.select);
  const measuredSide = readMeasuredPoints(options.measured, { mapping, select: selections });
  const measured = selectPoints(measuredSide.points, selections);
  if (measured.length === 0)
    throw new CalibrateUsageError(
      `no measured point in ${options.measured.join(', ')}${selections.length > 0 ? ' with the selection given' : ''}`,
    );
  const { missing, found } = missingMetrics(measured, metrics);
  if (missing.length > 0) {
    throw new CalibrateUsageError(
      `--metrics: no measured point has ${missing.map((m) => m.id).join(', ')} (in ${options.measured.join(', ')}: ${found.join(', ') || 'no metric'})`,
    );
  }
  let trainIndices: number[];
  try {
    trainIndices = selectTraining(
      measured.map((p) => p.key),
      options.train,
    );
  } catch (error) {
    if (error instanceof TrainSelectionError) throw new CalibrateUsageError(error.message);
    throw error;
  }
  if (trainIndices.length === 0)
    throw new CalibrateUsageError(`--train ${options.train}: selects none of the ${measured.length} measured points`);
  // Runs that state their length spread (AIPerf's stddev) are simulated with it, unless --range-ratio says otherwise.
  const spread = options.simLoad?.rangeRatio === undefined ? spreadOfRuns(measured) : undefined;
  const load = resolveSimLoad(spread ? { ...options.simLoad, rangeRatio: spread.rangeRatio, lengths: 'mean' } : options.simLoad);
  if (spread) measuredSide.notes.push(spread.note);
  const repeats = repeatedPromptsNote(measured, loaded.config);
  if (repeats !== null) measuredSide.notes.push(repeats);
  let choice = formOf(options.form ?? 'auto', loaded.config);
  // The physics form records trajectories of synthetic traffic; a request log is fitted in the linear form.
  if (choice.form === 'roofline' && loaded.config.traffic.source.type === 'trace') {
    if (options.form === 'roofline')
      throw new CalibrateUsageError(
        `--form roofline: ${options.config} replays a request trace; the physics form fits synthetic load points (use --form linear)`,
      );
    choice = {
      ...choice,
      form: 'linear',
      reason: 'the base config replays a request trace, and the physics form fits synthetic load points',
    };
    measuredSide.notes.push(`${shortPath(options.config)} replays a request trace: fitted in the linear form`);
  }
  const form = choice.form;
  const guardNotes: string[] = [];
  const wanted = /^(?:lowest|highest):(\d+)$/.exec(options.train.trim());
  if (wanted !== null && trainIndices.length < Number(wanted[1])) {
    guardNotes.push(`--train ${options.train} found ${trainIndices.length} of the ${measured.length} measured points`);
  }
  // A linear fit with fewer measured values than constants returns whatever fits them exactly.
  // (The roofline form holds each factor near the catalog's value by a prior: any number of
  // points determines it.)
  const constants =
    form === 'linear'
      ? freeConstants(
          trainIndices.map((i) => ({ key: measured[i].key })),
          options.fitClient,
        )
      : [];
  const values = trainIndices.length * metrics.length;
  if (values < constants.length) {
    const found = guardNotes[0] ?? `--train ${options.train} selects ${trainIndices.length} point${trainIndices.length === 1 ? '' : 's'}`;
    refuseUntrusted(
      `--train ${options.train}`,
      [
        `${found}: ${trainIndices.length} x ${metrics.length} metrics = ${values} measured values for ${constants.length} constants` +
          ` (${constants.join(', ')}); train on more points (--train lowest:N)`,
      ],
      options.force,
      guardNotes,
    );
  }
  if (form === 'roofline') {
    return runRooflineCalibration(options, loaded, measured, trainIndices, metrics, load, measuredSide.notes, guardNotes, choice);
  }
  const calibration = await calibrateEngine({
    base: loaded.config,
    baseDir: loaded.baseDir,
    measured,
    trainIndices,
    metrics,
    load,
    fitClient: options.fitClient,
    threads: options.threads,
    refineIterations: options.refineIterations,
    ...(options.uniformPointWeights ? { pointWeights: null } : {}),
  });
  const report: FormReport = {
    label: 'linear',
    json: engineFitJson(calibration, metrics, load, options.fitClient, options.refineIterations ?? 0),
    fittedConfig: (header) => fittedConfigYaml(options.config, calibration.best.constants, header, load, options.out),
    snippet: engineSnippet(calibration.best.constants),
    parameterLines: [],
    replays: calibration.best.replays,
  };
  report.parameterLines = linearConstantLines(report.json);
  return writeFormOutputs(report, calibration, options, loaded, measured, metrics, measuredSide.notes, guardNotes, choice);
}

/**
 * The form of the fit and why: as asked, or for `auto` the choice of `autoForm` (linear when the
 * model or GPU is not in the catalog, else what the engine-fit benchmark found for the stratum).
 */
export function formOf(form: 'auto' | 'roofline' | 'linear', base: RunConfig): FormChoice {
  const { deployment } = deploymentOf(base.engine, roleOf(base.engine, 'aggregated'));
  if (form === 'roofline' && deployment === null) {
    throw new CalibrateUsageError(
      `--form roofline needs engine.model and engine.hardware in the catalog (${base.engine.model} on ${base.engine.hardware}); servesim catalog lists them`,
    );
  }
  if (form !== 'auto') return { requested: form, form, reason: `--form ${form}` };
  return autoForm(deployment === null ? null : stratumOf(base.engine.backend, deployment.model.architecture.moe !== undefined));
}

async function runRooflineCalibration(
  options: EngineCommandOptions,
  loaded: LoadedRunConfig,
  measured: ScorePoint[],
  trainIndices: number[],
  metrics: MetricName[],
  load: SimLoadOptions,
  notes: unknown,
  guardNotes: readonly string[],
  choice: FormChoice,
): Promise<EngineCommandOutcome> {
  const calibration = await calibrateRoofline({
    base: loaded.config,
    baseDir: loaded.baseDir,
    measured,
    trainIndices,
    metrics,
    load,
    threads: options.threads,
  });
  const holdoutMetrics: Record<string, { mape: number | null; points: number }> = {};
  for (const metric of metrics) {
    const mape = calibration.holdoutMape[metric.id];
    holdoutMetrics[metric.id] = { mape: mape === null ? null : round6(mape), points: calibration.score.metrics[metric.id]?.points ?? 0 };
  }
  const efficiency = Object.fromEntries(EFFICIENCY_NAMES.map((name) => [name, round6(calibration.factors[name])]));
  const timing = { [`${rolePath('aggregated')}.timing`]: { type: 'roofline', efficiency } };
  const report: FormReport = {
    label: 'physics',
    headerTag: ' (physics form)',
    json: {
      efficiency: Object.fromEntries(
        EFFICIENCY_NAMES.map((name) => [
          name,
          {
            value: round6(calibration.factors[name]),
            catalog: round6(calibration.catalogFactors[name]),
            moved_pct: round6(calibration.report[name].movedPct),
            se_pct: calibration.report[name].held ? null : round6(calibration.report[name].sePct),
            held_at_catalog: calibration.report[name].held,
          },
        ]),
      ),
      catalog_entry: calibration.catalogSource,
      train: calibration.train.map((p) => p.key),
      holdout: { points: calibration.holdout.map((p) => p.key), metrics: holdoutMetrics },
      train_fit: {
        metrics: Object.fromEntries(
          metrics.map((m) => {
            const mape = calibration.trainScore.metrics[m.id]?.mape;
            return [m.id, { mape: mape === undefined || mape === null ? null : round6(mape) }];
          }),
        ),
      },
      wall_ms: Math.round(calibration.wallMs),
      method: {
        optimizer:
          'Levenberg-Marquardt on log errors over the measurement noise, with a Gaussian prior on each factor at the catalog value',
        prior_sd: DEPLOYMENT_PRIOR_SD,
        measurement_noise: MEASUREMENT_NOISE,
        held_rule: `a factor whose posterior standard deviation at the start is above ${HELD_SHRINK} x its prior's (the training points barely inform it) is held at the catalog's value`,
        standard_error: 'posterior, from (J^T J / noise^2 + prior precision)^-1 at the fitted factors',
        rounds: calibration.rounds,
        replays: calibration.replays,
        simulated_load: simulatedLoadJson(load),
        kv_capacity: 'as in the base config',
      },
    },
    fittedConfig: (header) => {
      const raw = baseConfigObject(options.config, options.out);
      childObject(childObject(childObject(raw, 'engine'), 'workers'), 'aggregated').timing = { type: 'roofline', efficiency };
      return simLoadYaml(raw, header, load);
    },
    snippet: timing,
    parameterLines: rooflineFactorLines(calibration),
    replays: calibration.replays,
  };
  return writeFormOutputs(report, calibration, options, loaded, measured, metrics, notes, guardNotes, choice);
}

/** Writes a fitted form's files (fit.json, fitted-config.yaml, snippet.yaml, points.csv, the score report) and builds its console text. */
async function writeFormOutputs(
  report: FormReport,
  calibration: EngineCalibration | RooflineCalibration,
  options: EngineCommandOptions,
  loaded: LoadedRunConfig,
  measured: ScorePoint[],
  metrics: MetricName[],
  inputNotes: unknown,
  guardNotes: readonly string[],
  choice: FormChoice,
): Promise<EngineCommandOutcome> {
  const fitJson: Record<string, unknown> = { form: choice.form, form_choice: formChoiceJson(choice), ...report.json };
  fitJson.inputs = {
    config: shortPath(options.config),
    measured: options.measured.map(shortPath),
    select: options.select ?? [],
    notes: inputNotes,
  };
  const notes = [...guardNotes, ...saturationNotes(measured, calibration.simulated, loaded.config)];
  if (notes.length > 0) fitJson.notes = notes;
  const header = `fitted by servesim calibrate engine${report.headerTag ?? ''} on ${calibration.train.map((p) => formatKey(p.key)).join('; ')}\nfrom ${options.measured.join(', ')}`;
  const files: Array<[string, string]> = [
    ['fit.json', `${JSON.stringify(fitJson, null, 2)}\n`],
    ['fitted-config.yaml', report.fittedConfig(header)],
    ['snippet.yaml', snippetYaml(report.snippet, `engine fit; paste into a run config\n${header}`)],
    ['points.csv', pointsCsv(calibration, metrics)],
  ];
  const written = await writeFitFiles(options.out, files, calibration);
  const text =
    formatEngineText(
      calibration,
      metrics,
      { form: report.label, replays: report.replays, constantLines: report.parameterLines, choice },
      options.out,
    ) + notes.map((note) => `note: ${note}\n`).join('');
  return { calibration, fitJson, files: written, text };
}

/** fit.json's `form_choice`: the form asked for, the one fitted and why. */
function formChoiceJson(choice: FormChoice): Record<string, unknown> {
  return { requested: choice.requested, form: choice.form, reason: choice.reason };
}

/**
 * A note when measured runs sent the same prompts again (fewer dataset entries than requests,
 * AIPerf's --num-dataset-entries) and the base config sends every prompt once: an engine with
 * prefix caching served the repeats from its cache, which the simulated points do not unless the
 * base config sets the dataset too. Null when nothing was repeated or the config repeats as well.
 */
export function repeatedPromptsNote(
  points: readonly { source: string; dataset?: { entries: number; requests?: number } }[],
  config: RunConfig,
): string | null {
  const source = config.traffic.source;
  if (source.type === 'synthetic' && source.dataset_entries !== undefined) return null;
  const repeating = points.filter((p) => p.dataset?.requests !== undefined && p.dataset.requests > p.dataset.entries);
  if (repeating.length === 0) return null;
  const first = repeating[0];
  const entries = [...new Set(repeating.map((p) => p.dataset?.entries))].join(', ');
  return (
    `${repeating.length} measured run${repeating.length === 1 ? '' : 's'} repeated ${entries} prompts over more requests ` +
    `(${first.source}: ${first.dataset?.requests} requests, AIPerf's --num-dataset-entries); with prefix caching the engine served the repeats from its cache. ` +
    `The simulated points send every prompt once: set traffic.source.dataset_entries in the base config to replay the repeats`
  );
}
