/**
 * The shipped data files without parsing them: `npm run build` writes, for every
 * `data/models/*.yaml`, `data/hardware/*.yaml` and `data/engine-defaults.yaml`, the file's text
 * and the value its schema gave (`snapshot-build.ts`), and the bundled command line reads that
 * for a file whose text is exactly the text the build read. Parsing the YAML and checking it
 * against its schema cost every replay tens of milliseconds of its start-up (npm run bench's
 * start-up row). Any other text (an edited file, a `SERVESIM_CATALOG` entry of its own) is parsed
 * and checked as always, and so is every file where there is no snapshot (the modules as
 * compiled, which the tests and the pool threads load).
 *
 * The snapshot's index (`index.json`) goes one step further: it names each shipped file by its
 * identity on disk (size, device, inode, modification and status-change times in nanoseconds), so
 * while a folder's files are all the ones the build read, a name is looked up without reading any
 * of them (`intactShippedFolder`). Any write to a file changes its status-change time, which no
 * user can set back, and a copied or replaced file has another inode: such a folder is read file by
 * file as above, and a damaged file in it is named.
 */
import { readFileSync, readdirSync, statSync, type BigIntStats } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../io/paths.js';
import { DATA_SNAPSHOT_DIR } from './data-snapshot.js';

/** The kinds of shipped file: a model entry, a GPU entry, the engines' defaults. */
export type ShippedKind = 'models' | 'hardware' | 'engine-defaults';

/** One file of the snapshot: the text read and the validated value. */
export interface SnapshotFile {
  text: string;
  value: unknown;
}

/** The snapshot file of a data file `name` (`qwen3-32b.yaml`) of a kind, relative to the snapshot's folder. */
export function snapshotPath(kind: ShippedKind, name: string): string {
  return kind === 'engine-defaults' ? 'engine-defaults.json' : join(kind, `${name}.json`);
}

/**
 * The validated value of the data file `name` of this kind when the build read exactly `text`
 * from it, a fresh copy; undefined otherwise, and always without a snapshot. `dir`: the snapshot's
 * folder, relative to the package root.
 */
export function shippedValue(kind: ShippedKind, name: string, text: string, dir = DATA_SNAPSHOT_DIR): unknown {
  const file = snapshotFile(kind, name, dir);
  return file?.text === text ? file.value : undefined;
}

/**
 * The snapshot's file of the data file `name` of this kind, freshly parsed; undefined where there
 * is none (a file the build did not read: a new one, one it could not validate) or it is not whole.
 */
function snapshotFile(kind: ShippedKind, name: string, dir: string | null): SnapshotFile | undefined {
  if (dir === null) return undefined;
  try {
    return JSON.parse(readFileSync(resolve(packageRoot(), dir, snapshotPath(kind, name)), 'utf8')) as SnapshotFile;
  } catch {
    return undefined;
  }
}

/** A shipped catalog file in the index: its name, its identity on disk, the names it answers to (lower case). */
export interface IndexedFile {
  name: string;
  identity: string;
  names: string[];
}

/** The snapshot's index: the catalog folders' files in order, and the engines' defaults, by identity. */
export interface SnapshotIndex {
  models: IndexedFile[];
  hardware: IndexedFile[];
  engineDefaults: string;
}

/** Where the index is in the snapshot's folder. */
export const SNAPSHOT_INDEX = 'index.json';

/** A file's identity on disk (see the module's comment); null for anything but a regular file. */
export function fileIdentity(path: string): string | null {
  let stats: BigIntStats | undefined;
  try {
    stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return null;
  }
  if (stats === undefined || !stats.isFile()) return null;
  return `${stats.size}:${stats.dev}:${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

let indexRead: { dir: string; index: SnapshotIndex | null } | undefined;

function snapshotIndex(dir: string): SnapshotIndex | null {
  if (indexRead?.dir === dir) return indexRead.index;
  let index: SnapshotIndex | null;
  try {
    index = JSON.parse(readFileSync(resolve(packageRoot(), dir, SNAPSHOT_INDEX), 'utf8')) as SnapshotIndex;
  } catch {
    index = null; // no index: the build could not validate every file
  }
  indexRead = { dir, index };
  return index;
}

const intactFolders = new Map<string, IndexedFile[] | null>();

/**
 * The indexed files of the package's `data/<kind>` folder when the folder holds exactly the
 * `.yaml` files the build read, each unchanged on disk (its identity); undefined otherwise, for
 * any other folder, and without a snapshot. Checked once per process and folder.
 */
export function intactShippedFolder(kind: 'models' | 'hardware', folder: string, dir = DATA_SNAPSHOT_DIR): IndexedFile[] | undefined {
  if (dir === null) return undefined;
  const key = `${dir}\0${folder}`;
  let files = intactFolders.get(key);
  if (files === undefined) {
    files = intactFiles(kind, folder, dir);
    intactFolders.set(key, files);
  }
  return files ?? undefined;
}

function intactFiles(kind: 'models' | 'hardware', folder: string, dir: string): IndexedFile[] | null {
  if (resolve(folder) !== join(packageRoot(), 'data', kind)) return null;
  const index = snapshotIndex(dir);
  if (index === null) return null;
  let names: string[];
  try {
    names = readdirSync(folder)
      .filter((name) => name.endsWith('.yaml'))
      .sort();
  } catch {
    return null;
  }
  const files = index[kind];
  if (names.length !== files.length) return null;
  for (let i = 0; i < files.length; i++) {
    if (names[i] !== files[i].name || fileIdentity(join(folder, names[i])) !== files[i].identity) return null;
  }
  return files;
}

/** The validated value of a shipped file of an intact folder (`intactShippedFolder`), a fresh copy. */
export function indexedValue(kind: ShippedKind, name: string, dir = DATA_SNAPSHOT_DIR): unknown {
  return snapshotFile(kind, name, dir)?.value;
}

/** The engines' defaults from the snapshot when `file` (the shipped one) is unchanged on disk; undefined otherwise. */
export function intactEngineDefaults(file: string, dir = DATA_SNAPSHOT_DIR): unknown {
  if (dir === null || resolve(file) !== join(packageRoot(), 'data', 'engine-defaults.yaml')) return undefined;
  const index = snapshotIndex(dir);
  if (index === null || fileIdentity(file) !== index.engineDefaults) return undefined;
  return indexedValue('engine-defaults', 'engine-defaults.yaml', dir);
}
