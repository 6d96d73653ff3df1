/**
 * Reading the model and GPU catalog: the bundled `data/models/*.yaml` and `data/hardware/*.yaml`,
 * then the folders named by the `SERVESIM_CATALOG` environment variable (a list separated by the
 * platform's path delimiter, each holding `models/` and/or `hardware/`), whose entries replace
 * bundled ones of the same id. Every file is validated strictly; a bad file is a `ConfigError`
 * naming it and the dotted field. Names resolve case-insensitively by id, `name` or any alias.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, join, relative, resolve } from 'node:path';
import type * as z from 'zod/mini';
import english from 'zod/v4/locales/en.js';
import { ConfigError, InputError, makeConfigIssue, type ConfigIssue } from '../config/errors.js';
import { MAX_YAML_BYTES } from '../config/limits.js';
import { parseYamlText } from '../config/yaml.js';
import { packageRoot } from '../io/paths.js';
import { readTextFile } from '../io/read-text.js';
import { parameterCounts } from './architecture.js';
import { hardwareEntrySchema, modelEntrySchema, type HardwareEntry, type ModelEntry } from './schema.js';
import { indexedValue, intactShippedFolder, shippedValue } from './shipped-data.js';

/**
 * How far the parameter counts a model entry states may be from the counts its architecture gives
 * (`parameterCounts`): publishers round their figures (8.2B), and count embeddings and small
 * weights (norms, biases) their own way. Every shipped entry is within 2.7 % (total) and 4.2 %
 * (active, under the closer of the two embedding conventions); a wider gap is a wrong field.
 */
export const PARAMETER_TOLERANCE = { total: 0.03, active: 0.05 } as const;

/** The package root (where the bundled `data/` is). */
export { packageRoot };

export interface Catalog {
  models: ModelEntry[];
  hardware: HardwareEntry[];
  /** The file each entry was read from, by id (for messages). */
  files: Map<string, string>;
}

let cached: { key: string; catalog: Catalog } | undefined;

/**
 * The catalog folders in reading order: the bundled `data/` first, then `SERVESIM_CATALOG`'s. A
 * folder it names that does not exist (a typo would otherwise leave the bundled catalog in use
 * without a word) is an `InputError` naming the variable and the path.
 */
export function catalogFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const extra = (env.SERVESIM_CATALOG ?? '')
    .split(delimiter)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const folder of extra) {
    const stats = statSync(folder, { throwIfNoEntry: false });
    if (stats === undefined || !stats.isDirectory()) {
      const what = stats === undefined ? 'no such folder' : 'not a folder';
      throw new InputError('SERVESIM_CATALOG', 0, `${folder}: ${what} (it names catalog folders, each holding models/ and/or hardware/)`);
    }
  }
  return [join(packageRoot(), 'data'), ...extra.map((folder) => resolve(folder))];
}

/** The catalog (read once per process and folder list). */
export function loadCatalog(folders: readonly string[] = catalogFolders()): Catalog {
  const key = folders.join('\n');
  if (cached?.key === key) return cached.catalog;
  const catalog = readCatalog(folders);
  cached = { key, catalog };
  return catalog;
}

function label(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith('..') ? file : rel;
}

type EntryKind = 'models' | 'hardware';
type EntryOf<K extends EntryKind> = K extends 'models' ? ModelEntry : HardwareEntry;
/**
 * zod's own texts (a list item of the wrong type): zod/mini sets no locale, and classic zod sets
 * English only once one of its schemas is made, so the parse names it.
 */
const zodTexts = english().localeError;

/**
 * A catalog file's entry from its text, validated (the build's snapshot of the shipped files
 * uses it, `snapshot-build.ts`). A bad file is a `ConfigError` naming `shown` and the dotted
 * field, or an `InputError` naming its line.
 */
export function parseCatalogEntry<K extends EntryKind>(kind: K, text: string, shown: string): EntryOf<K> {
  const raw = parseYamlText(text, shown, 'catalog file');
  const schema: z.ZodMiniType<ModelEntry | HardwareEntry> = kind === 'models' ? modelEntrySchema : hardwareEntrySchema;
  const parsed = schema.safeParse(raw, { reportInput: true, error: zodTexts });
  if (!parsed.success) {
    const issues: ConfigIssue[] = parsed.error.issues.map((issue) => {
      const path = issue.path.map(String);
      if (issue.code === 'unrecognized_keys') path.push(issue.keys[0]);
      return makeConfigIssue(shown, path.join('.'), issue.message);
    });
    throw new ConfigError(issues);
  }
  return parsed.data as EntryOf<K>;
}

/** Reads a catalog file (`text`: what was read of it already), from the build's snapshot when the file is a shipped one as shipped. */
function readEntry<K extends EntryKind>(
  folder: string,
  name: string,
  kind: K,
  files: Map<string, string>,
  text?: string,
  value?: EntryOf<K>,
): EntryOf<K> {
  const file = join(folder, name);
  const shown = label(file);
  let entry = value;
  if (entry === undefined) {
    const source = text ?? readTextFile(file, shown, MAX_YAML_BYTES, 'catalog file');
    entry = (shippedValue(kind, name, source) as EntryOf<K> | undefined) ?? parseCatalogEntry(kind, source, shown);
  }
  const id = name.slice(0, -'.yaml'.length);
  if (entry.id !== id)
    throw new ConfigError(shown, 'id', `must equal the file name without .yaml (${JSON.stringify(id)}), got ${JSON.stringify(entry.id)}`);
  files.set(id, shown);
  entryFiles.set(entry, shown);
  return entry;
}

/** The file each entry read was read from (for the messages of `checkModel`). */
const entryFiles = new WeakMap<object, string>();

function readEntries<K extends EntryKind>(folder: string, kind: K, files: Map<string, string>): Map<string, EntryOf<K>> {
  const out = new Map<string, EntryOf<K>>();
  if (!existsSync(folder)) return out;
  for (const name of readdirSync(folder).sort()) {
    if (name.endsWith('.yaml')) out.set(name.slice(0, -'.yaml'.length), readEntry(folder, name, kind, files));
  }
  return out;
}

function readCatalog(folders: readonly string[]): Catalog {
  const files = new Map<string, string>();
  const models = new Map<string, ModelEntry>();
  const hardware = new Map<string, HardwareEntry>();
  for (const folder of folders) {
    for (const [id, entry] of readEntries(join(folder, 'models'), 'models', files)) models.set(id, entry);
    for (const [id, entry] of readEntries(join(folder, 'hardware'), 'hardware', files)) hardware.set(id, entry);
  }
  const catalog = { models: [...models.values()], hardware: [...hardware.values()], files };
  checkNames(catalog.models, files);
  checkNames(catalog.hardware, files);
  for (const model of catalog.models) checkModel(model, files.get(model.id) ?? model.id);
  return catalog;
}

/** Every name (id, name, alias) must pick one entry. */
function checkNames(entries: readonly { id: string; name: string; aliases: string[] }[], files: Map<string, string>): void {
  const owner = new Map<string, string>();
  for (const entry of entries) {
    for (const name of new Set([entry.id, entry.name, ...entry.aliases].map((n) => n.toLowerCase()))) {
      const other = owner.get(name);
      if (other !== undefined && other !== entry.id) {
        throw new ConfigError(
          files.get(entry.id) ?? entry.id,
          'aliases',
          `the name ${JSON.stringify(name)} also names ${other} (${files.get(other)})`,
        );
      }
      owner.set(name, entry.id);
    }
  }
}

/** Cross-field rules of a model entry: the blocks its attention type needs, layer counts that add up. */
function checkModel(model: ModelEntry, file: string): void {
  const arch = model.architecture;
  const attention = arch.attention;
  if (attention.type === 'mla') {
    for (const field of ['kv_lora_rank', 'qk_nope_head_dim', 'qk_rope_head_dim', 'v_head_dim'] as const) {
      if (attention[field] === undefined) throw new ConfigError(file, `architecture.attention.${field}`, 'is required with type mla');
    }
  }
  const special = (attention.sliding_window_layers ?? 0) + (attention.linear_attention_layers ?? 0);
  if (special > arch.layers) {
    throw new ConfigError(
      file,
      'architecture.attention',
      `sliding-window and linear-attention layers (${special}) exceed the ${arch.layers} layers`,
    );
  }
  if ((attention.sliding_window_layers ?? 0) > 0 && attention.sliding_window === undefined) {
    throw new ConfigError(file, 'architecture.attention.sliding_window', 'is required when sliding_window_layers > 0');
  }
  if ((attention.linear_attention_layers ?? 0) > 0 && attention.linear_attention === undefined) {
    throw new ConfigError(file, 'architecture.attention.linear_attention', 'is required when linear_attention_layers > 0');
  }
  if (arch.moe !== undefined) {
    if (arch.moe.experts_per_token > arch.moe.experts) {
      throw new ConfigError(
        file,
        'architecture.moe.experts_per_token',
        `must be at most experts (${arch.moe.experts}), got ${arch.moe.experts_per_token}`,
      );
    }
    if (arch.moe.dense_layers > 0 && arch.intermediate_size === undefined) {
      throw new ConfigError(file, 'architecture.intermediate_size', 'is required when moe.dense_layers > 0');
    }
    if (arch.moe.dense_layers > arch.layers)
      throw new ConfigError(file, 'architecture.moe.dense_layers', `exceeds the ${arch.layers} layers`);
  } else if (arch.intermediate_size === undefined) {
    throw new ConfigError(file, 'architecture.intermediate_size', 'is required for a dense model');
  }
  if (model.parameters.active > model.parameters.total) {
    throw new ConfigError(
      file,
      'parameters.active',
      `must be at most parameters.total (${model.parameters.total}), got ${model.parameters.active}`,
    );
  }
  if (attention.kv_heads > attention.heads) {
    throw new ConfigError(
      file,
      'architecture.attention.kv_heads',
      `must be at most heads (${attention.heads}), got ${attention.kv_heads}: a KV head serves one or more query heads`,
    );
  }
  if (attention.type === 'gqa' && attention.heads % attention.kv_heads !== 0) {
    throw new ConfigError(
      file,
      'architecture.attention.kv_heads',
      `must divide heads (${attention.heads}), got ${attention.kv_heads}: each KV head serves the same number of query heads`,
    );
  }
  checkParameterCounts(model, file);
}

function billions(count: number): string {
  return `${(count / 1e9).toPrecision(4)} B`;
}

/**
 * The stated parameter counts must agree with the architecture within PARAMETER_TOLERANCE: a
 * wrong layer count, width or expert count changes the computed count (and every roofline time
 * and memory figure built on it), a wrong stated count is wrong on the page.
 */
function checkParameterCounts(model: ModelEntry, file: string): void {
  const counts = parameterCounts(model);
  const check = (field: 'total' | 'active', computed: number[]): void => {
    const stated = model.parameters[field];
    const gaps = computed.map((c) => c / stated - 1);
    const closest = gaps.reduce((best, gap) => (Math.abs(gap) < Math.abs(best) ? gap : best));
    if (Math.abs(closest) <= PARAMETER_TOLERANCE[field]) return;
    const computedShown = computed[gaps.indexOf(closest)];
    throw new ConfigError(
      file,
      `parameters.${field}`,
      `is ${billions(stated)}, but the architecture gives ${billions(computedShown)} (${(closest * 100).toFixed(1)} %, more than the ` +
        `${PARAMETER_TOLERANCE[field] * 100} % the counts may differ): check it and the architecture fields against the checkpoint's config.json`,
    );
  };
  check('total', [counts.total]);
  // Publishers count the active parameters with or without the input embedding.
  check('active', [counts.active, counts.activeWithEmbedding]);
}

function lookup<T extends { id: string; name: string; aliases: string[] }>(entries: readonly T[], name: string): T | undefined {
  const wanted = name.toLowerCase();
  return entries.find(
    (e) => e.id.toLowerCase() === wanted || e.name.toLowerCase() === wanted || e.aliases.some((a) => a.toLowerCase() === wanted),
  );
}

/** Entries read one file at a time, by file. */
const fileCache = new Map<string, unknown>();
/** What `findOne` found for a kind, a name and a folder list (null: nothing); a replay looks the same names up several times. */
const foundCache = new Map<string, unknown>();

/**
 * Finds an entry without reading the whole catalog: only the files whose text mentions the name
 * are parsed (a config names one model and one GPU; parsing every file would cost each command
 * and each pool thread tens of milliseconds). Later folders win, as in `loadCatalog`.
 */
function findOne<K extends EntryKind>(kind: K, name: string, folders: readonly string[]): EntryOf<K> | undefined {
  const wanted = name.toLowerCase();
  const key = [kind, wanted, ...folders].join('\0');
  if (foundCache.has(key)) return (foundCache.get(key) ?? undefined) as EntryOf<K> | undefined;
  const found = scanFor(kind, name, folders);
  foundCache.set(key, found ?? null);
  return found;
}

function scanFor<K extends EntryKind>(kind: K, name: string, folders: readonly string[]): EntryOf<K> | undefined {
  const wanted = name.toLowerCase();
  for (let i = folders.length - 1; i >= 0; i--) {
    const folder = join(folders[i], kind);
    // The shipped folder as the build read it: its index names each file's entry without reading it.
    const indexed = i === 0 ? intactShippedFolder(kind, folder) : undefined;
    if (indexed !== undefined) {
      const file = indexed.find((f) => f.names.includes(wanted));
      if (file === undefined) continue;
      const path = join(folder, file.name);
      let entry = fileCache.get(path) as EntryOf<K> | undefined;
      if (entry === undefined) {
        const value = indexedValue(kind, file.name) as EntryOf<K> | undefined;
        if (value !== undefined) {
          entry = readEntry(folder, file.name, kind, new Map(), undefined, value);
          fileCache.set(path, entry);
        }
      }
      if (entry !== undefined) return entry;
    }
    if (!existsSync(folder)) continue;
    for (const file of readdirSync(folder).sort()) {
      if (!file.endsWith('.yaml')) continue;
      const path = join(folder, file);
      // Read as the parser would (size limit, UTF-8): a damaged file is named even when it is not the one wanted.
      const text = readTextFile(path, label(path), MAX_YAML_BYTES, 'catalog file');
      if (!text.toLowerCase().includes(wanted)) continue;
      let entry = fileCache.get(path) as EntryOf<K> | undefined;
      if (entry === undefined) {
        entry = readEntry(folder, file, kind, new Map(), text);
        fileCache.set(path, entry);
      }
      if (lookup([entry], name) !== undefined) return entry;
    }
  }
  return undefined;
}

/** The model a name (id, Hugging Face name or alias, any case) picks, or undefined. */
export function findModel(name: string, catalog?: Catalog): ModelEntry | undefined {
  if (catalog !== undefined) return lookup(catalog.models, name);
  const folders = catalogFolders();
  const entry = findOne('models', name, folders);
  if (entry !== undefined) checkModel(entry, entryFiles.get(entry) ?? entry.id);
  return entry;
}

/** The GPU a name (id or alias, any case) picks, or undefined. */
export function findHardware(name: string, catalog?: Catalog): HardwareEntry | undefined {
  if (catalog !== undefined) return lookup(catalog.hardware, name);
  return findOne('hardware', name, catalogFolders());
}
