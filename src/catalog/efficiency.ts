/**
 * Efficiency factors of the roofline timing, per GPU and serving backend: the share of the
 * datasheet's peaks that kernels reach, the latency of one collective, and the host's costs.
 * `data/efficiency.yaml` holds them, written by `npm run fit:catalog` from the measured silicon
 * sample; a run config can override any of them (`timing.efficiency`). A GPU and backend pair
 * takes the most specific entry there is, in this order: (GPU, backend), (GPU, any backend),
 * (any GPU, backend), the default.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import english from 'zod/v4/locales/en.js';
import { ConfigError, formatValue, makeConfigIssue } from '../config/errors.js';
import { MAX_COST, formatCount } from '../config/limits.js';
import { readYamlFile } from '../config/yaml.js';
import { packageRoot } from './load.js';
import { NEWEST_VERSION } from './engine-defaults.js';

export interface EfficiencyFactors {
  /** Share of the datasheet's dense tensor throughput that matmuls and attention reach, (0, 1]. */
  compute: number;
  /** Share of the datasheet's memory bandwidth that weight and KV reads reach, (0, 1]. */
  memory: number;
  /**
   * Share of the datasheet's BF16 tensor throughput that attention kernels reach, (0, 1]: below
   * the matmuls' (FlashAttention reaches 35-75 % of peak, less on short sequences).
   */
  attention: number;
  /**
   * FP8 and FP4 matmuls reach `compute` times this of their own (higher) peaks, at most the
   * peak: block-scaled low-precision kernels spend some of the doubled peak on scales.
   */
  fp8_compute: number;
  fp4_compute: number;
  /** Share of the scale-up (or network) bandwidth per direction that collectives reach, (0, 1]. */
  link: number;
  /** Latency of one collective (all-reduce or all-to-all), us. */
  collective_us: number;
  /** Host cost of one pass (scheduling, launch, sampling), ms. */
  pass_overhead_ms: number;
  /** Host cost per request in a pass, us. */
  per_request_us: number;
  /** Kernel launches of one layer in a pass that runs without a CUDA graph, us (a captured pass replays its graph instead). */
  per_layer_us: number;
  /**
   * The least time one layer's kernels hold the GPU in any pass, graph or not, us: a layer runs
   * a dozen or more kernels, and each, however little work it has, takes a few microseconds.
   */
  layer_floor_us: number;
  /**
   * The routed-expert kernels' efficiency relative to the dense matmuls' (their compute and weight
   * reads reach compute x moe and memory x moe of the peaks, at most the peaks): below 1, grouped
   * kernels over few tokens per expert; above 1, fewer distinct experts than uniform routing reads.
   */
  moe: number;
  /** Time from a client's send to the request reaching the engine's queue (HTTP, API server, tokenization), ms... */
  frontend_ms: number;
  /** ... plus this per prompt token, us... */
  frontend_us_per_token: number;
  /** ... plus this per other request in flight when it is sent, us (an API server and a client busier with more streams). */
  frontend_us_per_inflight: number;
}

export const EFFICIENCY_NAMES = [
  'compute',
  'memory',
  'attention',
  'fp8_compute',
  'fp4_compute',
  'link',
  'collective_us',
  'pass_overhead_ms',
  'per_request_us',
  'per_layer_us',
  'layer_floor_us',
  'moe',
  'frontend_ms',
  'frontend_us_per_token',
  'frontend_us_per_inflight',
] as const;

const say = (rule: string) => (issue: z.core.$ZodRawIssue) => `${rule}, got ${formatValue(issue.input)}`;
const share = () =>
  z
    .number({ error: say('must be a number in (0, 1]') })
    .check(z.gt(0, { error: say('must be a number in (0, 1]') }), z.maximum(1, { error: say('must be a number in (0, 1]') }));
/** Costs are bounded like every cost of a run config (docs/config.md, "Limits"). */
const cost = () =>
  z
    .number({ error: say('must be a finite non-negative number') })
    .check(
      z.minimum(0, { error: say('must be a finite non-negative number') }),
      z.maximum(MAX_COST, { error: say(`must be at most ${formatCount(MAX_COST)} (the limit on costs)`) }),
    );

/**
 * The factors' schemas: zod/mini, as the run config's schema that holds them (config/schema.ts
 * says why). Built when first asked for: only a roofline run needs them, and building schemas is a
 * noticeable part of a command's start-up.
 */
export function efficiencyShape(): ReturnType<typeof buildEfficiencyShape> {
  return (shape ??= buildEfficiencyShape());
}
let shape: ReturnType<typeof buildEfficiencyShape> | undefined;

const buildEfficiencyShape = () => ({
  compute: share(),
  memory: share(),
  attention: share(),
  fp8_compute: z
    .number({ error: say('must be a positive finite number') })
    .check(z.gt(0, { error: say('must be a positive finite number') }), z.maximum(10, { error: say('must be at most 10') })),
  fp4_compute: z
    .number({ error: say('must be a positive finite number') })
    .check(z.gt(0, { error: say('must be a positive finite number') }), z.maximum(10, { error: say('must be at most 10') })),
  link: share(),
  collective_us: cost(),
  pass_overhead_ms: cost(),
  per_request_us: cost(),
  per_layer_us: cost(),
  layer_floor_us: cost(),
  moe: z.number({ error: say('must be a positive finite number') }).check(z.gt(0, { error: say('must be a positive finite number') })),
  frontend_ms: cost(),
  frontend_us_per_token: cost(),
  frontend_us_per_inflight: cost(),
});

/** The schema of an efficiency table (data/efficiency.yaml). */
function buildFileSchema() {
  const factors = efficiencyShape();
  /** Factors a table may leave out (written before they existed): they take UNFITTED_EFFICIENCY's value. */
  const fileShape = {
    ...factors,
    attention: z._default(factors.attention, 0.4),
    fp8_compute: z._default(factors.fp8_compute, 1),
    fp4_compute: z._default(factors.fp4_compute, 1),
    // A table fitted before the floor existed holds it in its other costs.
    layer_floor_us: z._default(factors.layer_floor_us, 0),
  };
  const factorsSchema = z.strictObject(fileShape);
  const entrySchema = z.strictObject({
    hardware: z.optional(z.string()),
    backend: z.optional(z.string()),
    /** A version family of the backend (major.minor, `0.19`): the entry holds for those versions only. */
    version: z.optional(z.string()),
    ...fileShape,
    /** What the fit saw: deployments, points, and its residuals (for the docs). */
    fit: z.optional(z.record(z.string(), z.unknown())),
  });
  return z.strictObject({ default: factorsSchema, entries: z._default(z.array(entrySchema), []) });
}
/** Built when a table is first parsed. */
const fileSchema = z.lazy(buildFileSchema);
/**
 * zod's own texts (an unknown key, a string where a number belongs): zod/mini sets no locale, and
 * classic zod sets English only once one of its schemas is made, so the parse names it.
 */
const zodTexts = english().localeError;

export type EfficiencyTable = z.output<typeof fileSchema>;

/**
 * Factors before any fit, the centres of the fit's priors: typical shares of the peaks reached
 * by well-tuned inference kernels (matmuls about half the dense peak, HBM reads 85 % of the
 * bandwidth, attention kernels less than matmuls), a collective of about fifteen microseconds,
 * a millisecond of host time per pass and twenty microseconds per request, twenty microseconds
 * of launches per layer of an eager pass, ten microseconds of kernels per layer of any pass
 * (a dozen kernels of about a microsecond each at the least), twenty milliseconds of client and
 * server path. What a run gets where `data/efficiency.yaml` is missing.
 */
export const UNFITTED_EFFICIENCY: EfficiencyFactors = {
  compute: 0.55,
  memory: 0.85,
  attention: 0.4,
  fp8_compute: 0.9,
  fp4_compute: 0.7,
  link: 0.5,
  collective_us: 15,
  pass_overhead_ms: 1,
  per_request_us: 20,
  per_layer_us: 20,
  layer_floor_us: 10,
  moe: 0.7,
  frontend_ms: 20,
  frontend_us_per_token: 1,
  frontend_us_per_inflight: 20,
};

let cached: EfficiencyTable | undefined;

export function efficiencyFile(): string {
  return join(packageRoot(), 'data', 'efficiency.yaml');
}

export function loadEfficiencyTable(file = efficiencyFile()): EfficiencyTable {
  if (file === efficiencyFile() && cached !== undefined) return cached;
  if (!existsSync(file)) return { default: { ...UNFITTED_EFFICIENCY }, entries: [] };
  const parsed = fileSchema.safeParse(readYamlFile(file, file, 'catalog file'), { reportInput: true, error: zodTexts });
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => makeConfigIssue(file, issue.path.map(String).join('.'), issue.message)));
  }
  if (file === efficiencyFile()) cached = parsed.data;
  return parsed.data;
}

/** The version family of a backend version: its major and minor numbers (`0.12.0` -> `0.12`, `1.2.0rc6.post2` -> `1.2`); '' when unreadable. */
export function versionFamily(version: string | undefined): string {
  const match = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  return match === null ? '' : `${Number(match[1])}.${Number(match[2])}`;
}

/**
 * The factors for a GPU, backend and backend version (most specific entry first: the GPU,
 * backend and version family; the GPU and backend; the GPU; the backend; the default), and where
 * they came from. `version` absent: the backend's newest (`NEWEST_VERSION`).
 */
export function efficiencyFor(
  hardware: string,
  backend: string,
  table: EfficiencyTable = loadEfficiencyTable(),
  version?: string,
): { factors: EfficiencyFactors; source: string } {
  const family = versionFamily(version ?? NEWEST_VERSION[backend]);
  const pick = (h: string | undefined, b: string | undefined, v: string | undefined) =>
    table.entries.find((e) => e.hardware === h && e.backend === b && e.version === v);
  const found =
    (family !== '' ? pick(hardware, backend, family) : undefined) ??
    pick(hardware, backend, undefined) ??
    pick(hardware, undefined, undefined) ??
    pick(undefined, backend, undefined);
  const source =
    found === undefined
      ? 'default'
      : `${found.hardware ?? 'any GPU'} / ${found.backend ?? 'any backend'}${found.version !== undefined ? ` ${found.version}` : ''}`;
  const base = found ?? table.default;
  const factors = {} as EfficiencyFactors;
  for (const name of EFFICIENCY_NAMES) factors[name] = base[name];
  return { factors, source };
}

/**
 * How many measured points the table's fit saw on a GPU under a backend (its entry's `fit.points`),
 * every version together; 0 when the entry holds the GPU's and backend's effects only, or is absent.
 */
export function measuredPointsOn(hardware: string, backend: string, table: EfficiencyTable = loadEfficiencyTable()): number {
  const entry = table.entries.find((e) => e.hardware === hardware && e.backend === backend && e.version === undefined);
  const points = entry?.fit?.points;
  return typeof points === 'number' ? points : 0;
}
