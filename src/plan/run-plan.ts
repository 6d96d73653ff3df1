/**
 * Running a plan (docs/planning.md): read and check the plan file, list its candidates, drop
 * those whose weights or longest request do not fit their GPUs, search every other candidate's
 * highest rate within the SLOs on the sweep pool, then write plan.json, plan.csv, report.html and
 * a run config per searched candidate.
 *
 * Replays are logged as a sweep logs its points (`points.jsonl`, one line appended per finished
 * replay, ids from the effective config): a rerun with the same output folder reads the log and
 * takes every replay it holds from there, so an interrupted plan continues where it stopped and
 * a finished one is rewritten without a replay.
 */
import { existsSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import { findHardware, findModel } from '../catalog/load.js';
import { deploymentSummary } from '../config/deployment.js';
import { ConfigError, makeConfigIssue } from '../config/errors.js';
import { kvBlocksPerRank, largestSyntheticPromptTokens, sessionTurnPromptTokens } from '../config/kv-capacity.js';
import { formatCount } from '../config/limits.js';
import { loadRunConfigFromObject, parseRunConfig } from '../config/load.js';
import { checkEngineStartup } from '../config/run-checks.js';
import type { RunConfig } from '../config/types.js';
import { checkOutputDir, makeOutputDir, removeEmptyFolders, removeStaleTemporaries, writeOutputFiles } from '../io/write-output.js';
import { prepareRun, type PreparedRun } from '../replay.js';
import { takeLock } from '../sweep/lock.js';
import { pointId, type Overrides } from '../sweep/plan.js';
import {
  POINTS_FILE,
  TIMINGS_FILE,
  appendPoint,
  appendTiming,
  compactPoints,
  latestById,
  readPoints,
  type PointRecord,
} from '../sweep/results.js';
import {
  MAX_PLAN_CANDIDATES,
  searchFieldOf,
  candidateRunConfig,
  countCandidates,
  enumerateCandidates,
  type Candidate,
} from './candidates.js';
import { estimateMaxRps, meanLengths } from './estimate.js';
import { InProcessExecutor, PoolExecutor, type ReplayExecutor, type ReplayJob } from './executor.js';
import { readPlanFile, type PlanSpec } from './plan-file.js';
import {
  PLAN_FILES,
  frontierTable,
  planCsv,
  planJson,
  planJsonText,
  topTable,
  whyBest,
  type PlanCounts,
  type PlanJson,
} from './plan-output.js';
import { formatPlanHtml, renderPlanCharts } from './plan-report.js';
import { bestOf, candidateRows, rankRows, type BestDeployment, type CandidateRow, type PoolRow, type RowExtras } from './plan-result.js';
import { RateSearch } from './rate-search.js';
import { searchCandidates, type CandidateState, type RoundOutcome } from './search.js';
import { WORKER_ROLES, roleOf, rolePath } from '../config/roles.js';

export interface RunPlanOptions {
  planFile: string;
  /** Output folder; `out/plans/<name>` under the current folder by default. */
  outDir?: string;
  /** Pool threads; one per core by default. */
  poolThreads?: number;
  /** Run the replays in this thread instead of on a pool (small plans, tests). */
  inProcess?: boolean;
  /** Pool-task module (tests); the shipped one by default. */
  taskFilename?: string;
  /** Notes for the user (resumed replays); stderr by default. */
  note?: (line: string) => void;
  /** One line per search round. */
  progress?: (line: string) => void;
  /** Aborting it stops the plan: running replays are dropped, finished ones are kept in the log. */
  stopSignal?: AbortSignal;
  /** Write report.html (default true). */
  report?: boolean;
}

export interface RunPlanResult {
  name: string;
  outDir: string;
  interrupted: boolean;
  rows: CandidateRow[];
  ranked: CandidateRow[];
  best: BestDeployment | null;
  counts: PlanCounts;
  /** Replays taken from the log of an earlier run (no replay run for them). */
  reused: number;
  /** Replays of this plan the log holds (after an interruption: what a rerun starts from). */
  logged: number;
  json: PlanJson | null;
  /** The top five and why the best won, as the console prints them. */
  top: string;
  /** With more than one layout: their frontiers side by side (`frontierTable`), else ''. */
  frontiers: string;
  why: string;
  wallMs: number;
}

export function defaultPlanOutDir(name: string): string {
  return join('out', 'plans', name);
}

/** A bound on TTFT or request latency is what catches a deployment whose queue grows without end. */
function checkSlos(plan: PlanSpec): void {
  if (!plan.slos.some((slo) => slo.metric === 'time_to_first_token' || slo.metric === 'request_latency')) {
    throw new ConfigError(
      plan.file,
      'slo',
      'must bound time_to_first_token or request_latency: they include the wait in the queue, so an overloaded deployment breaks them, ' +
        'while inter-token latency and per-user throughput can stay within bounds as its queue grows without end',
    );
  }
}

function checkCatalog(plan: PlanSpec): void {
  const issues = [];
  if (findModel(plan.model) === undefined) {
    issues.push(
      makeConfigIssue(plan.file, 'model', `${JSON.stringify(plan.model)} is not in the catalog (servesim catalog models lists it)`),
    );
  }
  const seen = new Map<string, string>();
  for (const { name } of plan.hardware) {
    const found = findHardware(name);
    if (found === undefined) {
      issues.push(
        makeConfigIssue(
          plan.file,
          `hardware.${name}`,
          `${JSON.stringify(name)} is not in the catalog (servesim catalog hardware lists it)`,
        ),
      );
      continue;
    }
    const earlier = seen.get(found.id);
    if (earlier !== undefined) issues.push(makeConfigIssue(plan.file, `hardware.${name}`, `is ${found.id}, already named as ${earlier}`));
    seen.set(found.id, name);
  }
  if (issues.length > 0) throw new ConfigError(issues);
}

/** Tokens of the longest request a run sends (prompt and output), or null for a trace (checked per row by the replay). */
function longestRequestTokens(config: RunConfig): number | null {
  const source = config.traffic.source;
  if (source.type === 'synthetic') return source.input_tokens + source.output_tokens;
  if (source.type === 'synthetic-session') return sessionTurnPromptTokens(source, source.turns) + source.output_tokens_per_turn;
  return null;
}

/**
 * The scalar columns of a candidate's pools: the most weights one GPU holds, and the smallest KV
 * cache of a rank (for one pool, that pool's; null where the catalog cannot say).
 */
function poolExtremes(pools: readonly PoolRow[]): Pick<RowExtras, 'weightsGibPerGpu' | 'kvTokensPerRank'> {
  const weights = pools.map((p) => p.weights_gib_per_gpu);
  const kv = pools.map((p) => p.kv_cache_tokens_per_rank).filter((t): t is number => t !== null);
  return {
    weightsGibPerGpu: weights.some((w) => w === null) ? null : Math.max(...(weights as number[])),
    kvTokensPerRank: kv.length === 0 ? null : Math.min(...kv),
  };
}

/** Whether a run-config path is in a worker role's block or the KV transfer (their values depend on the candidate's GPUs and layout). */
function isDeploymentPath(path: string): boolean {
  return (
    path.startsWith('engine.kv_transfer') || WORKER_ROLES.some((name) => path.startsWith(`${rolePath(name)}.`) || path === rolePath(name))
  );
}

/**
 * Where a run-config key of a candidate's config comes from in the plan file, for messages: the
 * search list a candidate's key was taken from, the `rates` setting behind a request count, or the
 * same dotted path (the plan's `engine` and `traffic.source` keys are the run config's).
 * `candidate` is true when the value depends on the candidate (its message names it).
 */
export function planFieldOf(plan: PlanSpec, candidate: Candidate, path: string, rateRps: number): { field: string; candidate: boolean } {
  const searched = searchFieldOf(candidate, path);
  if (searched !== null) return { field: searched, candidate: true };
  if (path === 'engine.model') return { field: 'model', candidate: false };
  if (path === 'engine.hardware') return { field: `hardware.${candidate.hardware}`, candidate: true };
  if (path === 'traffic.stop.requests') {
    const byDuration = Math.round(rateRps * plan.rates.durationS) > plan.rates.minRequests;
    return { field: byDuration ? 'rates.duration_s' : 'rates.min_requests', candidate: false };
  }
  if (path === 'report.warmup_requests') return { field: 'rates.warmup_share', candidate: false };
  if (path === 'traffic.load.seed') return { field: 'rates.seed', candidate: false };
  if (path.startsWith('traffic.load') || path.startsWith('traffic.stop')) return { field: 'rates', candidate: false };
  return { field: path, candidate: isDeploymentPath(path) };
}

/** A config error of a candidate's run config, as errors of the plan file: each names the plan's field, and the candidate where it depends on it. */
function planError(plan: PlanSpec, candidate: Candidate, rateRps: number, err: ConfigError): ConfigError {
  return new ConfigError(
    err.issues.map((issue) => {
      const { field, candidate: specific } = planFieldOf(plan, candidate, issue.path, rateRps);
      return makeConfigIssue(plan.file, field, `${issue.reason}${specific ? ` (candidate ${candidate.id})` : ''}`);
    }),
  );
}

/** A run config of the plan at a rate, validated as a replay's is (schema, rules, engine start-up and resource checks). */
function validate(plan: PlanSpec, candidate: Candidate, raw: Record<string, unknown>, rateRps: number): RunConfig {
  try {
    return loadRunConfigFromObject(raw, plan.file);
  } catch (err) {
    throw err instanceof ConfigError ? planError(plan, candidate, rateRps, err) : err;
  }
}

/** Paths of the checks that depend on a candidate's GPUs and knobs: failing only those, the candidate cannot run, the plan is fine. */
function isCandidateLimit(plan: PlanSpec, candidate: Candidate, path: string): boolean {
  return candidate.roles.some((name) => path === `${rolePath(name)}.kv_cache.capacity`) || searchFieldOf(candidate, path) !== null;
}

interface Prepared {
  state: CandidateState;
  extras: RowExtras;
}

/**
 * Each candidate's state before the search. A candidate does not fit when its GPUs cannot hold
 * the model's weights and activations with room for a KV cache, when its KV cache is smaller than
 * the longest request of a synthetic source, or when vLLM would refuse to start with its knobs
 * (max_batched_tokens below max_sequences, a KV cache below context_length; the loader's reason).
 * Any other error of a candidate's config is the plan file's, and is thrown before anything runs.
 */
function prepareCandidates(
  plan: PlanSpec,
  candidates: readonly Candidate[],
  baseDir: string,
): { prepared: Prepared[]; traceRows: number; meanOutputTokens: number | null } {
  const prepared: Prepared[] = [];
  let traceRows = Infinity;
  let meanOutputTokens: number | null = null;
  for (const candidate of candidates) {
    const base: CandidateState = { candidate, status: 'searching', reason: null, search: null, tested: [], dominatedBy: null };
    const noFit = (reason: string, extras: RowExtras) => prepared.push({ state: { ...base, status: 'does_not_fit', reason }, extras });
    const raw = candidateRunConfig(plan, candidate, 1, Infinity);
    let config: RunConfig;
    try {
      config = parseRunConfig(raw, plan.file);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      if (!err.issues.every((issue) => isCandidateLimit(plan, candidate, issue.path))) throw planError(plan, candidate, 1, err);
      noFit(err.issues.map((issue) => issue.reason).join('; '), {
        weightsGibPerGpu: null,
        kvTokensPerRank: null,
        pools: null,
        config: null,
      });
      continue;
    }
    const pools: PoolRow[] = candidate.roles.map((name) => {
      const role = roleOf(config.engine, name);
      const deployment = deploymentSummary(config.engine, role, kvBlocksPerRank(config.engine, role));
      return {
        role: name,
        workers: role.parallelism.replicas,
        tensor: role.parallelism.tensor,
        attention_data: role.parallelism.attention_data,
        gpus: deployment.gpus,
        weights_gib_per_gpu: deployment.weights_gib_per_gpu,
        kv_cache_tokens_per_rank: deployment.kv_cache_tokens_per_rank,
      };
    });
    const extras: RowExtras = { ...poolExtremes(pools), pools, config: null };
    // An aggregated or decode rank holds a whole request; a prefill rank its prompt.
    const longest = longestRequestTokens(config);
    const longestPrompt = largestSyntheticPromptTokens(config.traffic.source);
    const short = pools.find((pool) => {
      const need = pool.role === 'prefill' ? longestPrompt : longest;
      return need !== null && pool.kv_cache_tokens_per_rank !== null && pool.kv_cache_tokens_per_rank < need;
    });
    if (short !== undefined) {
      const whose = short.role === 'aggregated' ? 'the KV cache' : `the ${short.role} pool's KV cache`;
      const what = short.role === 'prefill' ? `the longest prompt (${longestPrompt} tokens)` : `the longest request (${longest} tokens)`;
      noFit(
        `${whose} holds ${short.kv_cache_tokens_per_rank} tokens per rank, fewer than ${what}; use more GPUs per ${short.role === 'aggregated' ? 'replica' : 'worker'} or a lower precision`,
        extras,
      );
      continue;
    }
    const startup = checkEngineStartup(config);
    if (startup.length > 0) {
      if (!startup.every((v) => isCandidateLimit(plan, candidate, v.path))) {
        throw planError(plan, candidate, 1, new ConfigError(startup.map((v) => makeConfigIssue(plan.file, v.path, v.reason))));
      }
      noFit(startup.map((v) => v.reason).join('; '), extras);
      continue;
    }
    // The resource checks (request count, memory) at the first rate; a trace is read here.
    validate(plan, candidate, raw, 1);
    let run: PreparedRun;
    try {
      run = prepareRun(config, { baseDir, label: plan.file });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // Every row of the trace is longer than this candidate's KV cache (context_length is not set: the pool is the limit).
      if (err.path === 'engine.context_length' && config.engine.context_length === 'max') {
        noFit(err.reason, extras);
        continue;
      }
      throw planError(plan, candidate, 1, err);
    }
    if (run.run.source.kind === 'trace') traceRows = run.run.source.trace.rows;
    // The traffic is every candidate's: its mean output is read once.
    meanOutputTokens ??= meanLengths(run.run).outputTokens;
    const startRps = plan.rates.startRps ?? estimateMaxRps(run.run, plan.slos);
    prepared.push({ state: { ...base, search: new RateSearch({ startRps, tolerance: plan.rates.tolerance }) }, extras });
  }
  return { prepared, traceRows, meanOutputTokens };
}

/** The run config written for a candidate's max rate, with a trace path made relative to the configs folder. */
function configFileText(config: RunConfig, baseDir: string, configsDir: string): string {
  const copy = structuredClone(config);
  const source = copy.traffic.source;
  if (source.type === 'trace' && !isAbsolute(source.path)) source.path = relative(configsDir, resolve(baseDir, source.path));
  return yamlStringify(copy);
}

/** Files of a plan folder written through a temporary file (stale ones are removed when a run starts). */
const REWRITTEN_FILES = [PLAN_FILES.json, PLAN_FILES.csv, PLAN_FILES.html, POINTS_FILE, TIMINGS_FILE];

/** Pool threads: one per core, or `poolThreads`, at most one per core (a replay keeps a core busy; more threads only cost memory). */
function poolThreadsFor(requested: number | undefined, note: (line: string) => void): number {
  const cores = availableParallelism();
  if (requested === undefined) return cores;
  if (requested > cores) {
    note(`--workers ${requested}: capped at ${cores}, the cores of this machine`);
    return cores;
  }
  return requested;
}

/** A replay that could not be set up (its config is refused at this rate): an outcome, not an exception. */
const INVALID_PREFIX = 'invalid:';

export async function runPlan(options: RunPlanOptions): Promise<RunPlanResult> {
  const started = performance.now();
  const note = options.note ?? ((line: string) => process.stderr.write(`${line}\n`));
  // Bad input is found before anything is written: the output folder, the plan file, the catalog,
  // every candidate's run config at its first rate, and the log of an earlier run.
  if (options.outDir !== undefined) checkOutputDir(options.outDir);
  const plan = readPlanFile(options.planFile);
  checkSlos(plan);
  checkCatalog(plan);
  const baseDir = dirname(resolve(options.planFile));
  const count = countCandidates(plan);
  if (count === 0) {
    throw new ConfigError(plan.file, 'search', 'has no candidate: every replica count needs more GPUs than search.gpu_budget');
  }
  if (count > MAX_PLAN_CANDIDATES) {
    throw new ConfigError(
      plan.file,
      'search',
      `has ${formatCount(count)} candidates (GPUs x layouts x tensor x attention_data x replicas x max_batched_tokens x max_sequences), more than the limit of ` +
        `${formatCount(MAX_PLAN_CANDIDATES)}; shorten a list, or lower search.gpu_budget or list search.replicas`,
    );
  }
  const candidates = enumerateCandidates(plan);
  const { prepared, traceRows, meanOutputTokens } = prepareCandidates(plan, candidates, baseDir);
  const states = prepared.map((p) => p.state);
  const extras = prepared.map((p) => p.extras);

  const outDir = resolve(options.outDir ?? defaultPlanOutDir(plan.name));
  checkOutputDir(outDir);
  const pointsPath = join(outDir, POINTS_FILE);
  const timingsPath = join(outDir, TIMINGS_FILE);
  // A damaged log is refused before the folder is touched (its results stay as they are).
  if (existsSync(pointsPath)) readPoints(pointsPath);
  const created = makeOutputDir(outDir);
  let releaseLock: (() => void) | undefined;
  try {
    releaseLock = takeLock(outDir, note, 'plan');
    const removed = removeStaleTemporaries(outDir, REWRITTEN_FILES);
    if (removed.length > 0) note(`${outDir}: removed ${removed.length} temporary file(s) an interrupted write left: ${removed.join(', ')}`);
    const { records, tornBytes } = readPoints(pointsPath, true);
    if (tornBytes > 0) note(`${pointsPath}: dropped an incomplete last line (${tornBytes} bytes) left by an interrupted write`);
    const byId = latestById(records);
    // Results of an earlier run go next: a plan stopped half way leaves only its log.
    for (const file of [PLAN_FILES.json, PLAN_FILES.csv, PLAN_FILES.html]) rmSync(join(outDir, file), { force: true });
    rmSync(join(outDir, PLAN_FILES.configs), { recursive: true, force: true });

    const searching = states.filter((s) => s.status === 'searching').length;
    const threads = Math.max(1, Math.min(poolThreadsFor(options.poolThreads, note), searching));
    const executor: ReplayExecutor =
      options.inProcess === true || searching === 0
        ? new InProcessExecutor(baseDir)
        : new PoolExecutor({ poolThreads: threads, baseDir, taskFilename: options.taskFilename });
    const onStop = () => executor.stop();
    const aborted = () => options.stopSignal?.aborted === true;
    options.stopSignal?.addEventListener('abort', onStop);

    const jobs = new Map<string, { config: RunConfig; overrides: Overrides }>();
    /** Replays whose config is refused at their rate (a request count past the limits at a high rate): why. */
    const invalid = new Map<string, string>();
    let replays = 0;
    let reused = 0;
    let complete = false;
    try {
      complete = await searchCandidates(states, plan.slos, {
        jobId(candidate, rateRps) {
          let config: RunConfig;
          try {
            config = validate(plan, candidate, candidateRunConfig(plan, candidate, rateRps, traceRows), rateRps);
          } catch (err) {
            if (!(err instanceof ConfigError)) throw err;
            const id = `${INVALID_PREFIX}${candidate.id}@${rateRps}`;
            invalid.set(id, err.issues.map((issue) => issue.message).join('; '));
            return id;
          }
          const id = pointId(config);
          const overrides: Overrides = {
            'engine.hardware': candidate.hardware,
            ...Object.fromEntries(candidate.overrides),
            'traffic.load.requests_per_second': rateRps,
          };
          jobs.set(id, { config, overrides });
          return id;
        },
        async runRound(round) {
          if (aborted()) return null;
          const outcomes = new Map<string, RoundOutcome>();
          const toRun: ReplayJob[] = [];
          for (const job of round) {
            replays++;
            const why = invalid.get(job.id);
            const record = byId.get(job.id);
            if (why !== undefined) {
              outcomes.set(job.id, { status: 'failed', error: why });
            } else if (record?.status === 'ok' && record.summary !== null) {
              reused++;
              outcomes.set(job.id, { status: 'ok', summary: record.summary });
            } else {
              toRun.push({ id: job.id, config: (jobs.get(job.id) as { config: RunConfig }).config });
            }
          }
          await executor.run(toRun, (job, outcome) => {
            const overrides = (jobs.get(job.id) as { overrides: Overrides }).overrides;
            const record: PointRecord =
              outcome.status === 'ok'
                ? { id: job.id, overrides, status: 'ok', summary: outcome.summary, error: null }
                : { id: job.id, overrides, status: 'failed', summary: null, error: outcome.error };
            appendPoint(pointsPath, record);
            appendTiming(timingsPath, {
              id: job.id,
              status: record.status,
              wall_ms: Math.round(outcome.wallMs * 1000) / 1000,
              simulator: outcome.status === 'ok' ? outcome.wall : null,
              ...(outcome.status === 'ok' && outcome.primed === true ? { primed: true as const } : {}),
            });
            records.push(record);
            byId.set(job.id, record);
            outcomes.set(job.id, outcome.status === 'ok' ? { status: 'ok', summary: outcome.summary } : outcome);
          });
          return aborted() ? null : outcomes;
        },
        onRound(round, all, count) {
          const by = (status: string) => all.filter((s) => s.status === status).length;
          options.progress?.(
            `round ${round + 1}: ${count} replays; ${by('searching')} candidates searching, ${by('searched')} searched, ${by('pruned')} pruned` +
              ` [${((performance.now() - started) / 1000).toFixed(1)} s]`,
          );
        },
      });
    } finally {
      options.stopSignal?.removeEventListener('abort', onStop);
      await executor.close();
    }

    // The log in search order (candidates in plan order, each in the order it tested its rates).
    const outline = {
      name: plan.name,
      axes: [],
      log2Axes: [],
      points: states.flatMap((s) =>
        s.tested.filter((t) => !t.id.startsWith(INVALID_PREFIX)).map((t) => ({ index: 0, id: t.id, overrides: {} })),
      ),
    };
    compactPoints(pointsPath, outline, records);

    const counts: PlanCounts = {
      candidates: states.length,
      does_not_fit: states.filter((s) => s.status === 'does_not_fit').length,
      searched: states.filter((s) => s.status === 'searched').length,
      pruned: states.filter((s) => s.status === 'pruned').length,
      no_rate: states.filter((s) => s.status === 'no_rate').length,
      failed: states.filter((s) => s.status === 'failed').length,
      replays,
    };
    const logged = [...jobs.keys()].filter((id) => byId.get(id)?.status === 'ok').length;
    if (!complete) {
      return {
        name: plan.name,
        outDir,
        interrupted: true,
        rows: [],
        ranked: [],
        best: null,
        counts,
        reused,
        logged,
        json: null,
        top: '',
        frontiers: '',
        why: '',
        wallMs: performance.now() - started,
      };
    }

    // A run config per searched candidate, at its max rate: the replay that met the SLOs there.
    // The results (configs/, plan.json, plan.csv, report.html) appear together or not at all.
    const files: Array<[string, string]> = [];
    const configsDir = join(outDir, PLAN_FILES.configs);
    for (let i = 0; i < states.length; i++) {
      const state = states[i];
      const lo = state.search?.lo ?? 0;
      if (state.status !== 'searched' || lo <= 0) continue;
      const at = state.tested.find((t) => t.rateRps === lo);
      if (at === undefined) continue;
      const file = `${state.candidate.id}.yaml`;
      files.push([join(configsDir, file), configFileText(at.summary.config as RunConfig, baseDir, configsDir)]);
      extras[i] = {
        ...extras[i],
        config: `${PLAN_FILES.configs}/${file}`,
        ...(at.summary.accuracy ? { accuracy: at.summary.accuracy } : {}),
      };
    }
    const rows = candidateRows(plan, states, extras, meanOutputTokens);
    const ranked = rankRows(rows, plan.targetRps);
    const best = bestOf(ranked, plan.targetRps);
    const json = planJson(plan, rows, ranked, best, counts);
    const top = topTable(plan, ranked);
    const frontiers = frontierTable(json.frontiers);
    const why = whyBest(plan, rows, ranked, best);
    files.push([join(outDir, PLAN_FILES.json), planJsonText(json)], [join(outDir, PLAN_FILES.csv), planCsv(plan, rows)]);
    if (options.report !== false) {
      try {
        const charts = await renderPlanCharts(plan, states, json, meanOutputTokens);
        files.push([join(outDir, PLAN_FILES.html), formatPlanHtml(json, charts, top, why)]);
      } catch (err) {
        note(`report.html not written: ${(err as Error).message}`);
      }
    }
    writeOutputFiles(files);
    return {
      name: plan.name,
      outDir,
      interrupted: false,
      rows,
      ranked,
      best,
      counts,
      reused,
      logged,
      json,
      top,
      frontiers,
      why,
      wallMs: performance.now() - started,
    };
  } catch (err) {
    releaseLock?.();
    releaseLock = undefined;
    // A folder this run created and could not put a file in (a full disk) is removed again.
    if (created !== undefined) removeEmptyFolders(created);
    throw err;
  } finally {
    releaseLock?.();
  }
}
