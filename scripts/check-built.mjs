#!/usr/bin/env node
// Exits 1 with how to build when the compiled files are missing (`npm ci --ignore-scripts` skips
// the build); the npm scripts that run compiled files call it first.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const wanted = process.argv.slice(2);
const missing = (wanted.length > 0 ? wanted : ['dist/src/cli/main.js']).filter((file) => !existsSync(join(root, file)));
if (missing.length > 0) {
  process.stderr.write(
    `servesim is not built yet (${missing.join(', ')} missing).\n` +
      'Build it once with `npm run build` (`npm ci` builds it; `npm ci --ignore-scripts` skips the build).\n',
  );
  process.exit(1);
}
