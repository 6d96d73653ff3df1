/**
 * Paths as reports show them: never absolute, so that a report reads the same on every machine
 * and says nothing about the machine it was written on. A path under the current folder is shown
 * relative to it; one of the files servesim ships (`data/`, `calibration/`, `sweeps/`) relative to
 * the package; anything else relative to the current folder.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The package's root folder: the nearest folder above this module that holds a package.json,
 * wherever the module is (`src/io/paths.ts`, `dist/src/io/paths.js`, or a chunk of the bundled
 * command line in `dist/src/cli/bundle/`).
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  root = dir;
  return root;
}

function inside(folder: string, path: string): string | null {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : null;
}

export function displayPath(path: string): string {
  const absolute = resolve(path);
  if (absolute === resolve(process.cwd())) return '.';
  return inside(process.cwd(), absolute) ?? inside(packageRoot(), absolute) ?? relative(process.cwd(), absolute);
}

/** A path printed on the terminal: relative to the current folder when that is shorter, else as it is. */
export function terminalPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel !== '' && !rel.startsWith('..') && rel.length < path.length ? rel : path;
}
