/**
 * Load parameters of a measured run (docs/aiperf-files.md): concurrency, request rate,
 * ISL/OSL and request count, taken from `input_config` (every layout's shape), then
 * `run_info.cli_command`, then the artifact folder's name (`...-concurrency8`), then the
 * metrics themselves (ISL only, when every request had the same length). The result says
 * which source each value came from; values given by the user win over all of them.
 */
import { basename } from 'node:path';
import type { AiperfLoad, AiperfSummary, LoadParameterSource } from './read-aiperf-types.js';

type LoadField = keyof AiperfLoad['sources'];
type LoadValues = Partial<
  Pick<AiperfLoad, 'concurrency' | 'requestRate' | 'isl' | 'osl' | 'requestCount' | 'model' | 'islStddev' | 'oslStddev' | 'datasetEntries'>
>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function positiveNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return undefined;
}

function meanOf(value: unknown): number | undefined {
  if (isObject(value)) return positiveNumber(value.mean);
  return positiveNumber(value);
}

function nonNegativeNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return undefined;
}

function stddevOf(value: unknown): number | undefined {
  return isObject(value) ? nonNegativeNumber(value.stddev) : undefined;
}

/** Load parameters in an `input_config` of any layout (docs/aiperf-files.md). */
export function loadFromInputConfig(config: unknown): LoadValues {
  if (!isObject(config)) return {};
  const found: LoadValues = {};
  // Newest (AIPerf 0.8+): phases[] and datasets[].
  if (Array.isArray(config.phases)) {
    const phases = config.phases as unknown[];
    const profiling = phases.find((phase) => isObject(phase) && (phase.name === 'profiling' || phase.kind === 'profiling')) ?? phases[0];
    if (isObject(profiling)) {
      found.concurrency = positiveNumber(profiling.concurrency);
      found.requestRate = positiveNumber(profiling.request_rate ?? profiling.rate);
      found.requestCount = positiveNumber(profiling.requests ?? profiling.request_count);
    }
  }
  if (Array.isArray(config.datasets)) {
    const datasets = config.datasets as unknown[];
    const dataset = datasets.find((entry) => isObject(entry) && entry.name === 'main') ?? datasets[0];
    if (isObject(dataset)) found.datasetEntries = positiveNumber(dataset.entries);
    if (isObject(dataset) && isObject(dataset.prompts)) {
      found.isl = meanOf(dataset.prompts.isl);
      found.osl = meanOf(dataset.prompts.osl);
      found.islStddev = stddevOf(dataset.prompts.isl);
      found.oslStddev = stddevOf(dataset.prompts.osl);
    }
  }
  if (isObject(config.models) && Array.isArray(config.models.items) && isObject(config.models.items[0])) {
    const name = config.models.items[0].name;
    if (typeof name === 'string') found.model = name;
  }
  // Early AIPerf: loadgen / input.prompt / endpoint.model_names.
  if (isObject(config.loadgen)) {
    found.concurrency ??= positiveNumber(config.loadgen.concurrency);
    found.requestRate ??= positiveNumber(config.loadgen.request_rate);
    found.requestCount ??= positiveNumber(config.loadgen.request_count);
  }
  if (isObject(config.input) && isObject(config.input.prompt)) {
    const prompt = config.input.prompt;
    found.isl ??= meanOf(prompt.input_tokens);
    found.osl ??= meanOf(prompt.output_tokens);
    found.islStddev ??= stddevOf(prompt.input_tokens);
    found.oslStddev ??= stddevOf(prompt.output_tokens);
  }
  // Early AIPerf records its dataset's entries as the number of conversations, when set.
  if (isObject(config.input) && isObject(config.input.conversation)) found.datasetEntries ??= positiveNumber(config.input.conversation.num);
  if (isObject(config.endpoint) && Array.isArray(config.endpoint.model_names) && typeof config.endpoint.model_names[0] === 'string') {
    found.model ??= config.endpoint.model_names[0];
  }
  // GenAI-Perf: perf_analyzer flags at the top level.
  found.concurrency ??= positiveNumber(config.concurrency);
  found.requestRate ??= positiveNumber(config.request_rate);
  found.isl ??= positiveNumber(config.synthetic_input_tokens_mean);
  found.osl ??= positiveNumber(config.output_tokens_mean);
  found.islStddev ??= nonNegativeNumber(config.synthetic_input_tokens_stddev);
  found.oslStddev ??= nonNegativeNumber(config.output_tokens_stddev);
  found.requestCount ??= positiveNumber(config.num_prompts ?? config.request_count);
  found.datasetEntries ??= positiveNumber(config.num_dataset_entries);
  if (typeof config.model === 'string') found.model ??= config.model;
  else if (Array.isArray(config.model) && typeof config.model[0] === 'string') found.model ??= config.model[0];
  return found;
}

/** Splits a shell command line into words, honouring single and double quotes. */
export function splitCommandLine(command: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let match = pattern.exec(command); match !== null; match = pattern.exec(command)) {
    words.push(match[1] ?? match[2] ?? match[3]);
  }
  return words;
}

const CLI_FLAGS: Record<string, keyof LoadValues> = {
  '--concurrency': 'concurrency',
  '--request-rate': 'requestRate',
  '--synthetic-input-tokens-mean': 'isl',
  '--isl': 'isl',
  '--input-tokens-mean': 'isl',
  '--output-tokens-mean': 'osl',
  '--osl': 'osl',
  '--synthetic-input-tokens-stddev': 'islStddev',
  '--input-tokens-stddev': 'islStddev',
  '--output-tokens-stddev': 'oslStddev',
  '--request-count': 'requestCount',
  '--num-requests': 'requestCount',
  '--num-prompts': 'requestCount',
  '--num-dataset-entries': 'datasetEntries',
  '--num-conversations': 'datasetEntries',
  '--model': 'model',
  '-m': 'model',
};

/** Load parameters in an `aiperf profile ...` / `genai-perf profile ...` command line. */
export function loadFromCliCommand(command: string): LoadValues {
  const words = splitCommandLine(command);
  const found: LoadValues = {};
  for (let i = 0; i < words.length; i++) {
    let flag = words[i];
    let value: string | undefined;
    const equals = flag.indexOf('=');
    if (flag.startsWith('-') && equals > 0) {
      value = flag.slice(equals + 1);
      flag = flag.slice(0, equals);
    } else {
      value = words[i + 1];
    }
    const field = CLI_FLAGS[flag];
    if (!field || value === undefined) continue;
    if (field === 'model') found.model ??= value;
    else if (field === 'islStddev' || field === 'oslStddev') found[field] ??= nonNegativeNumber(value);
    else found[field] ??= positiveNumber(value);
  }
  return found;
}

/** Load parameters in an AIPerf artifact folder name (`Qwen_Qwen3-0.6B-openai-chat-concurrency8`). */
export function loadFromFolderName(folder: string): LoadValues {
  const name = basename(folder);
  const found: LoadValues = {};
  const concurrency = /(?:^|[-_])concurrency(\d+)(?![\d.])/.exec(name);
  if (concurrency) found.concurrency = Number(concurrency[1]);
  const rate = /(?:^|[-_])request_rate(\d+(?:\.\d+)?)(?![\d.])/.exec(name);
  if (rate) found.requestRate = Number(rate[1]);
  return found;
}

const FIELDS: LoadField[] = [
  'concurrency',
  'requestRate',
  'isl',
  'osl',
  'requestCount',
  'model',
  'islStddev',
  'oslStddev',
  'datasetEntries',
];

/**
 * The load of a measured run, each value from the first source that has it:
 * user, input_config, cli_command, folder name, metrics.
 */
export function resolveAiperfLoad(summary: AiperfSummary, folder: string, user: LoadValues = {}): AiperfLoad {
  const fromMetrics: LoadValues = {};
  const isl = summary.metrics.input_sequence_length?.stats;
  if (isl && isl.min !== undefined && isl.min === isl.max && isl.min > 0) fromMetrics.isl = isl.min;
  const candidates: Array<[LoadParameterSource, LoadValues]> = [
    ['user', user],
    ['input_config', loadFromInputConfig(summary.inputConfig)],
    ['cli_command', summary.cliCommand ? loadFromCliCommand(summary.cliCommand) : {}],
    ['folder name', loadFromFolderName(folder)],
    ['metrics', fromMetrics],
  ];
  const load: AiperfLoad = { sources: {} };
  for (const field of FIELDS) {
    for (const [source, values] of candidates) {
      const value = values[field];
      if (value === undefined) continue;
      (load as unknown as Record<string, unknown>)[field] = value;
      load.sources[field] = source;
      break;
    }
  }
  return load;
}
