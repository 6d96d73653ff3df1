/**
 * The snapshot of the shipped data files that the bundled command line reads (`shipped-data.ts`
 * says what it is for): each file read and validated by the functions that read it at run time,
 * its text kept to be compared with the file's text when it is read. `scripts/bundle-cli.mjs`
 * calls it from the compiled modules of the same build, so a value is what that build's schemas
 * give. A file that does not validate is left out (it is read, and refused, at run time).
 *
 * With every file valid, the snapshot also has an index naming each file by its identity on disk
 * (`fileIdentity`) and the names its entry answers to; without it (a file left out, or not a
 * regular file), every file is read at run time.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ConfigError, InputError } from '../config/errors.js';
import { MAX_YAML_BYTES } from '../config/limits.js';
import { readTextFile } from '../io/read-text.js';
import { parseEngineDefaults } from './engine-defaults.js';
import { parseCatalogEntry } from './load.js';
import {
  fileIdentity,
  snapshotPath,
  SNAPSHOT_INDEX,
  type IndexedFile,
  type ShippedKind,
  type SnapshotFile,
  type SnapshotIndex,
} from './shipped-data.js';

/** The snapshot of `dataDir` (a package's `data/`): each file's path in the snapshot's folder and its JSON. */
export function buildDataSnapshot(dataDir: string): Array<{ path: string; json: string }> {
  const out: Array<{ path: string; json: string }> = [];
  const index: SnapshotIndex = { models: [], hardware: [], engineDefaults: '' };
  let complete = true;
  const add = (kind: ShippedKind, name: string, file: string, validate: (text: string) => unknown): void => {
    const identity = fileIdentity(file);
    const text = readTextFile(file, file, MAX_YAML_BYTES, 'catalog file');
    let value: unknown;
    try {
      value = validate(text);
    } catch (err) {
      if (err instanceof ConfigError || err instanceof InputError) {
        complete = false;
        return;
      }
      throw err;
    }
    // Read as it was when its identity was taken (a file written meanwhile has another).
    if (identity === null || identity !== fileIdentity(file)) complete = false;
    else if (kind === 'engine-defaults') index.engineDefaults = identity;
    else {
      const entry = value as { id: string; name: string; aliases: string[] };
      const names = [...new Set([entry.id, entry.name, ...entry.aliases].map((n) => n.toLowerCase()))];
      index[kind].push({ name, identity, names } satisfies IndexedFile);
    }
    const snapshot: SnapshotFile = { text, value };
    const json = JSON.stringify(snapshot);
    // The value is handed out as JSON.parse(json).value: it must come back the same.
    if (!isDeepStrictEqual(JSON.parse(json), snapshot)) throw new Error(`${file}: its validated value does not survive JSON`);
    out.push({ path: snapshotPath(kind, name), json });
  };
  for (const kind of ['models', 'hardware'] as const) {
    const folder = join(dataDir, kind);
    for (const name of readdirSync(folder).sort()) {
      const file = join(folder, name);
      if (name.endsWith('.yaml')) add(kind, name, file, (text) => parseCatalogEntry(kind, text, file));
    }
  }
  const defaults = join(dataDir, 'engine-defaults.yaml');
  add('engine-defaults', 'engine-defaults.yaml', defaults, (text) => parseEngineDefaults(text, defaults));
  if (complete) out.push({ path: SNAPSHOT_INDEX, json: JSON.stringify(index) });
  return out;
}
