/**
 * Sweep file -> ordered points (docs/sweeps.md). Pure: the run-config validator is passed in,
 * nothing is read or written here.
 *
 * Order: the grid is a cartesian product with the first key outermost (like itertools.product),
 * the zip is one more axis inside it, and repeats are innermost. A point's id is the first 12 hex
 * digits of the sha256 of the canonical (sorted-key) JSON of its effective config, so the same
 * point has the same id in every sweep, on every machine, whatever the key order in the files.
 */
import { createHash } from 'node:crypto';
import { applySet, assignInPlace } from '../config/set-override.js';
import type { RunConfig } from '../config/types.js';
import type { ChartOptions } from './chart-options.js';
import type { SweepFile } from './sweep-file.js';

/** Validates a raw run config (defaults filled); throws with a dotted `path` on the first bad field. */
export type ValidateRunConfig = (raw: unknown, label: string) => RunConfig;

/** The per-point overrides: dotted key -> value, in axis order; `repeat` is the repeat index when repeats > 1. */
export type Overrides = Record<string, unknown>;

/** What `plan.json` keeps of a point. */
export interface OutlinePoint {
  /** Position in plan order, from 0. */
  index: number;
  id: string;
  overrides: Overrides;
}

export interface PlanPoint extends OutlinePoint {
  /** The effective config (validated, defaults filled, overrides applied). */
  config: RunConfig;
}

/** A plan without the configs: all that the output files need. */
export interface PlanOutline {
  name: string;
  /** Swept keys, in column order: grid keys, zip keys, then `repeat` when repeats > 1. */
  axes: string[];
  /** Axes whose values came from a log2 range or form a doubling sequence (charts use a log scale). */
  log2Axes: string[];
  points: OutlinePoint[];
  /** What the chart draws (the sweep file's `chart`); the default chart when absent. */
  chart?: ChartOptions;
  /**
   * When the base run config is one `servesim calibrate engine` wrote (a fit.json beside it): that
   * fit.json and the measured points it was fitted on, so that a score of the sweep knows which
   * measured points are the fit's own training points.
   */
  fit?: SweepFit;
}

/** The fit a sweep's base config came from: its fit.json (as shown) and its training points' keys. */
export interface SweepFit {
  file: string;
  train: Array<Record<string, string | number>>;
}

export interface Plan extends PlanOutline {
  points: PlanPoint[];
}

export interface InvalidPoint {
  index: number;
  overrides: Overrides;
  /** Dotted path of the field at fault, when the validator gave one. */
  field: string;
  message: string;
}

/** Every invalid point of a plan, found before anything runs. */
export class PlanError extends Error {
  readonly file: string;
  readonly invalid: InvalidPoint[];
  constructor(file: string, total: number, invalid: InvalidPoint[]) {
    const lines = invalid.map(
      (p) => `  point ${p.index} (${formatOverrides(p.overrides)}): ${p.field === '' ? '' : `${p.field}: `}${p.message}`,
    );
    super(
      `${file}: ${invalid.length} of ${total} points ${invalid.length === 1 ? 'is' : 'are'} invalid; nothing was run.\n${lines.join('\n')}`,
    );
    this.name = 'PlanError';
    this.file = file;
    this.invalid = invalid;
  }
}

export const ID_LENGTH = 12;

/** `a=1, b.c=x` with values as compact JSON (strings bare). */
export function formatOverrides(overrides: Overrides): string {
  const parts = Object.entries(overrides).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return parts.length === 0 ? 'no overrides' : parts.join(', ');
}

/** JSON with object keys sorted at every level; `undefined` members dropped as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

export function pointId(config: RunConfig): string {
  return createHash('sha256').update(canonicalJson(config)).digest('hex').slice(0, ID_LENGTH);
}

/**
 * Applies one override with the same semantics as `--set` (config/set-override.ts): missing
 * mappings on the way are created, the value replaces what was there, and a non-mapping in the
 * way is a `ConfigError` naming its path.
 */
export function applyOverride(raw: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  return applySet(raw, { text: `${key}=${JSON.stringify(value)}`, path: key, segments: key.split('.'), value });
}

/** The per-point overrides of the grid x zip product, in plan order (repeats not included). */
export function expandOverrides(sweep: Pick<SweepFile, 'grid' | 'zip'>): Overrides[] {
  let combos: Overrides[] = [{}];
  for (const axis of sweep.grid) {
    const next: Overrides[] = [];
    for (const combo of combos) for (const value of axis.values) next.push({ ...combo, [axis.key]: value });
    combos = next;
  }
  if (sweep.zip.length > 0) {
    const length = sweep.zip[0].values.length;
    const next: Overrides[] = [];
    for (const combo of combos) {
      for (let i = 0; i < length; i++) {
        const row: Overrides = { ...combo };
        for (const axis of sweep.zip) row[axis.key] = axis.values[i];
        next.push(row);
      }
    }
    combos = next;
  }
  return combos;
}

function isDoubling(values: unknown[]): boolean {
  if (values.length < 3) return false;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' || !(v > 0)) return false;
    if (i > 0 && v !== (values[i - 1] as number) * 2) return false;
  }
  return true;
}

function errorField(err: unknown): string {
  const path = (err as { path?: unknown } | null)?.path;
  return typeof path === 'string' ? path : '';
}

/** The message without the `label: path: ` prefix the validator puts in front (they are shown apart). */
function errorMessage(err: unknown, label: string, field: string): string {
  let message = err instanceof Error ? err.message : String(err);
  if (message.startsWith(`${label}: `)) message = message.slice(label.length + 2);
  if (field !== '' && message.startsWith(`${field}: `)) message = message.slice(field.length + 2);
  return message;
}

export interface BuildPlanInput {
  sweep: SweepFile;
  /** The base run config as raw data (YAML parsed, nothing validated). */
  baseRaw: unknown;
  /** Label of the base in validator messages. */
  baseLabel: string;
  validate: ValidateRunConfig;
}

/**
 * Expands and validates every point. Throws `PlanError` listing every invalid point (with its
 * overrides and the field at fault), or naming points that turn out identical.
 */
export function buildPlan(input: BuildPlanInput): Plan {
  const steps = planSteps(input);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `buildPlan` that lets the event loop run every few hundred points, so that Ctrl-C or SIGTERM
 * during the planning of a large sweep is handled at once; null when `signal` was aborted.
 */
export async function buildPlanInterruptibly(input: BuildPlanInput, signal?: AbortSignal): Promise<Plan | null> {
  const steps = planSteps(input);
  for (let n = 1; ; n++) {
    const step = steps.next();
    if (step.done) return step.value;
    if (n % 256 === 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal?.aborted === true) return null;
    }
  }
}

/** The planning, one point (combination of overrides) per step. */
function* planSteps({ sweep, baseRaw, baseLabel, validate }: BuildPlanInput): Generator<undefined, Plan, undefined> {
  if (baseRaw === null || typeof baseRaw !== 'object' || Array.isArray(baseRaw)) {
    throw new PlanError(sweep.file, 1, [{ index: 0, overrides: {}, field: '', message: `${baseLabel}: a run config is a mapping` }]);
  }
  const combos = expandOverrides(sweep);
  const points: PlanPoint[] = [];
  const invalid: InvalidPoint[] = [];
  let index = 0;

  const tryConfig = (raw: Record<string, unknown>, overrides: Overrides): RunConfig | null => {
    try {
      return validate(raw, baseLabel);
    } catch (err) {
      const field = errorField(err);
      invalid.push({ index, overrides, field, message: errorMessage(err, baseLabel, field) });
      return null;
    }
  };

  for (const combo of combos) {
    yield;
    // One copy of the base per point, the overrides written into it (a value that is a mapping is
    // copied, so that a later key cannot write into the sweep file's own value).
    const raw = structuredClone(baseRaw) as Record<string, unknown>;
    let applied = true;
    for (const [key, value] of [...sweep.set, ...Object.entries(combo)]) {
      try {
        const copy = value !== null && typeof value === 'object' ? structuredClone(value) : value;
        assignInPlace(raw, { text: `${key}=${JSON.stringify(value)}`, path: key, segments: key.split('.'), value: copy });
      } catch (err) {
        const field = errorField(err) || key;
        const reason = (err as { reason?: unknown }).reason;
        invalid.push({ index, overrides: combo, field, message: typeof reason === 'string' ? reason : String(err) });
        applied = false;
        break;
      }
    }
    if (!applied) {
      index += sweep.repeats;
      continue;
    }
    if (sweep.repeats === 1) {
      const config = tryConfig(raw, combo);
      if (config !== null) points.push({ index, id: pointId(config), overrides: combo, config });
      index++;
      continue;
    }
    const first = tryConfig(raw, { ...combo, repeat: 0 });
    if (first === null) {
      index += sweep.repeats;
      continue;
    }
    for (let r = 0; r < sweep.repeats; r++) {
      const overrides = { ...combo, repeat: r };
      let repeated = raw;
      // Seeds advance by the repeat index: the source's seed (synthetic) and the load's (poisson).
      if (first.traffic.source.type === 'synthetic') {
        repeated = applyOverride(repeated, 'traffic.source.seed', first.traffic.source.seed + r);
      }
      if (first.traffic.load.type === 'poisson') {
        repeated = applyOverride(repeated, 'traffic.load.seed', first.traffic.load.seed + r);
      }
      const config = r === 0 ? first : tryConfig(repeated, overrides);
      if (config !== null) points.push({ index, id: pointId(config), overrides, config });
      index++;
    }
  }

  if (invalid.length > 0) throw new PlanError(sweep.file, index, invalid);

  const byId = new Map<string, PlanPoint>();
  const duplicates: InvalidPoint[] = [];
  for (const point of points) {
    const earlier = byId.get(point.id);
    if (earlier === undefined) {
      byId.set(point.id, point);
      continue;
    }
    duplicates.push({
      index: point.index,
      overrides: point.overrides,
      field: '',
      message:
        `same effective config as point ${earlier.index} (${formatOverrides(earlier.overrides)}), id ${point.id}` +
        (sweep.repeats > 1 ? '; repeats need a seeded source (synthetic) or a poisson load to differ' : ''),
    });
  }
  if (duplicates.length > 0) throw new PlanError(sweep.file, index, duplicates);

  const axes = [...sweep.grid.map((a) => a.key), ...sweep.zip.map((a) => a.key)];
  if (sweep.repeats > 1) axes.push('repeat');
  const log2Axes = [...sweep.grid, ...sweep.zip].filter((a) => a.scale === 'log2' || isDoubling(a.values)).map((a) => a.key);
  return { name: sweep.name, axes, log2Axes, points, ...(sweep.chart === null ? {} : { chart: sweep.chart }) };
}
