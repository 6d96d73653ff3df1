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
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import { findHardware, findModel } from '../catalog/load.js';
import { ConfigError, makeConfigIssue } from '../config/errors.js';
import { loadRunConfigFromObject } from '../config/load.js';
import type { RunConfig } from '../config/types.js';
import { sessionTurnPromptTokens } from '../core/run.js';
import type { ResolvedRun } from '../core/run.js';
import { prepareRun } from '../replay.js';
import { pointId, type Overrides } from '../sweep/plan.js';
import {
  POINTS_FILE,
  TIMINGS_FILE,
  appendPoint,
  appendTiming,
  compactPoints,
  latestById,
  readPoints,
  writeFileAtomic,
  type PointRecord,
} from '../sweep/results.js';
import { takeLock } from '../sweep/run-sweep.js';
import { candidateRunConfig, enumerateCandidates, type Candidate } from './candidates.js';
import { estimateMaxRps } from './estimate.js';
import { InProcessExecutor, PoolExecutor, type ReplayExecutor, type ReplayJob } from './executor.js';
import { readPlanFile, type PlanSpec } from './plan-file.js';
import { PLAN_FILES, planCsv, planJson, planJsonText, topTable, whyBest, type PlanCounts, type PlanJson } from './plan-output.js';
import { formatPlanHtml, renderPlanCharts } from './plan-report.js';
import { bestOf, candidateRows, rankRows, type BestDeployment, type CandidateRow, type RowExtras } from './plan-result.js';
import { RateSearch } from './rate-search.js';
import { searchCandidates, type CandidateState, type RoundOutcome } from './search.js';

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
function longestRequestTokens(run: ResolvedRun): number | null {
  const source = run.source;
  if (source.kind === 'synthetic') return source.inputTokens + source.outputTokens;
  if (source.kind === 'session')
    return sessionTurnPromptTokens(source.newInputTokens, source.outputTokens, source.turns) + source.outputTokens;
  return null;
}

const CAPACITY_PATH = 'engine.workers.aggregated.kv_cache.capacity';

/** A run config of the plan, validated; a config error names the plan file (and the candidate when it is the candidate's). */
function validate(plan: PlanSpec, candidate: Candidate, raw: Record<string, unknown>): RunConfig {
  try {
    return loadRunConfigFromObject(raw, plan.file);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Keys under engine.workers are where candidates differ: say which one it was.
    const which = (path: string) => (path.startsWith('engine.workers') ? ` (candidate ${candidate.id})` : '');
    throw new ConfigError(err.issues.map((issue) => makeConfigIssue(plan.file, issue.path, `${issue.reason}${which(issue.path)}`)));
  }
}

interface Prepared {
  state: CandidateState;
  extras: RowExtras;
}

/**
 * Each candidate's state before the search: does not fit (the loader's reason: weights and
 * activations against usable memory, or a KV cache smaller than the longest request), or
 * searching from its estimated rate.
 */
function prepareCandidates(plan: PlanSpec, candidates: readonly Candidate[], baseDir: string): { prepared: Prepared[]; traceRows: number } {
  const prepared: Prepared[] = [];
  let traceRows = Infinity;
  for (const candidate of candidates) {
    const base: CandidateState = { candidate, status: 'searching', reason: null, search: null, tested: [], dominatedBy: null };
    const raw = candidateRunConfig(plan, candidate, 1, Infinity);
    let config: RunConfig;
    try {
      config = loadRunConfigFromObject(raw, plan.file);
    } catch (err) {
      const fit = err instanceof ConfigError ? err.issues.find((issue) => issue.path === CAPACITY_PATH) : undefined;
      if (fit === undefined) validate(plan, candidate, raw);
      prepared.push({
        state: { ...base, status: 'does_not_fit', reason: fit?.reason ?? null },
        extras: { weightsGibPerGpu: null, kvTokensPerRank: null, config: null },
      });
      continue;
    }
    const run = prepareRun(config, { baseDir });
    if (run.run.source.kind === 'trace') traceRows = run.run.source.trace.rows;
    const extras: RowExtras = {
      weightsGibPerGpu: run.deployment.weights_gib_per_gpu,
      kvTokensPerRank: run.deployment.kv_cache_tokens_per_rank,
      config: null,
    };
    const longest = longestRequestTokens(run.run);
    const kvTokens = run.deployment.kv_cache_tokens_per_rank;
    if (longest !== null && kvTokens !== null && kvTokens < longest) {
      prepared.push({
        state: {
          ...base,
          status: 'does_not_fit',
          reason: `the KV cache holds ${kvTokens} tokens per rank, fewer than the longest request (${longest} tokens); use more GPUs per replica or a lower precision`,
        },
        extras,
      });
      continue;
    }
    const startRps = plan.rates.startRps ?? estimateMaxRps(run.run, plan.slos);
    prepared.push({ state: { ...base, search: new RateSearch({ startRps, tolerance: plan.rates.tolerance }) }, extras });
  }
  return { prepared, traceRows };
}

/** The run config written for a candidate's max rate, with a trace path made relative to the configs folder. */
function configFileText(config: RunConfig, baseDir: string, configsDir: string): string {
  const copy = structuredClone(config);
  const source = copy.traffic.source;
  if (source.type === 'trace' && !isAbsolute(source.path)) source.path = relative(configsDir, resolve(baseDir, source.path));
  return yamlStringify(copy);
}

export async function runPlan(options: RunPlanOptions): Promise<RunPlanResult> {
  const started = performance.now();
  const note = options.note ?? ((line: string) => process.stderr.write(`${line}\n`));
  const plan = readPlanFile(options.planFile);
  checkSlos(plan);
  checkCatalog(plan);
  const baseDir = dirname(resolve(options.planFile));
  const candidates = enumerateCandidates(plan);
  if (candidates.length === 0) {
    throw new ConfigError(plan.file, 'search', 'has no candidate: every replica count needs more GPUs than search.gpu_budget');
  }
  const { prepared, traceRows } = prepareCandidates(plan, candidates, baseDir);
  const states = prepared.map((p) => p.state);
  const extras = prepared.map((p) => p.extras);

  const outDir = resolve(options.outDir ?? defaultPlanOutDir(plan.name));
  mkdirSync(outDir, { recursive: true });
  const releaseLock = takeLock(outDir);
  try {
    // Results of an earlier run go first: a plan stopped half way leaves only its log.
    for (const file of [PLAN_FILES.json, PLAN_FILES.csv, PLAN_FILES.html]) rmSync(join(outDir, file), { force: true });
    rmSync(join(outDir, PLAN_FILES.configs), { recursive: true, force: true });
    const pointsPath = join(outDir, POINTS_FILE);
    const timingsPath = join(outDir, TIMINGS_FILE);
    const { records, tornBytes } = readPoints(pointsPath, true);
    if (tornBytes > 0) note(`${pointsPath}: dropped an incomplete last line (${tornBytes} bytes) left by an interrupted write`);
    const byId = latestById(records);

    const searching = states.filter((s) => s.status === 'searching').length;
    const threads = Math.max(1, Math.min(options.poolThreads ?? availableParallelism(), searching));
    const executor: ReplayExecutor =
      options.inProcess === true || searching === 0
        ? new InProcessExecutor(baseDir)
        : new PoolExecutor({ poolThreads: threads, baseDir, taskFilename: options.taskFilename });
    const onStop = () => executor.stop();
    const aborted = () => options.stopSignal?.aborted === true;
    options.stopSignal?.addEventListener('abort', onStop);

    const jobs = new Map<string, { config: RunConfig; overrides: Overrides }>();
    let replays = 0;
    let reused = 0;
    let complete = false;
    try {
      complete = await searchCandidates(states, plan.slos, {
        jobId(candidate, rateRps) {
          const config = validate(plan, candidate, candidateRunConfig(plan, candidate, rateRps, traceRows));
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
            const record = byId.get(job.id);
            if (record?.status === 'ok' && record.summary !== null) {
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
      points: states.flatMap((s) => s.tested.map((t) => ({ index: 0, id: t.id, overrides: {} }))),
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
        why: '',
        wallMs: performance.now() - started,
      };
    }

    // A run config per searched candidate, at its max rate: the replay that met the SLOs there.
    const configsDir = join(outDir, PLAN_FILES.configs);
    for (let i = 0; i < states.length; i++) {
      const state = states[i];
      const lo = state.search?.lo ?? 0;
      if (state.status !== 'searched' || lo <= 0) continue;
      const at = state.tested.find((t) => t.rateRps === lo);
      if (at === undefined) continue;
      mkdirSync(configsDir, { recursive: true });
      const file = `${state.candidate.id}.yaml`;
      writeFileAtomic(join(configsDir, file), configFileText(at.summary.config as RunConfig, baseDir, configsDir));
      extras[i] = { ...extras[i], config: `${PLAN_FILES.configs}/${file}` };
    }
    const rows = candidateRows(plan, states, extras);
    const ranked = rankRows(rows, plan.targetRps);
    const best = bestOf(ranked, plan.targetRps);
    const json = planJson(plan, rows, ranked, best, counts);
    const top = topTable(plan, ranked);
    const why = whyBest(plan, rows, ranked, best);
    writeFileAtomic(join(outDir, PLAN_FILES.json), planJsonText(json));
    writeFileAtomic(join(outDir, PLAN_FILES.csv), planCsv(plan, rows));
    if (options.report !== false) {
      try {
        const charts = await renderPlanCharts(plan, states, json);
        writeFileAtomic(join(outDir, PLAN_FILES.html), formatPlanHtml(json, charts, top, why));
      } catch (err) {
        note(`report.html not written: ${(err as Error).message}`);
      }
    }
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
      why,
      wallMs: performance.now() - started,
    };
  } finally {
    releaseLock();
  }
}
