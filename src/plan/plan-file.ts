/**
 * The plan file (docs/planning.md): a model, candidate GPUs with their prices, the traffic, the
 * SLOs, the search space and how each candidate's rate is searched. `parsePlanFile` checks the
 * shape and every field; errors are `ConfigError`s naming the plan file and the dotted field (every
 * field error at once, then the rules between fields). Nothing here looks at the catalog or builds
 * a run config (candidates.ts does).
 */
import { basename, extname } from 'node:path';
import * as z from 'zod';
import { ConfigError, formatValue, makeConfigIssue, type ConfigIssue } from '../config/errors.js';
import {
  MAX_ATTENTION_DATA,
  MAX_BATCHED_TOKENS,
  MAX_REPLICAS,
  MAX_REQUEST_RATE,
  MAX_REQUESTS,
  MAX_SEED,
  MAX_SEQUENCES,
  MAX_TENSOR,
  MIN_REQUEST_RATE,
  formatCount,
} from '../config/limits.js';
import { readYamlFile } from '../config/yaml.js';
import { DISAGGREGATED_ROLES, WORKER_ROLES, rolePath } from '../config/roles.js';

/** The metrics an SLO may bound, with the side the bound is on and the unit of the limit. */
export const SLO_METRICS = {
  time_to_first_token: { bound: 'max', unit: 'ms' },
  inter_token_latency: { bound: 'max', unit: 'ms' },
  request_latency: { bound: 'max', unit: 'ms' },
  output_token_throughput_per_user: { bound: 'min', unit: 'tokens/s' },
} as const;
export type SloMetric = keyof typeof SLO_METRICS;

/** Statistics an SLO may name (AIPerf's, as in summary.json). */
export const SLO_STATS = ['avg', 'p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99'] as const;
export type SloStat = (typeof SLO_STATS)[number];

/** One bound: `metric.stat <= limit` (or `>=` for a per-user throughput). */
export interface Slo {
  metric: SloMetric;
  stat: SloStat;
  limit: number;
  bound: 'max' | 'min';
  unit: string;
}

/** Kinds of worker layout a candidate may have (`search.workers`). */
export const WORKER_KINDS = ['aggregated', 'disaggregated'] as const;
export type WorkerKind = (typeof WORKER_KINDS)[number];

/** One prefill:decode ratio of a disaggregated entry: `prefill` prefill workers for `decode` decode workers. */
export interface PrefillDecodeRatio {
  prefill: number;
  decode: number;
}

/**
 * One entry of `search.workers`: aggregated workers, or prefill and decode pools split by the
 * entry's ratios, each pool's tensor-parallel sizes from its own list (the search's `tensor` when
 * the entry has none). `field` is the entry's dotted path (`search.workers.1`), for messages.
 */
export type WorkerLayout =
  | { kind: 'aggregated'; field: string }
  | {
      kind: 'disaggregated';
      field: string;
      ratios: PrefillDecodeRatio[];
      prefillTensor: number[];
      decodeTensor: number[];
      /** The plan-file fields the tensor lists come from (the entry's own, or `search.tensor`). */
      prefillTensorField: string;
      decodeTensorField: string;
    };

export interface SearchSpace {
  workers: WorkerLayout[];
  tensor: number[];
  attentionData: number[];
  /** Replica counts to try; with a GPU budget alone, 1 up to what the budget holds. */
  replicas: number[] | null;
  gpuBudget: number | null;
  maxBatchedTokens: number[];
  maxSequences: number[];
}

export interface RateSettings {
  /** Stop bisecting when hi / lo <= 1 + tolerance. */
  tolerance: number;
  /** Each replay sends requests for this long at the tested rate (at least `minRequests`). */
  durationS: number;
  minRequests: number;
  /** Share of each replay's first requests left out of every metric. */
  warmupShare: number;
  /** Seed of the Poisson arrivals (the same at every rate and for every candidate). */
  seed: number;
  /** First rate tried; by default an estimate from the pass time (estimate.ts). */
  startRps: number | null;
}

export interface PlanSpec {
  /** The plan file as the user named it (messages). */
  file: string;
  name: string;
  model: string;
  /** Candidate GPUs, in file order, with the user's price per GPU hour. */
  hardware: Array<{ name: string; pricePerGpuHour: number }>;
  /** Run-config `engine` keys every candidate shares (precision, backend, detokenization, ...). */
  engine: Record<string, unknown>;
  /** A run config's `traffic.source`, as written. */
  source: Record<string, unknown>;
  /** Requests per second to serve, or null for "as much as possible". */
  targetRps: number | null;
  slos: Slo[];
  search: SearchSpace;
  rates: RateSettings;
}

type RawIssue = z.core.$ZodRawIssue;

/** GPUs of one candidate at most (`search.gpu_budget`): a replica of every GPU of a large cluster. */
export const MAX_GPU_BUDGET = MAX_REPLICAS;
/**
 * Seconds of arrivals of one replay at most (`rates.duration_s`): a day. Every tested rate of every
 * candidate is a replay that long, so a plan of longer replays would run for days.
 */
export const MAX_PLAN_DURATION_S = 86_400;
const DURATION_RULE = `must be a positive number of seconds, at most ${formatCount(MAX_PLAN_DURATION_S)}`;

function says(rule: string) {
  return (issue: RawIssue): string => (issue.input === undefined ? `is required (${rule})` : `${rule}, got ${formatValue(issue.input)}`);
}

const POSITIVE = 'must be a positive finite number';
/** An integer in [1, max]; the limits are the run config's (config/limits.ts), so every candidate's config can hold the value. */
const positiveInt = (max: number) => {
  const rule = `must be an integer from 1 to ${formatCount(max)}`;
  return z
    .int({ error: says(rule) })
    .min(1, { error: says(rule) })
    .max(max, { error: says(rule) });
};
const positive = () => z.number({ error: says(POSITIVE) }).gt(0, { error: says(POSITIVE) });
/** A request rate within the run config's limits. */
const rate = (rule: string) =>
  z
    .number({ error: says(rule) })
    .min(MIN_REQUEST_RATE, { error: says(rule) })
    .max(MAX_REQUEST_RATE, { error: says(rule) });
const RATE_RULE = `must be a number of requests per second from ${MIN_REQUEST_RATE} to ${formatCount(MAX_REQUEST_RATE)}`;
const intList = (max: number) =>
  z
    .array(positiveInt(max), { error: says(`must be a list of integers from 1 to ${formatCount(max)}`) })
    .min(1, { error: 'must list at least one value' })
    .refine((values) => new Set(values).size === values.length, { error: 'lists a value twice' });

function strict<S extends z.core.$ZodLooseShape>(shape: S) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue: RawIssue) =>
      issue.code === 'unrecognized_keys' ? `unknown key (allowed: ${allowed})` : says('must be a mapping')(issue),
  });
}

const mapping = () => z.record(z.string(), z.unknown(), { error: says('must be a mapping') });

const sloBoundsSchema = strict(
  Object.fromEntries(SLO_STATS.map((stat) => [stat, positive().optional()])) as { [K in SloStat]: z.ZodOptional<z.ZodNumber> },
).refine((bounds) => Object.values(bounds).some((v) => v !== undefined), { error: `must bound at least one of ${SLO_STATS.join(', ')}` });

const RATIO_RULE = 'must be a prefill:decode ratio of worker counts, like "1:2" (each from 1 to 1,024)';
/** Workers of one pool in one ratio at most: a ratio is a small proportion, its multiples fill the budget. */
export const MAX_RATIO_WORKERS = 1024;
const ratioSchema = z.string({ error: says(RATIO_RULE) }).refine(
  (text) => {
    const match = /^([0-9]+):([0-9]+)$/.exec(text.trim());
    if (match === null) return false;
    const [p, d] = [Number(match[1]), Number(match[2])];
    return p >= 1 && d >= 1 && p <= MAX_RATIO_WORKERS && d <= MAX_RATIO_WORKERS;
  },
  { error: says(RATIO_RULE) },
);

const disaggregatedSchema = strict({
  ratios: z
    .array(ratioSchema, { error: says('must be a list of prefill:decode ratios, like ["1:1", "1:2"]') })
    .min(1, { error: 'must list at least one prefill:decode ratio' }),
  prefill_tensor: intList(MAX_TENSOR).optional(),
  decode_tensor: intList(MAX_TENSOR).optional(),
});

const LAYOUT_RULE = 'must be aggregated or {disaggregated: {ratios: [...]}}';
/** An entry of `search.workers`, checked by `parseLayouts` (its messages name the entry's own fields). */
const workerKindSchema = z.union([z.string(), mapping()], { error: says(LAYOUT_RULE) });

const planSchema = strict({
  name: z
    .string({ error: says('must be a string') })
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { error: 'must be letters, digits, ".", "_" or "-"' })
    .optional(),
  model: z.string({ error: says('must be a catalog model name (servesim catalog models)') }).min(1),
  hardware: z
    .record(z.string(), strict({ price_per_gpu_hour: positive().describe('Price of one GPU for an hour, in your currency.') }), {
      error: says('must map catalog GPU names to {price_per_gpu_hour}'),
    })
    .refine((entries) => Object.keys(entries).length > 0, { error: 'must name at least one GPU' }),
  engine: mapping().optional(),
  traffic: strict({
    source: mapping().optional(),
    target_rps: z.union([rate(`${RATE_RULE}, or max`), z.literal('max')], { error: says(`${RATE_RULE}, or max`) }).optional(),
  }),
  slo: strict(
    Object.fromEntries(Object.keys(SLO_METRICS).map((metric) => [metric, sloBoundsSchema.optional()])) as {
      [K in SloMetric]: z.ZodOptional<typeof sloBoundsSchema>;
    },
  ).refine((slo) => Object.values(slo).some((v) => v !== undefined), {
    error: `must set at least one SLO (${Object.keys(SLO_METRICS).join(', ')})`,
  }),
  search: strict({
    workers: z
      .array(workerKindSchema, { error: says('must be a list') })
      .min(1, { error: 'must list at least one value' })
      .optional(),
    tensor: intList(MAX_TENSOR).optional(),
    attention_data: intList(MAX_ATTENTION_DATA).optional(),
    replicas: intList(MAX_REPLICAS).optional(),
    gpu_budget: positiveInt(MAX_GPU_BUDGET).optional(),
    max_batched_tokens: intList(MAX_BATCHED_TOKENS).optional(),
    max_sequences: intList(MAX_SEQUENCES).optional(),
  }).prefault({}),
  rates: strict({
    tolerance: z
      .number({ error: says('must be a number in (0, 1]') })
      .gt(0, { error: says('must be a number in (0, 1]') })
      .max(1, { error: says('must be a number in (0, 1]') })
      .default(0.05),
    duration_s: z
      .number({ error: says(DURATION_RULE) })
      .gt(0, { error: says(DURATION_RULE) })
      .max(MAX_PLAN_DURATION_S, { error: says(DURATION_RULE) })
      .default(300),
    min_requests: positiveInt(MAX_REQUESTS).default(1000),
    warmup_share: z
      .number({ error: says('must be a number in [0, 0.5]') })
      .min(0, { error: says('must be a number in [0, 0.5]') })
      .max(0.5, { error: says('must be a number in [0, 0.5]') })
      .default(0.1),
    seed: z
      .int({ error: says(`must be an integer from 0 to ${formatCount(MAX_SEED)}`) })
      .min(0, { error: says(`must be an integer from 0 to ${formatCount(MAX_SEED)}`) })
      .max(MAX_SEED, { error: says(`must be an integer from 0 to ${formatCount(MAX_SEED)}`) })
      .default(42),
    start_rps: rate(RATE_RULE).optional(),
  }).prefault({}),
});

/** Run-config engine keys the plan sets itself, with the plan key that sets each. */
const ENGINE_KEYS_SET_BY_PLAN: Array<[string[], string]> = [
  [['model'], 'model'],
  [['hardware'], 'hardware'],
  [['workers', 'aggregated', 'parallelism', 'tensor'], 'search.tensor'],
  [['workers', 'aggregated', 'parallelism', 'attention_data'], 'search.attention_data'],
  [['workers', 'aggregated', 'parallelism', 'replicas'], 'search.replicas or search.gpu_budget'],
  [['workers', 'aggregated', 'scheduler', 'max_batched_tokens'], 'search.max_batched_tokens'],
  [['workers', 'aggregated', 'scheduler', 'max_sequences'], 'search.max_sequences'],
  ...DISAGGREGATED_ROLES.flatMap((role): Array<[string[], string]> => [
    [['workers', role, 'parallelism', 'tensor'], `search.workers (disaggregated ${role}_tensor) or search.tensor`],
    [['workers', role, 'parallelism', 'attention_data'], 'search.attention_data'],
    [['workers', role, 'parallelism', 'replicas'], 'search.workers (disaggregated ratios)'],
    [['workers', role, 'scheduler', 'max_batched_tokens'], 'search.max_batched_tokens'],
    [['workers', role, 'scheduler', 'max_sequences'], 'search.max_sequences'],
  ]),
];

function lookup(raw: unknown, path: string[]): unknown {
  let node = raw;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function fromZod(file: string, issues: readonly z.core.$ZodIssue[], prefix?: string): ConfigError {
  const found = issues.flatMap((issue) => {
    const path = [...(prefix === undefined ? [] : [prefix]), ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => makeConfigIssue(file, [...path, key].join('.'), issue.message));
    return [makeConfigIssue(file, path.join('.'), issue.message)];
  });
  found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return new ConfigError(found);
}

/** Checks a plan file already read into memory; `file` labels the errors. */
export function parsePlanFile(raw: unknown, file: string): PlanSpec {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, '', 'a plan file is a mapping with model, hardware, traffic, slo and search (docs/planning.md)');
  }
  const parsed = planSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw fromZod(file, parsed.error.issues);
  const plan = parsed.data;

  const issues: ConfigIssue[] = [];
  const engine = plan.engine ?? {};
  for (const [path, by] of ENGINE_KEYS_SET_BY_PLAN) {
    if (lookup(engine, path) !== undefined) {
      issues.push(makeConfigIssue(file, ['engine', ...path].join('.'), `is set by the plan (${by}); remove it here`));
    }
  }
  for (const name of WORKER_ROLES) {
    const role = lookup(engine, ['workers', name]) as Record<string, unknown> | undefined;
    const timingType = lookup(role, ['timing', 'type']);
    if (lookup(role, ['timing']) !== undefined && timingType !== 'roofline') {
      issues.push(
        makeConfigIssue(
          file,
          `${rolePath(name)}.timing`,
          `must be roofline timing (or left out): a plan compares GPUs and parallelism, which only roofline timing predicts, got type ${formatValue(timingType ?? 'fixed')}`,
        ),
      );
    }
    const capacityType = lookup(role, ['kv_cache', 'capacity', 'type']);
    if (lookup(role, ['kv_cache', 'capacity']) !== undefined && capacityType !== 'auto' && capacityType !== undefined) {
      issues.push(
        makeConfigIssue(
          file,
          `${rolePath(name)}.kv_cache.capacity.type`,
          `must be auto (or left out): the KV cache of each candidate comes from its GPUs' memory, got ${formatValue(capacityType)}`,
        ),
      );
    }
  }
  const layouts = parseLayouts(file, plan.search.workers ?? ['aggregated'], plan.search.tensor ?? [1], issues);
  const kinds = new Set(layouts.map((layout) => layout.kind));
  // A role's block (or the transfer) of the plan's engine applies to the candidates of its layout: written without them, it would be ignored.
  for (const name of WORKER_ROLES) {
    const kind: WorkerKind = name === 'aggregated' ? 'aggregated' : 'disaggregated';
    if (lookup(engine, ['workers', name]) !== undefined && !kinds.has(kind)) {
      issues.push(makeConfigIssue(file, rolePath(name), `applies to ${kind} candidates, and search.workers lists none`));
    }
  }
  if (lookup(engine, ['kv_transfer']) !== undefined && !kinds.has('disaggregated')) {
    issues.push(makeConfigIssue(file, 'engine.kv_transfer', 'applies to disaggregated candidates, and search.workers lists none'));
  }
  if (issues.length > 0) throw new ConfigError(issues);

  const slos: Slo[] = [];
  for (const [metric, bounds] of Object.entries(plan.slo) as Array<[SloMetric, Partial<Record<SloStat, number>> | undefined]>) {
    if (bounds === undefined) continue;
    for (const stat of SLO_STATS) {
      const limit = bounds[stat];
      if (limit !== undefined) slos.push({ metric, stat, limit, bound: SLO_METRICS[metric].bound, unit: SLO_METRICS[metric].unit });
    }
  }

  return {
    file,
    name: plan.name ?? basename(file, extname(file)),
    model: plan.model,
    hardware: Object.entries(plan.hardware).map(([name, entry]) => ({ name, pricePerGpuHour: entry.price_per_gpu_hour })),
    engine,
    source: plan.traffic.source ?? {},
    targetRps: plan.traffic.target_rps === undefined || plan.traffic.target_rps === 'max' ? null : plan.traffic.target_rps,
    slos,
    search: {
      workers: layouts,
      tensor: plan.search.tensor ?? [1],
      attentionData: plan.search.attention_data ?? [1],
      replicas: plan.search.replicas ?? null,
      gpuBudget: plan.search.gpu_budget ?? null,
      maxBatchedTokens: plan.search.max_batched_tokens ?? [8192],
      maxSequences: plan.search.max_sequences ?? [256],
    },
    rates: {
      tolerance: plan.rates.tolerance,
      durationS: plan.rates.duration_s,
      minRequests: plan.rates.min_requests,
      warmupShare: plan.rates.warmup_share,
      seed: plan.rates.seed,
      startRps: plan.rates.start_rps ?? null,
    },
  };
}

function parseRatio(text: string): PrefillDecodeRatio {
  const [prefill, decode] = text.trim().split(':').map(Number);
  return { prefill, decode };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * The entries of `search.workers` (each already a string or a mapping), with an issue for each bad
 * one: a layout named twice, a kind that is not one, a disaggregated entry without its ratios, or
 * a ratio listed twice (`2:4` is `1:2`: its multiples are the same candidates).
 */
function parseLayouts(
  file: string,
  entries: ReadonlyArray<string | Record<string, unknown>>,
  tensor: number[],
  issues: ConfigIssue[],
): WorkerLayout[] {
  const layouts: WorkerLayout[] = [];
  const seen = new Set<WorkerKind>();
  entries.forEach((entry, index) => {
    const field = `search.workers.${index}`;
    const kind = typeof entry === 'string' ? entry : Object.keys(entry).length === 1 ? Object.keys(entry)[0] : null;
    if (kind === 'disaggregated' && typeof entry === 'string') {
      issues.push(
        makeConfigIssue(
          file,
          field,
          'must list its prefill:decode ratios: {disaggregated: {ratios: ["1:1", "1:2"]}} (prefill workers : decode workers)',
        ),
      );
      return;
    }
    if (kind !== 'aggregated' && kind !== 'disaggregated') {
      issues.push(makeConfigIssue(file, field, `${LAYOUT_RULE}, got ${formatValue(entry)}`));
      return;
    }
    if (kind === 'aggregated' && typeof entry !== 'string') {
      issues.push(makeConfigIssue(file, field, `must be aggregated (aggregated workers take no settings here), got ${formatValue(entry)}`));
      return;
    }
    if (seen.has(kind)) {
      issues.push(makeConfigIssue(file, 'search.workers', `lists ${kind} twice`));
      return;
    }
    seen.add(kind);
    if (kind === 'aggregated') {
      layouts.push({ kind, field });
      return;
    }
    const parsed = disaggregatedSchema.safeParse((entry as Record<string, unknown>).disaggregated, { reportInput: true });
    if (!parsed.success) {
      for (const issue of fromZod(file, parsed.error.issues, `${field}.disaggregated`).issues) issues.push(issue);
      return;
    }
    const ratios: PrefillDecodeRatio[] = [];
    const reduced = new Map<string, string>();
    parsed.data.ratios.forEach((text, i) => {
      const ratio = parseRatio(text);
      const d = gcd(ratio.prefill, ratio.decode);
      const key = `${ratio.prefill / d}:${ratio.decode / d}`;
      const earlier = reduced.get(key);
      if (earlier !== undefined) {
        issues.push(
          makeConfigIssue(
            file,
            `${field}.disaggregated.ratios.${i}`,
            `${text} is ${earlier} again (a ratio's multiples are candidates already, up to search.gpu_budget or search.replicas)`,
          ),
        );
        return;
      }
      reduced.set(key, text.trim());
      ratios.push(ratio);
    });
    layouts.push({
      kind,
      field,
      ratios,
      prefillTensor: parsed.data.prefill_tensor ?? tensor,
      decodeTensor: parsed.data.decode_tensor ?? tensor,
      prefillTensorField: parsed.data.prefill_tensor === undefined ? 'search.tensor' : `${field}.disaggregated.prefill_tensor`,
      decodeTensorField: parsed.data.decode_tensor === undefined ? 'search.tensor' : `${field}.disaggregated.decode_tensor`,
    });
  });
  return layouts;
}

/** Reads and checks a plan file (YAML errors name the file and line). */
export function readPlanFile(path: string): PlanSpec {
  return parsePlanFile(readYamlFile(path, path, 'plan file'), path);
}
