/**
 * A sweep's pool threads load the replay core and what writes a point's results, nothing of the
 * config layer: the main thread parses configs, reads traces and looks up the catalog, and posts
 * each point as a run description (docs/sweeps.md, "On one machine"). Loading zod, the YAML
 * parser or the catalog would cost every thread its start-up time and memory.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

/** Specifiers of the imports and re-exports a module runs (type-only ones are erased). */
function runtimeSpecifiers(source: string): string[] {
  const statements = source.matchAll(/(?:^|\n)\s*(import|export)\b(\s+type\b)?[^'";]*?from\s*['"]([^'"]+)['"]/g);
  return [...statements].filter((m) => m[2] === undefined).map((m) => m[3]);
}

/** Every source module and npm package `entry` loads, following runtime imports. */
function loadedBy(entry: string): { modules: string[]; packages: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (path: string): void => {
    if (modules.has(path)) return;
    modules.add(path);
    for (const spec of runtimeSpecifiers(readFileSync(path, 'utf8'))) {
      if (spec.startsWith('.')) visit(resolve(dirname(path), spec).replace(/\.js$/, '.ts'));
      else if (!spec.startsWith('node:')) packages.add(spec.split('/')[0]);
    }
  };
  visit(join(SRC, entry));
  return { modules: [...modules].map((m) => relative(SRC, m)).sort(), packages: [...packages].sort() };
}

describe('a pool thread', () => {
  it('loads no config parser, zod, YAML or catalog', () => {
    const { modules, packages } = loadedBy('sweep/pool-task.ts');
    expect(modules).toContain('replay-run.ts');
    expect(modules).toContain('core/simulation.ts');
    const configLayer = modules.filter(
      (m) => m.startsWith('catalog/') || (m.startsWith('config/') && m !== 'config/errors.ts' && m !== 'config/limits.ts'),
    );
    expect(configLayer).toEqual([]);
    expect(packages.filter((p) => p === 'zod' || p === 'yaml')).toEqual([]);
  });
});
