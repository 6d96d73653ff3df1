/**
 * The shipped data files without parsing them: `npm run build` writes, for every
 * `data/models/*.yaml`, `data/hardware/*.yaml` and `data/engine-defaults.yaml`, the file's text
 * and the value its schema gave (`snapshot-build.ts`), and the bundled command line reads that
 * for a file whose text is exactly the text the build read. Parsing the YAML and checking it
 * against its schema cost every replay tens of milliseconds of its start-up (npm run bench's
 * start-up row). Any other text (an edited file, a `SERVESIM_CATALOG` entry of its own) is parsed
 * and checked as always, and so is every file where there is no snapshot (the modules as
 * compiled, which the tests and the pool threads load).
 */
import { readFileSync } from 'node:fs';
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
  if (dir === null) return undefined;
  let json: string;
  try {
    json = readFileSync(resolve(packageRoot(), dir, snapshotPath(kind, name)), 'utf8');
  } catch {
    return undefined; // a file the build did not read (a new one, one it could not validate)
  }
  const file = JSON.parse(json) as SnapshotFile;
  return file.text === text ? file.value : undefined;
}
