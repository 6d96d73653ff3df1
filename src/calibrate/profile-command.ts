/**
 * `servesim calibrate pass-time --profile DIR` (docs/calibration.md, "Pass time from layer
 * profiles"): read a layer-wise profile, build the pass-time model of `timing: {type: profile}`
 * (`pass-profile.ts`), print what it is made of and what it gives at a few pass shapes, and with
 * `--out` write `pass-time.json`, `snippet.yaml` and `fit.json`.
 */
import { join } from 'node:path';
import { findHardware, findModel } from '../catalog/load.js';
import type { ModelEntry } from '../catalog/schema.js';
import { collectiveCosts, linkGbPerS } from '../catalog/deployment.js';
import { efficiencyFor } from '../catalog/efficiency.js';
import { readLayerProfile } from '../io/read-layer-profile.js';
import { checkOutputDir, writeOutputFiles } from '../io/write-output.js';
import { CalibrateUsageError } from './arguments.js';
import { snippetYaml } from './fit-output.js';
import { buildPassProfile, referencePassTimes, type PassProfileOptions } from './pass-profile.js';
import { profileTimingOf } from '../io/read-profile-timing.js';
import { formatLogComparison, LOG_METRICS } from '../score/log-compare.js';
import { replayLog } from './log-replay.js';
import { findVllmLog, readVllmLogMetaJson } from '../io/read-vllm-log.js';

export interface ProfileCommandOptions {
  profile: string;
  /** Tensor-parallel size whose tables to use; absent: the log's (with `log`), else the profile's only one. */
  tp?: number;
  /** Transformer layers; absent: the catalog's, for the model the profile (or `model`) names. */
  layers?: number;
  /** Model to take the layer count (and experts) from, when the profile's meta.yaml does not name one in the catalog. */
  model?: string;
  /** Routed experts and experts per token of a mixture of experts; absent: the catalog's. */
  experts?: number;
  expertsPerToken?: number;
  /** A vLLM request log (its folder) to replay with the built model and compare with. */
  log?: string;
  out?: string;
}

export interface ProfileCommandOutcome {
  fitJson: Record<string, unknown>;
  text: string;
  files: string[];
}

function round3(value: number): number | null {
  return Number.isFinite(value) ? Math.round(value * 1000) / 1000 : null;
}

function positiveInteger(flag: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= 1))
    throw new CalibrateUsageError(`${flag} ${value}: must be a positive whole number`);
}

/** Collapses lists of plain numbers onto one line, so that each attention row is one line of the file. */
export function compactJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g,
    (_, inner: string) => `[${inner.split(/,\s+/).join(', ')}]`,
  );
}

/** How a log's engine ran, from its meta.json (`engine_kwargs`), for the profile's tables and collectives. */
interface LogParallelism {
  tensor: number;
  data: number;
  expertParallel: boolean;
  device?: string;
}

/** The parallelism a log's meta.json records (absent keys: 1, 1, false); undefined without a log or a meta.json. */
function logParallelism(log: string | undefined): LogParallelism | undefined {
  if (log === undefined) return undefined;
  const { meta } = findVllmLog(log);
  if (meta === null) return undefined;
  const doc = readVllmLogMetaJson(meta);
  const kwargs = (doc.engine_kwargs ?? {}) as Record<string, unknown>;
  const size = (key: string): number => {
    const value = kwargs[key];
    if (value === undefined || value === null) return 1;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
      throw new CalibrateUsageError(`${meta}: engine_kwargs.${key} must be a positive integer, got ${JSON.stringify(value)}`);
    return value;
  };
  const device = (doc.hardware as Record<string, unknown> | undefined)?.device_name;
  return {
    tensor: size('tensor_parallel_size'),
    data: size('data_parallel_size'),
    expertParallel: kwargs.enable_expert_parallel === true,
    ...(typeof device === 'string' ? { device } : {}),
  };
}

/**
 * The collectives a profile does not measure, at the catalog's cost (`collectiveCosts`, the
 * roofline's: the GPU's link at the efficiency table's share for vLLM, and its fixed cost per
 * collective): all-reduces over tensor-parallel GPUs, dispatch and combine of experts spread over
 * attention-DP ranks. Undefined when there are none, or without the model and GPU in the catalog
 * (then `missing` says why).
 */
function profileCollectives(
  model: ModelEntry | undefined,
  hardwareName: string | undefined,
  version: string | undefined,
  tensor: number,
  data: number,
  expertParallel: boolean,
): { value?: PassProfileOptions['collectives']; missing?: string } {
  const moe = model?.architecture.moe !== undefined;
  if (tensor === 1 && !(moe && expertParallel && data > 1)) return {};
  const hardware = hardwareName === undefined ? undefined : findHardware(hardwareName);
  if (model === undefined || hardware === undefined)
    return {
      missing: `the collectives are not modelled: ${model === undefined ? 'the model' : `the GPU ${hardwareName ?? '(unnamed)'}`} is not in the catalog`,
    };
  const { factors, source } = efficiencyFor(hardware.id, 'vllm', undefined, version);
  const costs = collectiveCosts({ model, hardware, tensor, attentionData: expertParallel ? data : 1 }, factors);
  const what = [
    ...(tensor > 1 ? [`the all-reduces over ${tensor} tensor-parallel GPUs`] : []),
    ...(moe && expertParallel && data > 1 ? [`the dispatch and combine of experts over ${data} data-parallel ranks`] : []),
  ].join(' and ');
  return {
    value: {
      fixedMs: costs.commFixedMs,
      msPerToken: costs.commMsPerToken,
      what,
      source: {
        collectives_per_pass: costs.collectives,
        bytes_per_token: costs.bytesPerToken,
        link_gb_per_s: linkGbPerS(hardware, tensor * (expertParallel ? data : 1)),
        link_share: factors.link,
        collective_us: factors.collective_us,
        factors_from: `data/efficiency.yaml (${source}) and the catalog GPU ${hardware.id}`,
      },
    },
  };
}

export function runProfilePassTime(options: ProfileCommandOptions): ProfileCommandOutcome {
  positiveInteger('--tp', options.tp);
  positiveInteger('--layers', options.layers);
  positiveInteger('--experts', options.experts);
  positiveInteger('--experts-per-token', options.expertsPerToken);
  if (options.out !== undefined) checkOutputDir(options.out);
  const ran = logParallelism(options.log);
  if (options.tp !== undefined && ran !== undefined && options.tp !== ran.tensor)
    throw new CalibrateUsageError(
      `--tp ${options.tp}: the log ${options.log} ran at tensor-parallel size ${ran.tensor}; its replay needs that size's tables (leave --tp out)`,
    );
  const profile = readLayerProfile(options.profile, options.tp ?? ran?.tensor);
  const modelName = options.model ?? profile.meta.model;
  const model = modelName === undefined ? undefined : findModel(modelName);
  if (options.model !== undefined && model === undefined && (options.layers === undefined || profile.moe !== null))
    throw new CalibrateUsageError(`--model ${options.model}: not in the catalog (servesim catalog models lists it); give --layers instead`);
  const source: Record<string, unknown> = {};
  let layers = options.layers;
  if (layers === undefined) {
    if (model === undefined)
      throw new CalibrateUsageError(
        `${options.profile}: the profile times one layer, and its model ${modelName === undefined ? '(meta.yaml names none)' : `${modelName} is not in the catalog`}; give the model's layer count with --layers N (or a catalog model with --model)`,
      );
    layers = model.architecture.layers;
    source.layers_from = `catalog model ${model.id}`;
  } else source.layers_from = '--layers';
  let experts: { count: number; perToken: number } | undefined;
  if (profile.moe !== null) {
    const moe = model?.architecture.moe;
    const count = options.experts ?? moe?.experts;
    const perToken = options.expertsPerToken ?? moe?.experts_per_token;
    if (count === undefined || perToken === undefined)
      throw new CalibrateUsageError(
        `${options.profile}: the profile has moe.csv, and the model's routed experts are not known; give --experts E --experts-per-token K`,
      );
    if (perToken > count) throw new CalibrateUsageError(`--experts-per-token ${perToken}: more than the ${count} experts`);
    experts = { count, perToken };
    source.experts_from = options.experts !== undefined ? '--experts' : `catalog model ${model?.id}`;
  }
  const data = ran?.data ?? 1;
  const expertParallel = ran?.expertParallel ?? false;
  const comm = profileCollectives(model, profile.meta.hardware ?? ran?.device, profile.meta.vllmVersion, profile.tp, data, expertParallel);
  const built = buildPassProfile(profile, {
    layers,
    experts,
    source,
    ...(experts !== undefined && expertParallel ? { expertGroups: profile.tp * data } : {}),
    ...(comm.value !== undefined ? { collectives: comm.value } : {}),
  });
  if (comm.missing !== undefined) built.notes.push(comm.missing);
  let logText = '';
  const reference = referencePassTimes(built.file);
  const modelPath = options.out === undefined ? 'pass-time.json' : join(options.out, 'pass-time.json');
  const timing = { type: 'profile', path: modelPath };
  const fitJson: Record<string, unknown> = {
    target: 'pass-time',
    model: 'profile',
    inputs: profile.files,
    source: built.file.source,
    composition: built.file.composition,
    reference_passes_ms: Object.fromEntries(reference.map((r) => [r.pass, r.ms])),
    snippet: { 'engine.workers.aggregated.timing': timing },
    notes: built.notes,
  };
  if (options.log !== undefined) {
    const replayed = replayLog(options.log, { profile: profileTimingOf(JSON.parse(JSON.stringify(built.file)), 'pass-time.json') });
    const c = replayed.comparison;
    fitJson.replay = {
      log: options.log,
      requests_compared: c.rows.length,
      unfinished_in_replay: c.unfinishedInReplay,
      passes: replayed.passes,
      ...Object.fromEntries(
        LOG_METRICS.map((m) => [
          m,
          {
            measured_mean_ms: round3(c.metrics[m].measuredMeanMs),
            replayed_mean_ms: round3(c.metrics[m].replayedMeanMs),
            mean_error_pct: round3(c.metrics[m].meanErrorPct),
            request_mape_pct: round3(c.metrics[m].requestMapePct),
          },
        ]),
      ),
    };
    logText = `\nthe log ${options.log} replayed with this model (engine from its meta.json, requests at their queue times):\n${formatLogComparison(c)}`;
  }
  const header = `pass-time model from the layer profile ${options.profile}; paste into a run config (the path is relative to the config file, or to the working folder on the command line)`;
  const lines = [
    `pass-time model from the layer profile ${options.profile} (tensor-parallel size ${profile.tp}${profile.meta.model !== undefined ? `, ${profile.meta.model}` : ''}${profile.meta.hardware !== undefined ? ` on ${profile.meta.hardware}` : ''})`,
    `  layers: ${layers} (${String(source.layers_from)})`,
    `  per pass, on every token: ${Object.keys(built.file.composition.per_pass as object).join(', ') || 'none'}`,
    `  per layer, on every token: ${Object.entries(built.file.composition.per_layer as Record<string, number>)
      .map(([name, count]) => (count === 1 ? name : `${name} x${count}`))
      .join(', ')}${experts !== undefined ? ', moe' : ''}, attention`,
    `  per request: ${(built.file.composition.per_request as string[]).join(', ')}`,
    '',
    'pass times (ms):',
    ...reference.map((r) => `  ${r.pass.padEnd(40)} ${r.ms}`),
    '',
    ...built.notes.map((note) => `note: ${note}`),
    ...(logText === '' ? [] : [logText.trimEnd()]),
    '',
    snippetYaml({ 'engine.workers.aggregated.timing': timing }, header).trimEnd(),
  ];
  let files: string[] = [];
  if (options.out !== undefined) {
    const written: Array<[string, string]> = [
      [join(options.out, 'pass-time.json'), `${compactJson(built.file)}\n`],
      [join(options.out, 'snippet.yaml'), snippetYaml({ 'engine.workers.aggregated.timing': timing }, header)],
      [join(options.out, 'fit.json'), `${JSON.stringify(fitJson, null, 2)}\n`],
    ];
    writeOutputFiles(written);
    files = written.map(([file]) => file);
    lines.push('', `wrote ${files.join(', ')}`);
  } else {
    lines.push('', 'give --out DIR to write the model (pass-time.json) and the snippet');
  }
  return { fitJson, text: `${lines.join('\n')}\n`, files };
}
