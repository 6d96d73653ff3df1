/**
 * Global setup of the end-to-end suite: its tests run the compiled files in dist/ (the CLI, the
 * pool threads' modules), so a dist/ older than the sources would test yesterday's code and pass.
 * `npm run test:e2e` builds first; running the suite any other way after an edit fails here,
 * naming the first source newer than its compiled file.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The first source under src/ or bench/ whose compiled file is missing or older; null when dist/ is current. */
export function staleSource(root = ROOT): string | null {
  for (const folder of ['src', 'bench']) {
    const files = readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.d.ts'),
    );
    for (const file of files.sort()) {
      const source = join(root, folder, file);
      const compiled = join(root, 'dist', folder, file.replace(/\.ts$/, '.js'));
      if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(source).mtimeMs) return join(folder, file);
    }
  }
  return null;
}

export default function setup(): void {
  const stale = staleSource();
  if (stale !== null) {
    throw new Error(`dist/ is older than ${stale}: run \`npm run build\` first (\`npm run test:e2e\` does)`);
  }
}
