#!/usr/bin/env node
// The `servesim` command: runs the compiled CLI, or says how to build it when it is not built
// (for example after `npm ci --ignore-scripts`, which skips the build that `npm ci` runs).
// A CommonJS file (bin/package.json says so), as is the compiled module it runs: Node.js starts
// an ES module entry with its ES module loader, which a plain replay line does not need
// (scripts/bundle-cli.mjs, writeMainScript).
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const main = join(root, 'dist', 'src', 'cli', 'main.cjs');
if (!existsSync(main)) {
  process.stderr.write(
    'servesim is not built yet: its compiled files (dist/) are missing.\n' +
      `Build it once with \`npm run build\` in ${root}\n` +
      '(`npm ci` builds it; `npm ci --ignore-scripts` skips the build).\n',
  );
  process.exit(1);
}
require(main);
