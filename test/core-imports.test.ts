/**
 * The replay core is self-contained (src/core/README.md): no module under src/core imports
 * anything outside src/core but npm packages, so the run description is all it is given.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const CORE = join(import.meta.dirname, '..', 'src', 'core');

/** Every import or re-export specifier of a TypeScript source. */
function specifiers(source: string): string[] {
  return [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
}

describe('the replay core', () => {
  it('imports nothing outside src/core but npm packages', () => {
    const files = readdirSync(CORE, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    const outside: string[] = [];
    for (const file of files) {
      const path = join(CORE, file);
      for (const spec of specifiers(readFileSync(path, 'utf8'))) {
        if (spec.startsWith('node:')) outside.push(`${file}: ${spec}`);
        if (!spec.startsWith('.')) continue;
        const target = relative(CORE, resolve(dirname(path), spec));
        if (target.startsWith('..')) outside.push(`${file}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
