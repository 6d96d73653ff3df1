/**
 * Worker counts of the silicon sample's disaggregated InferenceX export rows, which leave
 * `prefill_num_workers` and `decode_num_workers` empty, recovered from InferenceX's benchmark
 * master config (`.github/configs/nvidia-master.yaml`): `data/silicon/disagg-workers.csv` lists
 * the rows whose counts one config entry gives, and `workersFromConfig` looks a row up there.
 *
 * The rule (`matchWorkers`), on what an export row says of itself: a config entry matches a row
 * when its model, GPU, engine, precision, ISL and OSL are the row's, the row's client concurrency
 * is in the entry's concurrency list, and the row's TP columns are the entry's under one of two
 * readings: per worker (prefill TP, decode TP and prefill EP equal the entry's; the exports write
 * the prefill EP into both pools' EP columns and no attention DP, so neither the decode EP nor
 * DP-attention is compared), or the whole deployment (some exports write the deployment's GPU
 * count, prefill workers x TP + decode workers x TP, into both pools' TP columns, with EP 1).
 * The entries looked at are those of every version of the file on the main branch from the one
 * in force at the row's `measured=` time to the last one committed within `WINDOW_DAYS` after it
 * (a pull request's benchmark runs before the request is merged). A row takes worker counts only
 * when exactly one entry (its name, spec decoding, and both pools' workers, TP, EP and
 * DP-attention) matches; with none or several it takes none. An entry with no decode workers (an
 * aggregated run listed in a disaggregated config) matches like any other but gives no counts.
 * scripts/disagg-workers.mjs, which writes the data file, also leaves out a key under which the
 * sample holds two different measurements (two runs the rows cannot tell apart).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { packageRoot } from '../catalog/load.js';
import { ConfigError, InputError, makeConfigIssue } from '../config/errors.js';
import { readTable } from './read-table.js';

/** Days after a row's measurement during which a merged config version still counts (see the module comment). */
export const WINDOW_DAYS = 7;

/** One pool of a config entry: its workers, TP, EP and whether attention is data-parallel. */
export interface EntryPool {
  workers: number;
  tp: number;
  ep: number;
  dpAttention: boolean;
}

/** One search-space entry of a disaggregated config of the master file. */
export interface ConfigEntry {
  /** The config's name (`dsr1-fp4-gb200-dynamo-trt`). */
  config: string;
  /** The model as the exports name it (`DeepSeek-R1`), from the config's model prefix. */
  model: string;
  /** GPU, the runner's first word (`gb200`, `b200`). */
  gpu: string;
  /** Engine as the sample names it (`trtllm`, `sglang`, `vllm`). */
  backend: string;
  precision: string;
  isl: number;
  osl: number;
  /** `spec-decoding` ('none' when absent). */
  spec: string;
  concurrency: number[];
  prefill: EntryPool;
  decode: EntryPool;
  /** The pools' `additional-settings` (prefill's, then decode's), as written: `CONFIG_FILE=recipes/...` names the launch recipe. */
  settings?: string[];
}

/** One version of the master file: its commit, the commit's time (ISO 8601) and its disaggregated entries. */
export interface ConfigVersion {
  commit: string;
  date: string;
  entries: ConfigEntry[];
}

/** What an export row says of its deployment, as the rule compares it. */
export interface RowFacts {
  /** `model=` of the source text (`DeepSeek-R1`). */
  model: string;
  /** The sample's system (`gb200`, `b200_sxm`). */
  system: string;
  backend: string;
  precision: string;
  isl: number;
  osl: number;
  prefillTp: number;
  /** The prefill pool's EP column (`prefill_moe_ep_size`). */
  prefillEp: number;
  decodeTp: number;
  /** `silicon_concurrency=`. */
  concurrency: number;
  /** `measured=` as written (ISO 8601). */
  measured: string;
}

/** The outcome of the rule for one row. */
export type WorkerMatch =
  | { kind: 'one'; entry: ConfigEntry; reading: 'worker' | 'deployment'; version: ConfigVersion }
  | { kind: 'none' }
  | { kind: 'several'; entries: ConfigEntry[] };

/** Config model prefixes (lower case, letters and digits only) by the name the exports give the model. */
const MODEL_OF_PREFIX: Record<string, string> = {
  dsr1: 'DeepSeek-R1',
  dsr1fp8: 'DeepSeek-R1',
  deepseekr10528: 'DeepSeek-R1',
  gptoss: 'GPT-OSS-120B',
  kimik25: 'Kimi-K2.5',
  glm5: 'GLM-5',
};

const BACKEND_OF_FRAMEWORK: Record<string, string> = {
  'dynamo-trt': 'trtllm',
  'dynamo-trtllm': 'trtllm',
  'dynamo-sglang': 'sglang',
  'dynamo-vllm': 'vllm',
};

const poolSchema = z.looseObject({
  'num-worker': z.int().min(0),
  tp: z.int().positive(),
  ep: z.int().positive(),
  'dp-attn': z.boolean(),
  'additional-settings': z.array(z.unknown()).optional(),
});
const configSchema = z.looseObject({
  'model-prefix': z.string(),
  runner: z.string(),
  precision: z.string(),
  framework: z.string(),
  disagg: z.boolean().optional(),
  'seq-len-configs': z.array(
    z.looseObject({
      isl: z.int().positive(),
      osl: z.int().positive(),
      'search-space': z.array(
        z.looseObject({
          'spec-decoding': z.string().optional(),
          'conc-list': z.array(z.int().positive()),
          prefill: poolSchema,
          decode: poolSchema,
        }),
      ),
    }),
  ),
});

/**
 * The disaggregated entries of one version of the master file (its parsed YAML). Configs that
 * are not disaggregated, or whose model or framework the sample has no name for, are skipped; a
 * disaggregated config of another shape is a `ConfigError` naming `file` and the field.
 */
export function entriesOfMasterConfig(doc: unknown, file: string): ConfigEntry[] {
  const entries: ConfigEntry[] = [];
  if (doc === null || typeof doc !== 'object') return entries;
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    if (value === null || typeof value !== 'object' || (value as { disagg?: unknown }).disagg !== true) continue;
    const parsed = configSchema.safeParse(value);
    if (!parsed.success) {
      throw new ConfigError(parsed.error.issues.map((i) => makeConfigIssue(file, [name, ...i.path.map(String)].join('.'), i.message)));
    }
    const cfg = parsed.data;
    const model = MODEL_OF_PREFIX[cfg['model-prefix'].toLowerCase().replace(/[^a-z0-9]/g, '')];
    const backend = BACKEND_OF_FRAMEWORK[cfg.framework];
    if (model === undefined || backend === undefined) continue;
    const pool = (p: z.output<typeof poolSchema>): EntryPool => ({
      workers: p['num-worker'],
      tp: p.tp,
      ep: p.ep,
      dpAttention: p['dp-attn'],
    });
    for (const seq of cfg['seq-len-configs']) {
      for (const space of seq['search-space']) {
        entries.push({
          config: name,
          model,
          gpu: cfg.runner.split('-')[0],
          backend,
          precision: cfg.precision,
          isl: seq.isl,
          osl: seq.osl,
          spec: space['spec-decoding'] ?? 'none',
          concurrency: space['conc-list'],
          prefill: pool(space.prefill),
          decode: pool(space.decode),
          settings: [...(space.prefill['additional-settings'] ?? []), ...(space.decode['additional-settings'] ?? [])].map(String),
        });
      }
    }
  }
  return entries;
}

/** How an entry's parallelism reads the row's TP columns, or null when it does not match them. */
function readingOf(row: RowFacts, e: ConfigEntry): 'worker' | 'deployment' | null {
  if (e.prefill.tp === row.prefillTp && e.decode.tp === row.decodeTp && e.prefill.ep === row.prefillEp) return 'worker';
  const gpus = e.prefill.workers * e.prefill.tp + e.decode.workers * e.decode.tp;
  if (row.prefillTp === row.decodeTp && row.prefillEp === 1 && gpus === row.prefillTp) return 'deployment';
  return null;
}

/** An entry's identity across versions: its name, lengths, spec decoding and pools (its concurrency list may change). */
function entryKey(e: ConfigEntry): string {
  const pool = (p: EntryPool) => `${p.workers}x${p.tp}/${p.ep}/${p.dpAttention}`;
  return `${e.config}|${e.isl}/${e.osl}|${e.spec}|${pool(e.prefill)}|${pool(e.decode)}`;
}

/**
 * The rule of the module comment: the entries of `versions` (any order) in force at the row's
 * measurement or merged within `WINDOW_DAYS` after it that match the row; one distinct entry
 * gives its worker counts (with the newest version of the window holding it), none or several
 * give none.
 */
export function matchWorkers(row: RowFacts, versions: readonly ConfigVersion[]): WorkerMatch {
  const window = versionsAround(row.measured, versions);
  const gpu = row.system.split('_')[0];
  const found = new Map<string, { entry: ConfigEntry; reading: 'worker' | 'deployment'; version: ConfigVersion }>();
  for (const version of window) {
    for (const e of version.entries) {
      if (e.model !== row.model || e.gpu !== gpu || e.backend !== row.backend || e.precision !== row.precision) continue;
      if (e.isl !== row.isl || e.osl !== row.osl || !e.concurrency.includes(row.concurrency)) continue;
      const reading = readingOf(row, e);
      if (reading !== null) found.set(entryKey(e), { entry: e, reading, version });
    }
  }
  if (found.size === 0) return { kind: 'none' };
  if (found.size > 1) return { kind: 'several', entries: [...found.values()].map((f) => f.entry) };
  return { kind: 'one', ...[...found.values()][0] };
}

/** The versions of `versions` in force at `measured` or merged within `WINDOW_DAYS` after it, oldest first. */
function versionsAround(measured: string, versions: readonly ConfigVersion[]): ConfigVersion[] {
  const at = Date.parse(measured);
  if (!Number.isFinite(at)) return [];
  const sorted = [...versions].sort((a, b) => Date.parse(a.date) - Date.parse(b.date));
  const inForce = sorted.findLastIndex((v) => Date.parse(v.date) <= at);
  const until = at + WINDOW_DAYS * 86_400_000;
  return sorted
    .slice(Math.max(inForce, 0))
    .filter((v, i) => (i === 0 && inForce >= 0) || (Date.parse(v.date) > at && Date.parse(v.date) <= until));
}

/** What a database-dump row of the sample says of its deployment: the export rows' facts, and each pool's shape. */
export interface DbRowFacts extends Omit<RowFacts, 'prefillTp' | 'prefillEp' | 'decodeTp'> {
  /** The sample's row id (`dsr1_gb200_trtllm_fp4_disagg_1024x1024_c192_cfg388`). */
  id: string;
  /** The model as InferenceX's configs name it, from the id's model prefix (`dsr1`: DeepSeek-R1). */
  model: string;
  prefill: EntryPool;
  decode: EntryPool;
}

/** What a sample row's cells say of its run as written: GPU, engine, precision and lengths. */
function rowRun(cells: Record<string, string>): Pick<RowFacts, 'system' | 'backend' | 'precision' | 'isl' | 'osl'> {
  return { system: cells.system, backend: cells.backend, precision: cells.precision, isl: Number(cells.isl), osl: Number(cells.osl) };
}

/**
 * The facts of a disaggregated database-dump row (`db-dump/...; config_id=...`), whose columns give
 * each pool's workers, TP, attention DP and EP, or null for another row. A pool's GPUs per worker
 * (TP x attention DP) are its config entry's `tp`, attention DP above 1 its `dp-attn`.
 */
export function dbRowFactsOf(cells: Record<string, string>, fields: Map<string, string>): DbRowFacts | null {
  if (cells.mode !== 'disagg' || !(cells.silicon_data_source ?? '').startsWith('db-dump/') || !fields.has('config_id')) return null;
  const gpu = (cells.system ?? '').split('_')[0];
  const at = (cells.id ?? '').indexOf(`_${gpu}_`);
  const model =
    at > 0
      ? MODEL_OF_PREFIX[
          cells.id
            .slice(0, at)
            .toLowerCase()
            .replace(/[^a-z0-9]/g, '')
        ]
      : undefined;
  const measured = fields.get('measured') ?? '';
  const concurrency = Number(fields.get('silicon_concurrency'));
  if (model === undefined || measured === '' || !(concurrency > 0)) return null;
  const pool = (prefix: string): EntryPool => {
    const dp = Number(cells[`${prefix}attention_dp_size`]) || 1;
    return {
      workers: Number(cells[`${prefix}num_workers`]) || 0,
      tp: (Number(cells[`${prefix}tp_size`]) || 1) * dp,
      ep: Number(cells[`${prefix}moe_ep_size`]) || 1,
      dpAttention: dp > 1,
    };
  };
  return {
    id: cells.id,
    model,
    ...rowRun(cells),
    concurrency,
    measured,
    prefill: pool('prefill_'),
    decode: pool('decode_'),
  };
}

/**
 * The config entry a database-dump row ran: among the entries of the versions around its
 * measurement (as for `matchWorkers`) of its model, GPU, engine, precision and lengths that list its
 * concurrency, run no speculative decoding (the sample's importer takes no such record without
 * acceptance figures) and have both its pools' workers, GPUs per worker, EP and attention DP; one
 * distinct entry (with the newest version of the window holding it), or none. Where no entry has
 * the row's attention DP, the entries that differ from it only there are looked at.
 */
export function matchDbEntry(
  row: DbRowFacts,
  versions: readonly ConfigVersion[],
): { kind: 'one'; entry: ConfigEntry; version: ConfigVersion } | { kind: 'none' | 'several' } {
  const gpu = row.system.split('_')[0];
  const window = versionsAround(row.measured, versions);
  const search = (dpAttention: boolean) => {
    const same = (a: EntryPool, b: EntryPool) =>
      a.workers === b.workers && a.tp === b.tp && a.ep === b.ep && (!dpAttention || a.dpAttention === b.dpAttention);
    const found = new Map<string, { entry: ConfigEntry; version: ConfigVersion }>();
    for (const version of window) {
      for (const e of version.entries) {
        if (e.model !== row.model || e.gpu !== gpu || e.backend !== row.backend || e.precision !== row.precision || e.spec !== 'none')
          continue;
        if (e.isl !== row.isl || e.osl !== row.osl || !e.concurrency.includes(row.concurrency)) continue;
        if (same(e.prefill, row.prefill) && same(e.decode, row.decode)) found.set(entryKey(e), { entry: e, version });
      }
    }
    return found;
  };
  // Some rows record no attention DP where their entry ran it (vLLM's Kimi-K2.5 prefill workers of
  // DP 4): where no entry has the row's, one that differs from it only there is the run.
  let found = search(true);
  if (found.size === 0) found = search(false);
  if (found.size === 0) return { kind: 'none' };
  if (found.size > 1) return { kind: 'several' };
  return { kind: 'one', ...[...found.values()][0] };
}

/** The facts of a sample row (its cells) that the rule compares, or null when it is no export row without worker counts. */
export function rowFactsOf(cells: Record<string, string>, fields: Map<string, string>): RowFacts | null {
  if (cells.mode !== 'disagg' || !/^\d{4}-\d{2}-\d{2}\.csv$/.test(fields.get('source_file') ?? '')) return null;
  if (Number(cells.prefill_num_workers) > 0 || Number(cells.decode_num_workers) > 0) return null;
  const model = fields.get('model') ?? '';
  const measured = fields.get('measured') ?? '';
  const concurrency = Number(fields.get('silicon_concurrency'));
  if (model === '' || measured === '' || !(concurrency > 0)) return null;
  return {
    model,
    ...rowRun(cells),
    prefillTp: Number(cells.prefill_tp_size) || 1,
    prefillEp: Number(cells.prefill_moe_ep_size) || 1,
    decodeTp: Number(cells.decode_tp_size) || 1,
    concurrency,
    measured,
  };
}

/** A data file row's key facts, from its (already checked) cells. */
export function factsOfCells(cells: Record<string, string>): RowFacts {
  return {
    model: cells.model,
    system: cells.system,
    backend: cells.backend,
    precision: cells.precision,
    isl: Number(cells.isl),
    osl: Number(cells.osl),
    prefillTp: Number(cells.prefill_tp),
    prefillEp: Number(cells.prefill_ep),
    decodeTp: Number(cells.decode_tp),
    concurrency: Number(cells.concurrency),
    measured: cells.measured,
  };
}

/** The key of a row in the data file. */
export function factsKey(f: RowFacts): string {
  return [f.model, f.system, f.backend, f.precision, f.isl, f.osl, f.prefillTp, f.prefillEp, f.decodeTp, f.concurrency, f.measured].join(
    '|',
  );
}

/** The data file's columns: the row's key (`RowFacts`), the counts, the entry and where it was read. */
export const WORKER_COLUMNS = [
  'model',
  'system',
  'backend',
  'precision',
  'isl',
  'osl',
  'prefill_tp',
  'prefill_ep',
  'decode_tp',
  'concurrency',
  'measured',
  'prefill_workers',
  'decode_workers',
  'config',
  'spec_decoding',
  'tp_reading',
  'entry_prefill_tp',
  'entry_prefill_ep',
  'entry_prefill_dp_attn',
  'entry_decode_tp',
  'entry_decode_ep',
  'entry_decode_dp_attn',
  'repository',
  'path',
  'commit',
  'commit_date',
] as const;

const INT_COLUMNS = new Set(['isl', 'osl', 'prefill_tp', 'prefill_ep', 'decode_tp', 'concurrency', 'prefill_workers', 'decode_workers']);
const ENTRY_INT_COLUMNS = new Set(['entry_prefill_tp', 'entry_prefill_ep', 'entry_decode_tp', 'entry_decode_ep']);

/** One row of the data file: a sample row's key and the worker counts one config entry gives it. */
export interface WorkerRow {
  facts: RowFacts;
  prefillWorkers: number;
  decodeWorkers: number;
  /** The rest of the row as written (entry and source columns). */
  cells: Record<string, string>;
  line: number;
}

export function disaggWorkersFile(): string {
  return join(packageRoot(), 'data', 'silicon', 'disagg-workers.csv');
}

const cache = new Map<string, Map<string, WorkerRow>>();

/**
 * The data file's rows by key (`factsKey`); a missing file has none. A missing column, a bad
 * cell, or two rows of one key is an `InputError` naming the file, the line and the column (exit 2).
 */
export function loadDisaggWorkers(file = disaggWorkersFile()): Map<string, WorkerRow> {
  return loadKeyedRows(file, WORKER_COLUMNS, cache, (cells, line) => {
    for (const column of WORKER_COLUMNS) {
      const value = cells[column];
      const bad = (what: string) => new InputError(file, line, `column "${column}": must be ${what}, got "${value}"`);
      if (INT_COLUMNS.has(column) || ENTRY_INT_COLUMNS.has(column)) {
        if (!/^[1-9][0-9]*$/.test(value)) throw bad('a positive integer');
      } else if (column.endsWith('_dp_attn')) {
        if (value !== 'true' && value !== 'false') throw bad('true or false');
      } else if (column === 'tp_reading') {
        if (value !== 'worker' && value !== 'deployment') throw bad('worker or deployment');
      } else if (column === 'commit') {
        if (!/^[0-9a-f]{40}$/.test(value)) throw bad('a 40-digit commit hash');
      } else if (column === 'measured' || column === 'commit_date') {
        if (!Number.isFinite(Date.parse(value))) throw bad('a date and time (ISO 8601)');
      } else if (value === '') throw bad('given');
    }
    return (facts) => ({ facts, prefillWorkers: Number(cells.prefill_workers), decodeWorkers: Number(cells.decode_workers), cells, line });
  });
}

/**
 * A data file of silicon rows keyed by their facts (`factsOfCells`, `factsKey`), read once per
 * file: a missing file has no rows; a missing column or two rows of one key is an `InputError`
 * naming the file and the line; `rowOf` checks a row's cells (throwing an `InputError` for a bad
 * one) and returns how to build what the map holds from the row's facts.
 */
export function loadKeyedRows<T extends { line: number }>(
  file: string,
  columns: readonly string[],
  cache: Map<string, Map<string, T>>,
  rowOf: (cells: Record<string, string>, line: number) => (facts: RowFacts) => T,
): Map<string, T> {
  return loadRowsBy(file, columns, cache, 'key', (cells, line) => {
    const build = rowOf(cells, line);
    const facts = factsOfCells(cells);
    return { key: factsKey(facts), build: () => build(facts) };
  });
}

/**
 * A data file of rows read once per file under the key each row gives: a missing file has no
 * rows; a missing column or two rows of one key is an `InputError` naming the file and the line
 * (`repeats the <what> of line N`); `rowOf` checks a row's cells and returns its key and how to
 * build what the map holds.
 */
export function loadRowsBy<T extends { line: number }>(
  file: string,
  columns: readonly string[],
  cache: Map<string, Map<string, T>>,
  what: string,
  rowOf: (cells: Record<string, string>, line: number) => { key: string; build: () => T },
): Map<string, T> {
  const known = cache.get(file);
  if (known !== undefined) return known;
  const byKey = new Map<string, T>();
  if (existsSync(file)) {
    const table = readTable(file);
    const absent = columns.filter((c) => !table.columns.includes(c));
    if (absent.length > 0) throw new InputError(file, 1, `has no column ${absent.map((c) => `"${c}"`).join(', ')}`);
    for (const { cells, line } of table.rows) {
      const { key, build } = rowOf(cells, line);
      const earlier = byKey.get(key);
      if (earlier !== undefined) throw new InputError(file, line, `repeats the ${what} of line ${earlier.line}`);
      byKey.set(key, build());
    }
  }
  cache.set(file, byKey);
  return byKey;
}

/** The worker counts the data file gives an export row (its cells and source fields), or undefined. */
export function workersFromConfig(
  cells: Record<string, string>,
  fields: Map<string, string>,
  rows: Map<string, WorkerRow> = loadDisaggWorkers(),
): ConfigWorkers | undefined {
  const facts = rowFactsOf(cells, fields);
  const r = facts === null ? undefined : rows.get(factsKey(facts));
  return r === undefined
    ? undefined
    : {
        prefill: r.prefillWorkers,
        decode: r.decodeWorkers,
        prefillDpAttention: r.cells.entry_prefill_dp_attn === 'true',
        decodeDpAttention: r.cells.entry_decode_dp_attn === 'true',
        speculative: r.cells.spec_decoding,
      };
}

/**
 * What the config entry matched to a row says of its deployment: the worker counts, whether each
 * pool ran attention data parallelism (the sample's columns record attention DP 1 for every
 * export row), and its speculative decoding (`none`, `mtp`).
 */
export interface ConfigWorkers {
  prefill: number;
  decode: number;
  prefillDpAttention: boolean;
  decodeDpAttention: boolean;
  speculative: string;
}
