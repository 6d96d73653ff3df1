#!/usr/bin/env node
// Bundles the command line (`npm run build` runs it after tsc): dist/src/cli/main.js becomes one
// module holding yargs and what every command loads at start-up, and what the commands load when
// they run (zod, the YAML parser, the engines' version matching, the replay core with its random
// generators and its sketch, each command's own work) chunks in dist/src/cli/bundle/, except the
// replay command's, which is one file of its own (dist/src/cli/replay-action.js, see replayApart).
// Node.js loads a module file by file, and the command line's few hundred files cost a start-up
// several times `node -e 0`; bundled, a command reads a handful (npm run bench prints the
// start-up row). The shipped catalog's snapshot is written beside them (writeDataSnapshot).
// The other npm packages stay as they are: the pool threads' modules (dist/src/sweep/pool-task.js
// and the fit tasks) are loaded by Piscina from their compiled files, and the packages that only
// some commands need (charts, fits, tables) load from node_modules when those commands run.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** Packages every start-up or every replay loads: bundled (a CommonJS package loaded from node_modules costs an ES module its loader's work too). */
const BUNDLED = new Set(['yargs', 'zod', 'yaml', 'pure-rand', '@datadog/sketches-js', '@renovatebot/pep440']);

/** Every import of string-width (yargs', cliui's, wrap-ansi's) gets the lazy one (string-width-lazy.mjs says why). */
const STRING_WIDTH_LAZY = join(root, 'scripts', 'string-width-lazy.mjs');
export const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(bundle) {
    bundle.onResolve({ filter: /^string-width$/ }, (args) =>
      args.importer === STRING_WIDTH_LAZY ? undefined : { path: STRING_WIDTH_LAZY },
    );
  },
};

/** Where the snapshot of the shipped data files is written, relative to the package root. */
const DATA_SNAPSHOT_DIR = join('dist', 'src', 'cli', 'data-snapshot');

/**
 * The bundled command line reads the snapshot of the shipped data files (src/catalog/shipped-data.ts
 * says what it is for) that this build writes, from the compiled modules of this build
 * (dist/src/catalog/snapshot-build.js), so its values are what this build's schemas give.
 */
export function dataSnapshot(dir) {
  return {
    name: 'data-snapshot',
    setup(bundle) {
      bundle.onLoad({ filter: /[\\/]catalog[\\/]data-snapshot\.js$/ }, () => ({
        contents: `export const DATA_SNAPSHOT_DIR = ${JSON.stringify(dir)};\n`,
        loader: 'js',
      }));
    },
  };
}

async function writeDataSnapshot() {
  const { buildDataSnapshot } = await import(pathToFileURL(join(root, 'dist', 'src', 'catalog', 'snapshot-build.js')).href);
  const dir = join(root, DATA_SNAPSHOT_DIR);
  rmSync(dir, { recursive: true, force: true });
  for (const { path, json } of buildDataSnapshot(join(root, 'data'))) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), json);
  }
}

/** The replay command's own module, beside main.js: what `servesim replay` loads (see `replayApart`). */
const REPLAY_ACTION = 'replay-action.js';

/**
 * `servesim replay`'s work (dist/src/cli/actions/replay.js and all it imports) is bundled apart,
 * into one file of its own: split with the other commands it came in some twenty chunks (each
 * shared with a different set of commands), and Node.js loads an ES module file by file, which
 * cost a one-request replay more than a third of its start-up. The file repeats code the chunks
 * hold, so an object may be made by one copy of a class and checked against another: the command
 * line's error report (cli.ts) tells the errors apart without `instanceof`.
 */
const replayApart = {
  name: 'replay-apart',
  setup(bundle) {
    bundle.onResolve({ filter: /^\.\.\/actions\/replay\.js$/ }, (args) =>
      /[\\/]commands[\\/]replay\.js$/.test(args.importer) ? { path: `./${REPLAY_ACTION}`, external: true } : undefined,
    );
  },
};

async function main() {
  await writeDataSnapshot();
  rmSync(join(root, 'dist', 'src', 'cli', 'bundle'), { recursive: true, force: true });
  const common = {
    absWorkingDir: root,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // protobufjs: the sketch package's optional serialization, which servesim does not use (not installed).
    external: [...Object.keys(dependencies).filter((name) => !BUNDLED.has(name)), 'protobufjs/minimal'],
    // The YAML parser is CommonJS: its require() of Node's modules needs a require in an ES module.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: true,
    logLevel: 'warning',
  };
  const { metafile } = await build({
    ...common,
    entryPoints: ['dist/src/cli/main.js'],
    outdir: 'dist/src/cli',
    entryNames: '[name]',
    chunkNames: 'bundle/[name]-[hash]',
    allowOverwrite: true,
    splitting: true,
    metafile: true,
    plugins: [lazyStringWidth, dataSnapshot(DATA_SNAPSHOT_DIR), replayApart],
  });
  // The replay command's import names a path next to main.js: it must sit in main.js (with the commands' options).
  const importers = Object.entries(metafile.outputs)
    .filter(([, output]) => output.imports.some((i) => i.path === `./${REPLAY_ACTION}`))
    .map(([file]) => file);
  if (importers.join() !== 'dist/src/cli/main.js')
    throw new Error(`./${REPLAY_ACTION} is imported from ${importers.join(', ')}, not main.js`);
  await build({
    ...common,
    entryPoints: ['dist/src/cli/actions/replay.js'],
    outfile: join('dist', 'src', 'cli', REPLAY_ACTION),
    plugins: [dataSnapshot(DATA_SNAPSHOT_DIR)],
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
