/**
 * `servesim calibrate pass-time --profile DIR` (docs/calibration.md, "Pass time from layer
 * profiles"): read a layer-wise profile, build the pass-time model of `timing: {type: profile}`
 * (`pass-profile.ts`), print what it is made of and what it gives at a few pass shapes, and with
 * `--out` write `pass-time.json`, `snippet.yaml` and `fit.json`.
 */
import { join } from 'node:path';
import { findModel } from '../catalog/load.js';
import { readLayerProfile } from '../io/read-layer-profile.js';
import { checkOutputDir, writeOutputFiles } from '../io/write-output.js';
import { CalibrateUsageError } from './arguments.js';
import { snippetYaml } from './fit-output.js';
import { buildPassProfile, referencePassTimes } from './pass-profile.js';
import { profileTimingOf } from '../io/read-profile-timing.js';
import { formatLogComparison, LOG_METRICS } from '../score/log-compare.js';
import { replayLog } from './log-replay.js';

export interface ProfileCommandOptions {
  profile: string;
  /** Tensor-parallel size whose tables to use; absent: the profile's only one. */
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

export function runProfilePassTime(options: ProfileCommandOptions): ProfileCommandOutcome {
  positiveInteger('--tp', options.tp);
  positiveInteger('--layers', options.layers);
  positiveInteger('--experts', options.experts);
  positiveInteger('--experts-per-token', options.expertsPerToken);
  if (options.out !== undefined) checkOutputDir(options.out);
  const profile = readLayerProfile(options.profile, options.tp);
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
  const built = buildPassProfile(profile, { layers, experts, source });
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
