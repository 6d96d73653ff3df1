/**
 * Loading a run config: YAML text -> raw object -> `--set` overrides -> schema (defaults,
 * per-field rules) -> cross-field rules -> `RunConfig`. Every problem becomes a
 * `ConfigError` naming the file and the dotted path, or an `InputError` naming the file
 * and the line for YAML syntax errors. Nothing is resolved here (the trace path stays as
 * written; `baseDir` says what it is relative to).
 */
import { dirname, resolve } from 'node:path';
import type * as z from 'zod';
import { ConfigError, makeConfigIssue, type ConfigIssue } from './errors.js';
import { checkRunConfigRules } from './rules.js';
import { checkEngineStartup, checkRunResources } from './run-checks.js';
import { defaultWorkerRole, runConfigSchema } from './schema.js';
import { applySet, parseSetAssignment, type SetAssignment } from './set-override.js';
import { findHardware, findModel } from '../catalog/load.js';
import { engineScheduler, sglangMaxRunningRequests } from '../catalog/engine-defaults.js';
import type { RunConfig, TimingConfig } from './types.js';
import { kvBlocksPerRank } from './kv-capacity.js';
import { autoKvCapacity } from './deployment.js';
import { readYamlFile } from './yaml.js';
import { rolePath, withRoleConfig, workerRoles, type WorkerRoleName } from './roles.js';

export { parseYamlText, readYamlFile } from './yaml.js';

export interface LoadedRunConfig {
  config: RunConfig;
  /** The config path as the caller gave it; used as the file label of errors. */
  file: string;
  /** Absolute folder of the config file: relative paths in the config are relative to it. */
  baseDir: string;
}

/**
 * Validates a raw config object (as parsed from YAML or JSON) and fills every default.
 * `file` labels errors. The result is a plain JSON-serializable object whose keys follow
 * the schema's order, so `JSON.stringify` of it is stable.
 */
export function parseRunConfig(raw: unknown, file: string): RunConfig {
  return validate(raw, file, []);
}

/**
 * Applies `--set` assignments to an in-memory config (not modified), then validates it, including
 * the checks a run for a user must pass (run-checks.ts: engine start-up checks, request and
 * memory bounds).
 */
export function loadRunConfigFromObject(raw: unknown, label: string, sets: readonly string[] = []): RunConfig {
  const assignments = sets.map((set) => parseSetAssignment(set));
  let current: unknown = raw ?? {};
  for (const assignment of assignments) current = applySet(current as object, assignment);
  return validate(current, label, assignments, true);
}

/** Reads a YAML (or JSON) config file, applies `--set` assignments, and validates it. */
export function loadRunConfig(path: string, sets: readonly string[] = []): LoadedRunConfig {
  const raw = readYamlFile(path, path);
  return { config: loadRunConfigFromObject(raw, path, sets), file: path, baseDir: dirname(resolve(path)) };
}

type PathKey = string | number;

function validate(raw: unknown, file: string, sets: readonly SetAssignment[], runChecks = false): RunConfig {
  // zod/mini's objects parse without compiling a parser (new Function), so a replay's one parse
  // pays for no compile, and a sweep's many parses still run faster than classic zod's compiled ones.
  const parsed = runConfigSchema.safeParse(raw, { reportInput: true });
  const found: { path: PathKey[]; reason: string }[] = [];
  let config: RunConfig | undefined;
  const layout = parsed.success ? layoutProblems(parsed.data) : [];
  if (parsed.success && layout.length > 0) {
    found.push(...layout);
  } else if (parsed.success) {
    let filled = withDefaultRole(parsed.data);
    for (const { name } of workerRoles(filled.engine)) filled = defaultCapacity(defaultTiming(filled, name), raw, name);
    for (const { name } of workerRoles(filled.engine)) filled = defaultScheduler(filled, name);
    config = filled as RunConfig;
    for (const violation of checkRunConfigRules(config)) {
      found.push({ path: violation.path.split('.'), reason: violation.reason });
    }
    // Start-up and resource checks assume a config that follows the rules.
    if (runChecks && found.length === 0) {
      const more = checkEngineStartup(config);
      if (more.length === 0) more.push(...checkRunResources(config));
      for (const violation of more) found.push({ path: violation.path.split('.'), reason: violation.reason });
    }
  } else {
    found.push(...fromZodIssues(parsed.error.issues));
  }
  if (found.length === 0 && config !== undefined) return config;

  found.sort((a, b) => comparePaths(a.path, b.path) || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
  const issues: ConfigIssue[] = found.map(({ path, reason }) => makeConfigIssue(file, path.join('.'), reason, findSetter(path, sets)));
  throw new ConfigError(issues);
}

function fromZodIssues(zodIssues: readonly z.core.$ZodIssue[]): { path: PathKey[]; reason: string }[] {
  const out: { path: PathKey[]; reason: string }[] = [];
  for (const issue of zodIssues) {
    const path = issue.path.map((key) => (typeof key === 'number' ? key : String(key)));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...path, key], reason: unknownKeyReason(path, key, issue.message) });
    } else {
      out.push({ path, reason: issue.message });
    }
  }
  return out;
}

/** An unknown key's reason: the schema's (`unknown key (allowed: ...)`). */
function unknownKeyReason(_path: readonly PathKey[], _key: string, reason: string): string {
  return reason;
}

/**
 * The worker layout: `aggregated` alone, or `prefill` with `decode` (and `engine.kv_transfer`
 * only then). Checked before the defaults are filled, which need one layout or the other.
 */
function layoutProblems(config: ParsedRunConfig): { path: PathKey[]; reason: string }[] {
  const { aggregated, prefill, decode } = config.engine.workers;
  const out: { path: PathKey[]; reason: string }[] = [];
  if (aggregated !== undefined && (prefill !== undefined || decode !== undefined)) {
    out.push({
      path: ['engine', 'workers', 'aggregated'],
      reason: `is written with ${prefill !== undefined ? 'prefill' : 'decode'} workers: a deployment has aggregated workers or prefill and decode workers, not both`,
    });
  } else if ((prefill === undefined) !== (decode === undefined)) {
    const missing = prefill === undefined ? 'prefill' : 'decode';
    const present = prefill === undefined ? 'decode' : 'prefill';
    out.push({
      path: ['engine', 'workers', missing],
      reason: `is required with ${present} workers (disaggregated serving needs both pools; write aggregated workers otherwise)`,
    });
  }
  if (config.engine.kv_transfer !== undefined && prefill === undefined && decode === undefined) {
    out.push({
      path: ['engine', 'kv_transfer'],
      reason: 'is read with prefill and decode workers only; an aggregated deployment moves no KV between workers',
    });
  }
  return out;
}

/** A config naming no worker role gets aggregated workers with every default. */
function withDefaultRole(config: ParsedRunConfig): ParsedRunConfig {
  const { aggregated, prefill, decode } = config.engine.workers;
  if (aggregated !== undefined || prefill !== undefined || decode !== undefined) return config;
  return withRoleConfig(config, 'aggregated', defaultWorkerRole());
}

/** Path order: element by element, numbers before strings, a prefix before its extensions. */
function comparePaths(a: readonly PathKey[], b: readonly PathKey[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** The last `--set` that wrote the field, a mapping containing it, or a field inside it. */
function findSetter(path: readonly PathKey[], sets: readonly SetAssignment[]): string | undefined {
  if (path.length === 0) return undefined;
  for (let i = sets.length - 1; i >= 0; i--) {
    const segments = sets[i].segments;
    const n = Math.min(segments.length, path.length);
    let related = true;
    for (let k = 0; k < n && related; k++) related = segments[k] === String(path[k]);
    if (related) return sets[i].text;
  }
  return undefined;
}

/**
 * `kv_cache.capacity` left out means `auto`, which sizes the pool from the catalog; when the
 * model or GPU is not in the catalog that default becomes `unlimited` (written in the effective
 * config). An `auto` the config writes is kept, and the rules refuse it without catalog entries.
 */
function defaultCapacity(config: ParsedRunConfig, raw: unknown, name: WorkerRoleName): ParsedRunConfig {
  const role = roleBlock(config, name);
  if (
    role.kv_cache.capacity.type !== 'auto' ||
    (findModel(config.engine.model) !== undefined && findHardware(config.engine.hardware) !== undefined)
  ) {
    return config;
  }
  if (writtenCapacityType(raw, name) === 'auto') return config;
  return withRoleConfig(config, name, { ...role, kv_cache: { ...role.kv_cache, capacity: { type: 'unlimited' } } });
}

function writtenCapacityType(raw: unknown, name: WorkerRoleName): unknown {
  return written(raw, [...rolePath(name).split('.'), 'kv_cache', 'capacity', 'type']);
}

function written(raw: unknown, path: readonly string[]): unknown {
  let node: unknown = raw;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A run config as the schema leaves it: the keys the engine's and the catalog's defaults fill may be absent. */
type ParsedRunConfig = z.output<typeof runConfigSchema>;
type ParsedRole = NonNullable<ParsedRunConfig['engine']['workers']['aggregated']>;

/**
 * A timing block left out is `roofline` when the config's model and GPU are both in the catalog
 * (the pass time follows from their architecture and datasheet), else `fixed` with its defaults
 * (10 ms per pass with prefill work, 2 ms per pass that emits).
 */
function defaultTiming(config: ParsedRunConfig, name: WorkerRoleName): ParsedRunConfig {
  const role = roleBlock(config, name);
  if (role.timing !== undefined) return config;
  const timing: TimingConfig =
    missingFromCatalog(config.engine.model, config.engine.hardware) === null ? { type: 'roofline' } : placeholderTiming();
  return withRoleConfig(config, name, { ...role, timing });
}

/** The timing blocks this loader filled in with the placeholder (the config's own are never in it). */
const placeholders = new WeakSet<object>();

function placeholderTiming(): TimingConfig {
  const timing = { ...PLACEHOLDER_TIMING };
  placeholders.add(timing);
  return timing;
}

/** Whether a timing block is the placeholder this loader filled in (a config's `fixed` timing of the same values is not). */
export function isPlaceholderTiming(timing: TimingConfig): boolean {
  return placeholders.has(timing);
}

/** What to do about the placeholder pass times, as the console says it after its reason. */
export const PLACEHOLDER_HINT = 'name a catalog model and GPU (servesim catalog) or give the timing (docs/config.md)';

/** The pass times a config gets whose timing is left out and whose model or GPU the catalog lacks. */
export const PLACEHOLDER_TIMING: Readonly<{ type: 'fixed'; prefill_ms: number; decode_ms: number }> = {
  type: 'fixed',
  prefill_ms: 10,
  decode_ms: 2,
};

/**
 * What keeps a model and GPU from roofline timing, in words (`model X is not in the catalog`,
 * `no GPU is named`); null when both are in the catalog.
 */
export function missingFromCatalog(model: string, hardware: string): string | null {
  const missing = [
    ...(findModel(model) === undefined ? [model === 'unknown' ? 'no model is named' : `model ${model} is not in the catalog`] : []),
    ...(findHardware(hardware) === undefined ? [hardware === 'unknown' ? 'no GPU is named' : `GPU ${hardware} is not in the catalog`] : []),
  ];
  return missing.length === 0 ? null : missing.join(' and ');
}

/** Role `name`'s block of a config the layout check passed. */
function roleBlock(config: ParsedRunConfig, name: WorkerRoleName): ParsedRole {
  const role = config.engine.workers[name];
  if (role === undefined) throw new Error(`${rolePath(name)} is absent`);
  return role;
}

/** Scheduler limits when the GPU is not in the catalog, so the engine's GPU rules cannot be applied (docs/config.md). */
const GENERIC_SCHEDULER: Readonly<Record<string, { maxBatchedTokens: number; maxSequences: number | null; chunkedPrefill: boolean }>> = {
  vllm: { maxBatchedTokens: 8192, maxSequences: 256, chunkedPrefill: true },
  sglang: { maxBatchedTokens: 8192, maxSequences: null, chunkedPrefill: true },
  trtllm: { maxBatchedTokens: 8192, maxSequences: 2048, chunkedPrefill: false },
};

/**
 * `max_batched_tokens`, `max_sequences` and `chunked_prefill` left out take the defaults of the
 * engine that schedules (`scheduler.policy`, else `engine.backend`) at its version
 * (`engine.backend_version`, when the policy is the backend's) on the config's GPU
 * (data/engine-defaults.yaml; docs/hardware-and-models.md, "Engine defaults"). SGLang's
 * max_running_requests follows its KV pool (`sglangMaxRunningRequests`, with the model's context
 * length). Without a catalog GPU: 8192 tokens, and 256 sequences under vLLM, 2048 under
 * TensorRT-LLM (chunked context off), SGLang's pool rule with a request pool of 2048 to 4096.
 */
function defaultScheduler(config: ParsedRunConfig, name: WorkerRoleName): ParsedRunConfig {
  const role = roleBlock(config, name);
  const policy = role.scheduler.policy ?? config.engine.backend;
  const hardware = findHardware(config.engine.hardware);
  const query =
    hardware === undefined
      ? null
      : {
          backend: policy,
          version: policy === config.engine.backend ? config.engine.backend_version : undefined,
          hardware,
          tensor: role.parallelism.tensor,
        };
  const engine = query !== null ? engineScheduler(query) : GENERIC_SCHEDULER[policy];
  const scheduler = { ...role.scheduler };
  scheduler.max_batched_tokens ??= engine.maxBatchedTokens;
  scheduler.chunked_prefill ??= engine.chunkedPrefill;
  if (scheduler.max_sequences === undefined && engine.maxSequences !== null) scheduler.max_sequences = engine.maxSequences;
  if (scheduler.max_sequences === undefined) {
    // SGLang: from the KV pool, sized with its request pool's largest size for the per-sequence state.
    const provisional = withRoleConfig(config, name, { ...role, scheduler: { ...scheduler, max_sequences: 4096 } }) as RunConfig;
    const provisionalRole = roleBlock(provisional, name) as RunConfig['engine']['workers']['prefill'] & object;
    const blocks = kvBlocksPerRank(provisional.engine, provisionalRole);
    const tokens = blocks === null || blocks === 0 ? null : blocks * role.kv_cache.block_size;
    const context = config.engine.context_length !== 'max' ? config.engine.context_length : findModel(config.engine.model)?.max_context;
    if (query !== null && context !== undefined) {
      // A hybrid model's state pool caps the running requests too.
      const states =
        provisionalRole.kv_cache.capacity.type === 'auto'
          ? autoKvCapacity(provisional.engine, provisionalRole)?.maxStateSequences
          : undefined;
      scheduler.max_sequences = Math.max(1, Math.min(sglangMaxRunningRequests(query, tokens, context), states ?? Infinity));
    } else {
      const ctx = config.engine.context_length;
      const pool = tokens === null || ctx === 'max' ? 2048 : Math.min(Math.max(Math.floor((tokens / ctx) * 512), 2048), 4096);
      scheduler.max_sequences = tokens === null ? pool : Math.max(1, Math.min(Math.floor(tokens / 2), pool));
    }
  }
  // The schema's key order, so that the effective config reads the same whatever was written.
  const { max_batched_tokens, max_sequences, chunked_prefill, ...rest } = scheduler;
  return withRoleConfig(config, name, { ...role, scheduler: { max_batched_tokens, max_sequences, chunked_prefill, ...rest } });
}
