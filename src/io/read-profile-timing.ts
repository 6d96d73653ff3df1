/**
 * The pass-time model of `timing: {type: profile}` (docs/replay-model.md, "Timing providers"): a
 * JSON file that `servesim calibrate pass-time --profile` writes from a layer-wise profile, with
 * every table already summed over the model's layers and in ms:
 *
 *   {"format": "servesim-profile-timing/1",
 *    "tokens": {"tokens": [...], "ms": [...]},          layers that run on every token of a pass
 *    "moe": {"worker_tokens": [...], "ms": [...]},      optional: the MoE blocks of experts spread over the
 *                                                      worker's GPUs, at the tokens of all its attention-DP ranks
 *    "sequences": {"sequences": [...], "ms": [...]},    layers that run once per request (LM head, sampler)
 *    "skew": {"alpha_default": a, "bins": {"n": [...], "skew_rate": [...], "kv_big": [...], "kp": [...]},
 *             "columns": ["prefill_chunk", "n", "skew_rate", "kv_big", "kp", "alpha"], "rows": [[...], ...]}
 *                                                      optional: the skew correction (bin indices, then alpha)
 *    "attention": {"columns": ["prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "ms"], "rows": [[...], ...]},
 *    "source": {...}, "composition": {...}, "notes": [...]}   provenance, not read
 *
 * Reading checks every value and builds the ragged 4-D attention grid the core interpolates
 * (`core/timing/profile.ts`); a bad file is a `ConfigError` naming the file and the dotted path
 * of the value (`pass-time.json: attention.rows.17.4: must be a finite number >= 0, got -1`).
 */
import { ConfigError, formatValue } from '../config/errors.js';
import { skewBucket, type ProfileAttention, type ProfileSkew, type ProfileTiming } from '../core/timing/profile.js';
import { readTextFile } from './read-text.js';

export const PROFILE_TIMING_FORMAT = 'servesim-profile-timing/1';
export const ATTENTION_COLUMNS = ['prefill_chunk', 'kv_prefill', 'n_decode', 'kv_decode', 'ms'] as const;
export const SKEW_COLUMNS = ['prefill_chunk', 'n', 'skew_rate', 'kv_big', 'kp', 'alpha'] as const;
export const SKEW_AXES = ['n', 'skew_rate', 'kv_big', 'kp'] as const;

/** The skew correction as written: the bins of each axis, and alpha by bucket (bin indices). */
export interface ProfileSkewFile {
  alpha_default: number;
  bins: Record<(typeof SKEW_AXES)[number], number[]>;
  columns: readonly string[];
  rows: number[][];
}

/** The file as written (and read): the tables, plus provenance the replay does not read. */
export interface ProfileTimingFile {
  format: typeof PROFILE_TIMING_FORMAT;
  source: Record<string, unknown>;
  composition: Record<string, unknown>;
  notes: string[];
  tokens: { tokens: number[]; ms: number[] };
  /** The MoE blocks when the experts are spread over the worker's GPUs (expert parallelism), by the worker's tokens. */
  moe?: { worker_tokens: number[]; ms: number[] };
  sequences: { sequences: number[]; ms: number[] };
  attention: { columns: readonly string[]; rows: number[][] };
  skew?: ProfileSkewFile;
}

/** Reads and checks a pass-time model file; `label` names it in errors. */
export function readProfileTiming(path: string, label = path): ProfileTiming {
  const text = readTextFile(path, label, undefined, 'pass-time model');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(label, '', `not a JSON file (${(error as Error).message}); write it with servesim calibrate pass-time --profile`);
  }
  return profileTimingOf(raw, label);
}

function fail(label: string, path: string, reason: string): never {
  throw new ConfigError(label, path, reason);
}

function mapping(value: unknown, label: string, path: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail(label, path, `must be a mapping, got ${formatValue(value)}`);
  return value as Record<string, unknown>;
}

function list(value: unknown, label: string, path: string): unknown[] {
  if (!Array.isArray(value) || value.length === 0) fail(label, path, `must be a non-empty list, got ${formatValue(value)}`);
  return value;
}

function number(value: unknown, label: string, path: string, whole: boolean): number {
  const ok = typeof value === 'number' && Number.isFinite(value) && value >= 0 && (!whole || Number.isInteger(value));
  if (!ok) fail(label, path, `must be a ${whole ? 'whole number' : 'finite number'} >= 0, got ${formatValue(value)}`);
  return value;
}

/** One table of a key axis and ms, keys strictly ascending. */
function curve(
  doc: Record<string, unknown>,
  name: 'tokens' | 'sequences' | 'moe',
  label: string,
  key: string = name,
): { keys: Float64Array; ms: Float64Array } {
  const table = mapping(doc[name], label, name);
  const keys = list(table[key], label, `${name}.${key}`);
  const ms = list(table.ms, label, `${name}.ms`);
  if (keys.length !== ms.length) fail(label, `${name}.ms`, `has ${ms.length} values for ${keys.length} ${key}`);
  const out = { keys: new Float64Array(keys.length), ms: new Float64Array(keys.length) };
  for (let i = 0; i < keys.length; i++) {
    out.keys[i] = number(keys[i], label, `${name}.${key}.${i}`, true);
    if (out.keys[i] < 1) fail(label, `${name}.${key}.${i}`, `must be at least 1, got ${out.keys[i]}`);
    if (i > 0 && out.keys[i] <= out.keys[i - 1])
      fail(label, `${name}.${key}.${i}`, `must be above the one before (${out.keys[i - 1]}): the ${key} ascend, each once`);
    out.ms[i] = number(ms[i], label, `${name}.ms.${i}`, false);
  }
  return out;
}

/** Checks a parsed pass-time model and builds the core's timing spec. */
export function profileTimingOf(raw: unknown, label: string): ProfileTiming {
  const doc = mapping(raw, label, '');
  if (doc.format !== PROFILE_TIMING_FORMAT)
    fail(
      label,
      'format',
      `must be ${PROFILE_TIMING_FORMAT} (a file written by servesim calibrate pass-time --profile), got ${formatValue(doc.format)}`,
    );
  const tokens = curve(doc, 'tokens', label);
  const moe = doc.moe === undefined ? null : curve(doc, 'moe', label, 'worker_tokens');
  const sequences = curve(doc, 'sequences', label);
  const attention = mapping(doc.attention, label, 'attention');
  const columns = attention.columns;
  if (!Array.isArray(columns) || columns.join(',') !== ATTENTION_COLUMNS.join(','))
    fail(label, 'attention.columns', `must be [${ATTENTION_COLUMNS.join(', ')}], got ${formatValue(columns)}`);
  const rows = list(attention.rows, label, 'attention.rows').map((row, r) => {
    const path = `attention.rows.${r}`;
    if (!Array.isArray(row) || row.length !== ATTENTION_COLUMNS.length)
      fail(label, path, `must be a list of ${ATTENTION_COLUMNS.length} numbers (${ATTENTION_COLUMNS.join(', ')}), got ${formatValue(row)}`);
    const values = row.map((v, c) => number(v, label, `${path}.${c}`, c === 0 || c === 2 || c === 3));
    if (values[0] === 0 && values[2] === 0) fail(label, path, 'prefill_chunk and n_decode are both 0: a pass with no work');
    return values;
  });
  return {
    type: 'profile',
    tokenKeys: tokens.keys,
    tokenMs: tokens.ms,
    ...(moe === null ? {} : { moeKeys: moe.keys, moeMs: moe.ms }),
    sequenceKeys: sequences.keys,
    sequenceMs: sequences.ms,
    attention: attentionGrid(rows, label),
    ...(doc.skew === undefined ? {} : { skew: skewOf(doc.skew, label) }),
  };
}

/** Checks the skew block and builds the core's bucket table. */
function skewOf(raw: unknown, label: string): ProfileSkew {
  const doc = mapping(raw, label, 'skew');
  const alphaDefault = doc.alpha_default;
  if (typeof alphaDefault !== 'number' || !Number.isFinite(alphaDefault))
    fail(label, 'skew.alpha_default', `must be a finite number, got ${formatValue(alphaDefault)}`);
  const binsDoc = mapping(doc.bins, label, 'skew.bins');
  const bins = {} as Record<(typeof SKEW_AXES)[number], Float64Array>;
  for (const axis of SKEW_AXES) {
    const list = binsDoc[axis];
    const path = `skew.bins.${axis}`;
    if (!Array.isArray(list) || list.length < 2 || list.length > 65)
      fail(label, path, `must be a list of 2 to 65 ascending numbers, got ${formatValue(list)}`);
    const values = Float64Array.from(
      list.map((v, i) => {
        if (typeof v !== 'number' || !Number.isFinite(v) || (i > 0 && v <= (list[i - 1] as number)))
          fail(label, `${path}.${i}`, `must be a finite number above the one before, got ${formatValue(v)}`);
        return v;
      }),
    );
    bins[axis] = values;
  }
  if (!Array.isArray(doc.columns) || doc.columns.join(',') !== SKEW_COLUMNS.join(','))
    fail(label, 'skew.columns', `must be [${SKEW_COLUMNS.join(', ')}], got ${formatValue(doc.columns)}`);
  const rows = Array.isArray(doc.rows) ? doc.rows : fail(label, 'skew.rows', `must be a list, got ${formatValue(doc.rows)}`);
  const chunks = [
    ...new Set(
      rows.map((row, r) => {
        if (!Array.isArray(row) || row.length !== SKEW_COLUMNS.length)
          fail(
            label,
            `skew.rows.${r}`,
            `must be a list of ${SKEW_COLUMNS.length} numbers (${SKEW_COLUMNS.join(', ')}), got ${formatValue(row)}`,
          );
        return number(row[0], label, `skew.rows.${r}.0`, true);
      }),
    ),
  ].sort((a, b) => a - b);
  const alpha = new Map<number, number>();
  rows.forEach((row: unknown[], r: number) => {
    const index = SKEW_AXES.map((axis, a) => {
      const value = number(row[a + 1], label, `skew.rows.${r}.${a + 1}`, true);
      if (value > bins[axis].length - 2)
        fail(label, `skew.rows.${r}.${a + 1}`, `must be a bin of skew.bins.${axis} (0 to ${bins[axis].length - 2}), got ${value}`);
      return value;
    });
    const value = row[5];
    if (typeof value !== 'number' || !Number.isFinite(value))
      fail(label, `skew.rows.${r}.5`, `must be a finite number, got ${formatValue(value)}`);
    const key = skewBucket(chunks.indexOf(row[0] as number), index[0], index[1], index[2], index[3]);
    if (alpha.has(key)) fail(label, `skew.rows.${r}`, 'is a bucket given twice');
    alpha.set(key, value);
  });
  return {
    alphaDefault,
    nBins: bins.n,
    rateBins: bins.skew_rate,
    kvBigBins: bins.kv_big,
    kpBins: bins.kp,
    chunks: Float64Array.from(chunks),
    alpha,
  };
}

/**
 * The ragged grid of attention rows [chunk, kv_prefill, decodes, kv_decode, ms]: cells by
 * (chunk, decodes), rows by kv_prefill, samples by kv_decode, each ascending; a cell the profile
 * lacks takes the nearest profiled one (squared distance; the first in (chunk, decodes) order on a
 * tie), as the profiler's own simulator does. A sample given twice is an error naming both.
 */
export function attentionGrid(rows: readonly number[][], label: string): ProfileAttention {
  const order = rows
    .map((_, i) => i)
    .sort((a, b) => {
      const x = rows[a];
      const y = rows[b];
      return x[0] - y[0] || x[2] - y[2] || x[1] - y[1] || x[3] - y[3] || a - b;
    });
  const chunks = [...new Set(rows.map((r) => r[0]))].sort((a, b) => a - b);
  const decodes = [...new Set(rows.map((r) => r[2]))].sort((a, b) => a - b);
  const sliceOfCell = new Map<string, number>();
  const cells: Array<[number, number]> = [];
  const sliceRows: number[] = [];
  const rowKvPrefill: number[] = [];
  const rowSamples: number[] = [];
  const sampleKvDecode: number[] = [];
  const sampleMs: number[] = [];
  let previous: number | null = null;
  for (const index of order) {
    const [pc, kp, nd, kd, ms] = rows[index];
    const cell = `${pc}|${nd}`;
    if (!sliceOfCell.has(cell)) {
      sliceOfCell.set(cell, cells.length);
      cells.push([pc, nd]);
      sliceRows.push(rowKvPrefill.length);
      previous = null;
    }
    if (rowKvPrefill.length === sliceRows[sliceRows.length - 1] || rowKvPrefill[rowKvPrefill.length - 1] !== kp) {
      rowKvPrefill.push(kp);
      rowSamples.push(sampleKvDecode.length);
      previous = null;
    }
    if (previous !== null && sampleKvDecode[sampleKvDecode.length - 1] === kd)
      fail(label, `attention.rows.${index}`, `repeats the shot (${pc}, ${kp}, ${nd}, ${kd}) of attention.rows.${previous}`);
    sampleKvDecode.push(kd);
    sampleMs.push(ms);
    previous = index;
  }
  sliceRows.push(rowKvPrefill.length);
  rowSamples.push(sampleKvDecode.length);
  const cellSlice = new Int32Array(chunks.length * decodes.length);
  for (let i = 0; i < chunks.length; i++) {
    for (let j = 0; j < decodes.length; j++) {
      const own = sliceOfCell.get(`${chunks[i]}|${decodes[j]}`);
      if (own !== undefined) {
        cellSlice[i * decodes.length + j] = own;
        continue;
      }
      let best = 0;
      let bestDistance = Infinity;
      cells.forEach(([pc, nd], s) => {
        const distance = (pc - chunks[i]) ** 2 + (nd - decodes[j]) ** 2;
        if (distance < bestDistance) {
          bestDistance = distance;
          best = s;
        }
      });
      cellSlice[i * decodes.length + j] = best;
    }
  }
  return {
    chunks: Float64Array.from(chunks),
    decodes: Float64Array.from(decodes),
    cellSlice,
    sliceRows: Int32Array.from(sliceRows),
    rowKvPrefill: Float64Array.from(rowKvPrefill),
    rowSamples: Int32Array.from(rowSamples),
    sampleKvDecode: Float64Array.from(sampleKvDecode),
    sampleMs: Float64Array.from(sampleMs),
  };
}
