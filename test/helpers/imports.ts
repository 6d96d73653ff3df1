/**
 * What a source module loads when it is imported: its static imports and re-exports, followed
 * through src/ (type-only ones are erased, and an `import()` inside a function loads nothing
 * until it runs). For tests that keep a command's start-up or a pool thread light.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** Specifiers of the imports and re-exports a module runs (type-only ones are erased). */
function runtimeSpecifiers(source: string): string[] {
  const statements = source.matchAll(/(?:^|\n)\s*(import|export)\b(\s+type\b)?[^'";]*?from\s*['"]([^'"]+)['"]/g);
  return [...statements].filter((m) => m[2] === undefined && !isTypeOnlyList(m[0])).map((m) => m[3]);
}

/** `import { type A, type B } from ...`: every name type-only, so TypeScript drops the statement. */
function isTypeOnlyList(statement: string): boolean {
  const names = /\{([^}]*)\}/.exec(statement);
  if (names === null || /^\s*(import|export)\s+[\w$]+\s*,/.test(statement.replace(/^\n/, ''))) return false;
  const list = names[1]
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return list.length > 0 && list.every((name) => name.startsWith('type '));
}

/** Every source module (relative to src/) and npm package `entry` (relative to src/) loads, following runtime imports. */
export function loadedBy(entry: string): { modules: string[]; packages: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (path: string): void => {
    if (modules.has(path)) return;
    modules.add(path);
    for (const spec of runtimeSpecifiers(readFileSync(path, 'utf8'))) {
      if (spec.startsWith('.')) visit(resolve(dirname(path), spec).replace(/\.js$/, '.ts'));
      else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
  };
  visit(join(SRC, entry));
  return { modules: [...modules].map((m) => relative(SRC, m)).sort(), packages: [...packages].sort() };
}
