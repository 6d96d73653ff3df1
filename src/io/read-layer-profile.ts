/**
 * Reader of a layer-wise profile bundle (docs/calibration.md, "Pass time from layer profiles"): the
 * output of LLMServingSim's vLLM profiler, one folder per (GPU, model, dtype):
 *
 *   meta.yaml                   what was profiled (model, GPU, vLLM version, TP degrees, skew fit)
 *   tp<N>/dense.csv             layer,tokens,time_us        one row per layer and token count
 *   tp<N>/per_sequence.csv      layer,sequences,time_us     LM head and sampler per request count
 *   tp<N>/attention.csv         prefill_chunk,kv_prefill,n_decode,kv_decode,time_us
 *   tp<N>/moe.csv               tokens,activated_experts,time_us   (mixtures of experts only)
 *   tp<N>/skew_fit.csv          pc,n_label,skew_rate_label,kv_big_label,kp_label,alpha,n_samples
 *                               (read when meta.yaml's skew_fit is enabled: the share of the gap
 *                               between attention at the decodes' longest and mean context to add)
 *
 * Times are microseconds of one layer (the profiler runs a one-layer model). Every row is checked
 * and a bad one is an `InputError` naming the file and its line; a key profiled twice with two
 * times is an error naming both lines. The raw skew shots (skew.csv) are not read.
 */
import { join } from 'node:path';
import { parseTable } from './csv-table.js';
import { InputError, formatValue } from '../config/errors.js';
import { readYamlFile } from '../config/yaml.js';
import { isFolder, isRegularFile, readTextFile } from './read-text.js';

/** One layer's times against one axis (tokens or sequences), ascending, in microseconds. */
export interface LayerCurve {
  keys: number[];
  us: number[];
}

export interface AttentionSample {
  prefillChunk: number;
  kvPrefill: number;
  decodes: number;
  kvDecode: number;
  us: number;
}

export interface MoeSample {
  tokens: number;
  experts: number;
  us: number;
}

/** What the reader takes from meta.yaml (absent keys stay undefined). */
export interface LayerProfileMeta {
  model?: string;
  hardware?: string;
  gpu?: string;
  vllmVersion?: string;
  architecture?: string;
  variant?: string;
  tpDegrees?: number[];
  /** Whether the bundle asks for its skew correction of mixed decode lengths. */
  skewFit: boolean;
  /** The skew fit's buckets and default alphas (meta.yaml `skew_fit`), when enabled. */
  skew?: SkewAxes;
  /** The profiler's sweep bounds (`engine_effective`). */
  maxNumBatchedTokens?: number;
  maxNumSeqs?: number;
}

/** One axis of the skew fit's buckets: a value takes the first label i with value <= bins[i + 1]. */
export interface SkewAxis {
  bins: number[];
  labels: string[];
}

/** meta.yaml's `skew_fit`: the bucket axes, and the alpha of a pass no bucket holds, per TP size. */
export interface SkewAxes {
  n: SkewAxis;
  skewRate: SkewAxis;
  kvBig: SkewAxis;
  kp: SkewAxis;
  /** `per_tp.<N>.alpha_default`, else `alpha_default`. */
  alphaDefault: Map<number, number>;
  alphaDefaultAll?: number;
}

/**
 * The skew fit of one TP size: alpha per bucket of (prefill chunk, decodes, skew rate, longest
 * context, prefill history), the bucket's axes given as label indices.
 */
export interface SkewFit {
  axes: SkewAxes;
  alphaDefault: number;
  rows: Array<{ pc: number; n: number; skewRate: number; kvBig: number; kp: number; alpha: number }>;
}

export interface LayerProfile {
  /** The folder as the caller named it. */
  dir: string;
  tp: number;
  meta: LayerProfileMeta;
  /** Dense layers by name, and the per-sequence ones (LM head, sampler). */
  dense: Map<string, LayerCurve>;
  perSequence: Map<string, LayerCurve>;
  attention: AttentionSample[];
  moe: MoeSample[] | null;
  /** The skew fit, when meta.yaml enables it and the TP folder has its table. */
  skew: SkewFit | null;
  /** The files read, as labelled in errors. */
  files: string[];
}

/** The folder a profile lives in: the folder given, or its meta.yaml's folder. */
function profileFolder(dir: string): string {
  if (isRegularFile(dir) && dir.endsWith('meta.yaml')) return join(dir, '..');
  return dir;
}

/**
 * Reads the tables of one tensor-parallel size. `tp` absent: the bundle's only TP folder (an
 * error naming them when it has several).
 */
export function readLayerProfile(dirArg: string, tp?: number): LayerProfile {
  const dir = profileFolder(dirArg);
  if (!isFolder(dir))
    throw new InputError(
      dirArg,
      0,
      isRegularFile(dir) ? 'is a file; give the profile folder (the one with meta.yaml and tp<N>/)' : 'no such folder',
    );
  const metaPath = join(dir, 'meta.yaml');
  const metaLabel = join(dirArg, 'meta.yaml');
  const meta = isRegularFile(metaPath) ? readMeta(readYamlFile(metaPath, metaLabel, 'profile meta.yaml'), metaLabel) : { skewFit: false };
  const available = tpFolders(dir, meta);
  if (available.length === 0)
    throw new InputError(dirArg, 0, 'has no tp<N>/ folder with dense.csv (a layer-wise profile has one per tensor-parallel size)');
  let size: number;
  if (tp === undefined) {
    if (available.length > 1)
      throw new InputError(dirArg, 0, `has tables for tensor-parallel sizes ${available.join(', ')}; choose one (--tp)`);
    size = available[0];
  } else {
    if (!available.includes(tp))
      throw new InputError(dirArg, 0, `has no tables for tensor-parallel size ${tp} (it has ${available.join(', ')})`);
    size = tp;
  }
  const folder = join(dir, `tp${size}`);
  const label = (name: string) => join(dirArg, `tp${size}`, name);
  const files: string[] = [];
  const need = (name: string): string => {
    const path = join(folder, name);
    if (!isRegularFile(path))
      throw new InputError(
        label(name),
        0,
        'no such file (every tp<N>/ folder of a profile has dense.csv, per_sequence.csv and attention.csv)',
      );
    files.push(label(name));
    return path;
  };
  const dense = readCurves(need('dense.csv'), label('dense.csv'), 'tokens');
  const perSequence = readCurves(need('per_sequence.csv'), label('per_sequence.csv'), 'sequences');
  const attention = readAttention(need('attention.csv'), label('attention.csv'));
  let moe: MoeSample[] | null = null;
  if (isRegularFile(join(folder, 'moe.csv'))) {
    files.push(label('moe.csv'));
    moe = readMoe(join(folder, 'moe.csv'), label('moe.csv'));
  }
  let skew: SkewFit | null = null;
  const axes = meta.skew;
  if (
    axes !== undefined &&
    isRegularFile(join(folder, 'skew_fit.csv')) &&
    legacySkewTable(join(folder, 'skew_fit.csv'), label('skew_fit.csv'))
  ) {
    files.push(label('skew_fit.csv'));
    const alphaDefault = axes.alphaDefault.get(size) ?? axes.alphaDefaultAll;
    if (alphaDefault === undefined)
      throw new InputError(metaLabel, 0, `skew_fit: has no alpha_default for tensor-parallel size ${size} (per_tp.${size}.alpha_default)`);
    skew = { axes, alphaDefault, rows: readSkewFit(join(folder, 'skew_fit.csv'), label('skew_fit.csv'), axes) };
  }
  return { dir: dirArg, tp: size, meta, dense, perSequence, attention, moe, skew, files };
}

/** The TP sizes with tables: meta.yaml's tp_degrees when it lists them, else the tp<N>/ folders found. */
function tpFolders(dir: string, meta: LayerProfileMeta): number[] {
  const candidates = meta.tpDegrees ?? Array.from({ length: 64 }, (_, i) => i + 1);
  return candidates.filter((n) => isRegularFile(join(dir, `tp${n}`, 'dense.csv')));
}

// ---- meta.yaml ------------------------------------------------------------------------------

function readMeta(raw: unknown, label: string): LayerProfileMeta {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new InputError(label, 0, 'must be a mapping');
  const doc = raw as Record<string, unknown>;
  const text = (key: string): string | undefined => {
    const value = doc[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    throw new InputError(label, 0, `${key}: must be a string, got ${formatValue(value)}`);
  };
  const meta: LayerProfileMeta = { skewFit: false };
  const fields: Array<[keyof LayerProfileMeta, string]> = [
    ['model', 'model'],
    ['hardware', 'hardware'],
    ['gpu', 'gpu'],
    ['vllmVersion', 'vllm_version'],
    ['architecture', 'architecture'],
    ['variant', 'variant'],
  ];
  for (const [field, key] of fields) {
    const value = text(key);
    if (value !== undefined) (meta as unknown as Record<string, unknown>)[field] = value;
  }
  if (doc.tp_degrees !== undefined && doc.tp_degrees !== null) {
    const list = doc.tp_degrees;
    if (!Array.isArray(list) || list.length === 0 || !list.every((n) => Number.isInteger(n) && (n as number) >= 1))
      throw new InputError(label, 0, `tp_degrees: must be a list of positive integers, got ${formatValue(list)}`);
    meta.tpDegrees = list as number[];
  }
  const skew = doc.skew_fit;
  if (skew !== undefined && skew !== null) {
    if (typeof skew !== 'object' || Array.isArray(skew))
      throw new InputError(label, 0, `skew_fit: must be a mapping, got ${formatValue(skew)}`);
    const enabled = (skew as Record<string, unknown>).enabled;
    if (enabled !== undefined && typeof enabled !== 'boolean')
      throw new InputError(label, 0, `skew_fit.enabled: must be true or false, got ${formatValue(enabled)}`);
    meta.skewFit = enabled === true;
    // Later profilers describe their fit differently (no bucket_axes): the correction is then not read.
    const axes = (skew as Record<string, unknown>).bucket_axes;
    if (meta.skewFit && axes !== undefined && axes !== null) meta.skew = readSkewAxes(skew as Record<string, unknown>, label);
  }
  const effective = doc.engine_effective;
  if (effective !== null && typeof effective === 'object' && !Array.isArray(effective)) {
    const e = effective as Record<string, unknown>;
    if (Number.isInteger(e.max_num_batched_tokens)) meta.maxNumBatchedTokens = e.max_num_batched_tokens as number;
    if (Number.isInteger(e.max_num_seqs)) meta.maxNumSeqs = e.max_num_seqs as number;
  }
  return meta;
}

/** meta.yaml's skew_fit.bucket_axes and alpha defaults, each checked. */
function readSkewAxes(skew: Record<string, unknown>, label: string): SkewAxes {
  const axesDoc = skew.bucket_axes;
  if (axesDoc === null || typeof axesDoc !== 'object' || Array.isArray(axesDoc))
    throw new InputError(label, 0, `skew_fit.bucket_axes: must be a mapping, got ${formatValue(axesDoc)}`);
  const doc = axesDoc as Record<string, unknown>;
  const axis = (name: string): SkewAxis => {
    const bins = doc[`${name}_bins`];
    const labels = doc[`${name}_labels`];
    if (
      !Array.isArray(bins) ||
      bins.length < 2 ||
      !bins.every((b, i) => typeof b === 'number' && Number.isFinite(b) && (i === 0 || b > (bins[i - 1] as number)))
    )
      throw new InputError(label, 0, `skew_fit.bucket_axes.${name}_bins: must be a list of ascending numbers, got ${formatValue(bins)}`);
    if (!Array.isArray(labels) || labels.length !== bins.length - 1 || !labels.every((l) => typeof l === 'string' && l !== ''))
      throw new InputError(
        label,
        0,
        `skew_fit.bucket_axes.${name}_labels: must be ${bins.length - 1} labels, one per bin, got ${formatValue(labels)}`,
      );
    return { bins: bins as number[], labels: labels as string[] };
  };
  const alpha = (value: unknown, path: string): number => {
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new InputError(label, 0, `${path}: must be a number, got ${formatValue(value)}`);
    return value;
  };
  const alphaDefault = new Map<number, number>();
  const perTp = skew.per_tp;
  if (perTp !== undefined && perTp !== null) {
    if (typeof perTp !== 'object' || Array.isArray(perTp))
      throw new InputError(label, 0, `skew_fit.per_tp: must be a mapping, got ${formatValue(perTp)}`);
    for (const [key, entry] of Object.entries(perTp as Record<string, unknown>)) {
      const tp = Number(key);
      if (!Number.isInteger(tp) || tp < 1) throw new InputError(label, 0, `skew_fit.per_tp.${key}: expected a tensor-parallel size`);
      const value = (entry as Record<string, unknown> | null)?.alpha_default;
      if (value !== undefined) alphaDefault.set(tp, alpha(value, `skew_fit.per_tp.${key}.alpha_default`));
    }
  }
  const all = skew.alpha_default;
  return {
    n: axis('n'),
    skewRate: axis('skew_rate'),
    kvBig: axis('kv_big'),
    kp: axis('kp'),
    alphaDefault,
    ...(all !== undefined && all !== null ? { alphaDefaultAll: alpha(all, 'skew_fit.alpha_default') } : {}),
  };
}

// ---- CSV tables ------------------------------------------------------------------------------

interface CsvRow {
  line: number;
  cells: string[];
}

/** Provenance columns newer profilers add after the numbers; not read. */
const PROVENANCE_COLUMNS = ['measurement_protocol', 'measurement_sha256'];

/**
 * The rows of a CSV file with the columns of one of `headers` (in that order, provenance columns
 * aside), with their lines, and the index of the header it has.
 */
function readCsvOf(path: string, label: string, headers: ReadonlyArray<readonly string[]>): { rows: CsvRow[]; layout: number } {
  const table = parseTable(readTextFile(path, label), label, `the header ${headers[0].join(',')}`);
  const columns = table.columns.filter((name) => !PROVENANCE_COLUMNS.includes(name));
  const layout = headers.findIndex((header) => columns.length === header.length && columns.every((name, i) => name === header[i]));
  if (layout < 0)
    throw new InputError(label, 1, `the header is ${table.columns.join(',')}; expected ${headers.map((h) => h.join(',')).join(' or ')}`);
  if (table.rows.length === 0) throw new InputError(label, 1, 'has a header and no rows');
  const header = headers[layout];
  return { rows: table.rows.map(({ line, cells }) => ({ line, cells: header.map((column) => cells[column]) })), layout };
}

/** The rows of a CSV file with exactly the columns `header` (in that order), with their lines. */
function readCsv(path: string, label: string, header: readonly string[]): CsvRow[] {
  return readCsvOf(path, label, [header]).rows;
}

/** A whole number >= `min` from a cell. */
function countCell(label: string, row: CsvRow, index: number, column: string, min: number): number {
  const text = row.cells[index];
  const value = text === '' ? NaN : Number(text);
  if (!Number.isInteger(value) || value < min || value > 2 ** 31 - 1)
    throw new InputError(label, row.line, `${column}: expected a whole number >= ${min}, got ${formatValue(text)}`);
  return value;
}

/** A finite number >= 0 from a cell (a coordinate that need not be whole). */
function numberCell(label: string, row: CsvRow, index: number, column: string): number {
  const text = row.cells[index];
  const value = text === '' ? NaN : Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new InputError(label, row.line, `${column}: expected a number >= 0, got ${formatValue(text)}`);
  return value;
}

/** A time in microseconds: finite and >= 0. */
function timeCell(label: string, row: CsvRow, index: number): number {
  const text = row.cells[index];
  const value = text === '' ? NaN : Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new InputError(label, row.line, `time_us: expected a number of microseconds >= 0, got ${formatValue(text)}`);
  return value;
}

/** Rows keyed by `key`: a repeat with the same time is dropped, with another time is an error naming both lines. */
class Seen {
  private readonly lines = new Map<string, { line: number; us: number }>();
  constructor(private readonly label: string) {}
  /** True when the row is new. */
  add(key: string, what: string, line: number, us: number): boolean {
    const before = this.lines.get(key);
    if (before === undefined) {
      this.lines.set(key, { line, us });
      return true;
    }
    if (before.us === us) return false;
    throw new InputError(
      this.label,
      line,
      `${what} is profiled twice, with ${before.us} us at line ${before.line} and ${us} us here; keep one`,
    );
  }
}

function readCurves(path: string, label: string, axis: 'tokens' | 'sequences'): Map<string, LayerCurve> {
  const rows = readCsv(path, label, ['layer', axis, 'time_us']);
  const points = new Map<string, Array<[number, number]>>();
  const seen = new Seen(label);
  for (const row of rows) {
    const layer = row.cells[0];
    if (layer === '') throw new InputError(label, row.line, 'layer: expected a layer name, got an empty cell');
    const key = countCell(label, row, 1, axis, 1);
    const us = timeCell(label, row, 2);
    if (!seen.add(`${layer}|${key}`, `${layer} at ${key} ${axis}`, row.line, us)) continue;
    let list = points.get(layer);
    if (list === undefined) points.set(layer, (list = []));
    list.push([key, us]);
  }
  const curves = new Map<string, LayerCurve>();
  for (const layer of [...points.keys()].sort()) {
    const sorted = points.get(layer)!.sort((a, b) => a[0] - b[0]);
    curves.set(layer, { keys: sorted.map((p) => p[0]), us: sorted.map((p) => p[1]) });
  }
  return curves;
}

/**
 * attention.csv in either layout: `prefill_chunk,kv_prefill,n_decode,kv_decode,time_us`, or the
 * later `layer,prefill_chunk,prefill_key,n_decode,kv_decode,decode_q_len,time_us`, whose
 * `prefill_key` is the query-weighted key length sum(c (k + c/2)) / sum(c) of the prefills (read
 * as the history kv_prefill = prefill_key - prefill_chunk / 2, the profiler's own relabelling).
 * Of the later layout, the `attention` kernel's rows of one query token per decode are read
 * (others time speculative verification).
 */
function readAttention(path: string, label: string): AttentionSample[] {
  const { rows: all, layout } = readCsvOf(path, label, [
    ['prefill_chunk', 'kv_prefill', 'n_decode', 'kv_decode', 'time_us'],
    ['layer', 'prefill_chunk', 'prefill_key', 'n_decode', 'kv_decode', 'decode_q_len', 'time_us'],
  ]);
  const rows: CsvRow[] = [];
  if (layout === 0) rows.push(...all);
  else
    for (const row of all) {
      if (row.cells[0] !== 'attention')
        throw new InputError(label, row.line, `layer: only the attention kernel's rows are read, got ${formatValue(row.cells[0])}`);
      if (countCell(label, row, 5, 'decode_q_len', 0) > 1) continue;
      rows.push({ line: row.line, cells: [row.cells[1], row.cells[2], row.cells[3], row.cells[4], row.cells[6]] });
    }
  if (rows.length === 0) throw new InputError(label, 1, 'has no rows of one query token per decode');
  const seen = new Seen(label);
  const samples: AttentionSample[] = [];
  for (const row of rows) {
    const prefillChunk = countCell(label, row, 0, 'prefill_chunk', 0);
    const kvPrefill =
      layout === 0 ? countCell(label, row, 1, 'kv_prefill', 0) : Math.max(0, numberCell(label, row, 1, 'prefill_key') - prefillChunk / 2);
    const decodes = countCell(label, row, 2, 'n_decode', 0);
    const kvDecode = countCell(label, row, 3, 'kv_decode', 0);
    const us = timeCell(label, row, 4);
    if (prefillChunk === 0 && decodes === 0)
      throw new InputError(label, row.line, 'prefill_chunk and n_decode are both 0: a shot with no work');
    const key = `${prefillChunk}|${kvPrefill}|${decodes}|${kvDecode}`;
    if (seen.add(key, `the shot (${prefillChunk}, ${kvPrefill}, ${decodes}, ${kvDecode})`, row.line, us))
      samples.push({ prefillChunk, kvPrefill, decodes, kvDecode, us });
  }
  return samples;
}

const SKEW_FIT_HEADER = ['pc', 'n_label', 'skew_rate_label', 'kv_big_label', 'kp_label', 'alpha', 'n_samples'];

/** Whether skew_fit.csv has the bucket layout read here (later profilers write another schema). */
function legacySkewTable(path: string, label: string): boolean {
  const first = readTextFile(path, label)
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/, 1)[0];
  return (
    first
      .split(',')
      .map((cell) => cell.trim())
      .join(',') === SKEW_FIT_HEADER.join(',')
  );
}

function readSkewFit(path: string, label: string, axes: SkewAxes): SkewFit['rows'] {
  const rows = readCsv(path, label, SKEW_FIT_HEADER);
  const seen = new Map<string, number>();
  const out: SkewFit['rows'] = [];
  const index = (row: CsvRow, cell: number, column: string, axis: SkewAxis): number => {
    const i = axis.labels.indexOf(row.cells[cell]);
    if (i < 0)
      throw new InputError(
        label,
        row.line,
        `${column}: expected one of ${axis.labels.join(', ')} (meta.yaml's skew_fit.bucket_axes), got ${formatValue(row.cells[cell])}`,
      );
    return i;
  };
  for (const row of rows) {
    const pc = countCell(label, row, 0, 'pc', 0);
    const n = index(row, 1, 'n_label', axes.n);
    const skewRate = index(row, 2, 'skew_rate_label', axes.skewRate);
    const kvBig = index(row, 3, 'kv_big_label', axes.kvBig);
    const kp = index(row, 4, 'kp_label', axes.kp);
    const alpha = Number(row.cells[5]);
    if (row.cells[5] === '' || !Number.isFinite(alpha))
      throw new InputError(label, row.line, `alpha: expected a number, got ${formatValue(row.cells[5])}`);
    const key = row.cells.slice(0, 5).join(',');
    const before = seen.get(key);
    if (before !== undefined) throw new InputError(label, row.line, `the bucket ${key} is given twice (line ${before}); keep one`);
    seen.set(key, row.line);
    out.push({ pc, n, skewRate, kvBig, kp, alpha });
  }
  return out;
}

/**
 * moe.csv: `tokens,activated_experts,time_us`, or `ep,tokens,activated_experts,time_us` with a
 * grid per expert-parallel degree (the rows of `ep` are read: 1 unless the caller asks for
 * another; a degree the file lacks is an error naming the ones it has).
 */
function readMoe(path: string, label: string, ep = 1): MoeSample[] {
  const { rows: all, layout } = readCsvOf(path, label, [
    ['tokens', 'activated_experts', 'time_us'],
    ['ep', 'tokens', 'activated_experts', 'time_us'],
  ]);
  let rows = all;
  if (layout === 1) {
    const degrees = new Set<number>();
    rows = [];
    for (const row of all) {
      const degree = countCell(label, row, 0, 'ep', 1);
      degrees.add(degree);
      if (degree === ep) rows.push({ line: row.line, cells: row.cells.slice(1) });
    }
    if (rows.length === 0)
      throw new InputError(
        label,
        1,
        `has no rows of expert-parallel degree ${ep} (it has ${[...degrees].sort((a, b) => a - b).join(', ')})`,
      );
  }
  const seen = new Seen(label);
  const samples: MoeSample[] = [];
  for (const row of rows) {
    const tokens = countCell(label, row, 0, 'tokens', 1);
    const experts = countCell(label, row, 1, 'activated_experts', 1);
    const us = timeCell(label, row, 2);
    if (seen.add(`${tokens}|${experts}`, `${tokens} tokens on ${experts} experts`, row.line, us)) samples.push({ tokens, experts, us });
  }
  return samples;
}
