#!/usr/bin/env node
// The `servesim` command: runs the compiled CLI, or says how to build it when it is not built
// (for example after `npm ci --ignore-scripts`, which skips the build that `npm ci` runs).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const main = join(root, 'dist', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(
    'servesim is not built yet: its compiled files (dist/) are missing.\n' +
      `Build it once with \`npm run build\` in ${root}\n` +
      '(`npm ci` builds it; `npm ci --ignore-scripts` skips the build).\n',
  );
  process.exit(1);
}
await import(pathToFileURL(main).href);
