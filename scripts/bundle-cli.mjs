#!/usr/bin/env node
// Bundles the command line (`npm run build` runs it after tsc): dist/src/cli/main.js becomes a small
// module that reads the command line and loads dist/src/cli/cli.js (yargs and what every command loads
// at start-up) or, for a plain replay line, the replay command alone (src/cli/replay-arguments.ts); what
// the commands load when they run (zod, the YAML parser, the engines' version matching, the replay core
// with its random generators and its sketch, each command's own work) becomes chunks in
// dist/src/cli/bundle/, except the replay command's, which is one file of its own run with V8's code
// cache (dist/src/cli/replay-action.js, see replayApart and writeReplayScript). The installed command
// runs main.js's CommonJS twin, dist/src/cli/main.cjs (see writeMainScript).
// Node.js loads a module file by file, and the command line's few hundred files cost a start-up
// several times `node -e 0`; bundled, a command reads a handful (npm run bench prints the
// start-up row). The shipped catalog's snapshot is written beside them (writeDataSnapshot).
// The other npm packages stay as they are: the pool threads' modules (dist/src/sweep/pool-task.js
// and the fit tasks) are loaded by Piscina from their compiled files, and the packages that only
// some commands need (charts, fits, tables) load from node_modules when those commands run.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
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

/** yargs' import of Node.js's assert module gets the lazy one (assert-lazy.mjs says why). */
const ASSERT_LAZY = join(root, 'scripts', 'assert-lazy.mjs');
export const lazyAssert = {
  name: 'lazy-assert',
  setup(bundle) {
    bundle.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
      args.importer === ASSERT_LAZY || !/[\\/]node_modules[\\/]yargs[\\/]/.test(args.importer) ? undefined : { path: ASSERT_LAZY },
    );
  },
};

/**
 * yargs' platform shim reads `process.stdout.columns` when it loads, which builds Node.js's stream
 * for standard output (for a pipe, with Node.js's socket modules): a tenth of `servesim --help`'s
 * start-up, for a width the command line sets itself (cli.ts). The bundle reads it when yargs asks.
 */
const YARGS_SHIM = /[\\/]node_modules[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/;
const EAGER_COLUMNS = "stdColumns: typeof process.stdout.columns !== 'undefined' ? process.stdout.columns : null";
export const lazyYargsColumns = {
  name: 'lazy-yargs-columns',
  setup(bundle) {
    bundle.onLoad({ filter: YARGS_SHIM }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (text.split(EAGER_COLUMNS).length !== 2)
        throw new Error(`${args.path}: its stdColumns line is not the one the bundle reads lazily`);
      return {
        contents: text.replace(EAGER_COLUMNS, `get stdColumns() { return ${EAGER_COLUMNS.slice('stdColumns: '.length)} }`),
        loader: 'js',
      };
    });
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
    // The replay command's handler (commands/replay.js) and main.js's direct path (replay-arguments.ts).
    bundle.onResolve({ filter: /^\.{1,2}\/actions\/replay\.js$/ }, (args) =>
      /[\\/]cli[\\/](commands[\\/]replay|main)\.js$/.test(args.importer) ? { path: `./${REPLAY_ACTION}`, external: true } : undefined,
    );
  },
};

/** The installed command's module (bin/servesim.js requires it): main.js as one CommonJS file (see `writeMainScript`). */
const MAIN_SCRIPT = join('dist', 'src', 'cli', 'main.cjs');

/**
 * main.js's direct path in main.cjs: the replay command's module (replay-entry.ts, which runs the
 * replay command's file with its code cache) bundled in, where main.js imports it as a file of its own.
 */
const replayInline = {
  name: 'replay-inline',
  setup(bundle) {
    bundle.onResolve({ filter: /^\.\/actions\/replay\.js$/ }, (args) =>
      /[\\/]cli[\\/]main\.js$/.test(args.importer) ? { path: join(root, 'dist', 'src', 'cli', 'replay-entry.js') } : undefined,
    );
  },
};

/**
 * main.js's import of cli.js: the module that runs cli.cjs with its code cache (cli-entry.ts;
 * `writeCliScript`), bundled into main.cjs, and in the bundled main.js the compiled module beside
 * it (it finds cli.cjs beside itself).
 */
const cliInline = {
  name: 'cli-inline',
  setup(bundle) {
    bundle.onResolve({ filter: /^\.\/cli\.js$/ }, (args) => {
      if (!/[\\/]cli[\\/]main\.js$/.test(args.importer)) return undefined;
      return bundle.initialOptions.format === 'cjs'
        ? { path: join(root, 'dist', 'src', 'cli', 'cli-entry.js') }
        : { path: './cli-entry.js', external: true };
    });
  },
};

/**
 * main.js (tsc's, before the bundle below replaces it) as the CommonJS file the installed command
 * runs, dist/src/cli/main.cjs: Node.js starts an ES module entry with its ES module loader, which
 * cost a one-request replay about a tenth of its instructions, while a plain replay line needs no ES
 * module: main.cjs holds the command line's reading and the code cache's runner, and runs the
 * replay command's file (replay-action.cjs) itself. Every other command line imports cli.js, an ES
 * module, as main.js does.
 */
async function writeMainScript(common) {
  await build({
    ...common,
    format: 'cjs',
    entryPoints: ['dist/src/cli/main.js'],
    outfile: MAIN_SCRIPT,
    // A CommonJS file has no import.meta: its URL is the file's own (replay-entry.ts finds its files by it).
    define: { 'import.meta.url': '__importMetaUrl' },
    banner: { js: "'use strict';const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [replayInline, cliInline],
  });
  // main.cjs loads ES modules only through cli.cjs's import() (cli-entry.ts): the command's own work.
  const text = readFileSync(join(root, MAIN_SCRIPT), 'utf8');
  const imports = [...text.matchAll(/\bimport\s*\(\s*([^)]*)\)/g)].map((m) => m[1]);
  if (imports.length !== 1 || !/^new URL\(/.test(imports[0]))
    throw new Error(`${MAIN_SCRIPT} imports ${imports.join(', ') || 'nothing'}, not cli-entry.ts's import() alone`);
}

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
  await writeMainScript(common);
  const { metafile } = await build({
    ...common,
    // cli.js (yargs, the commands' options), which main.js loads unless the command line is a plain
    // replay, is an entry of its own so that it sits beside main.js (it imports the replay command's file).
    entryPoints: ['dist/src/cli/main.js', 'dist/src/cli/cli.js'],
    outdir: 'dist/src/cli',
    entryNames: '[name]',
    chunkNames: 'bundle/[name]-[hash]',
    allowOverwrite: true,
    splitting: true,
    metafile: true,
    plugins: [lazyStringWidth, lazyAssert, lazyYargsColumns, dataSnapshot(DATA_SNAPSHOT_DIR), replayApart, cliInline],
  });
  // The replay command's import names a path next to main.js: it must sit in main.js or cli.js (with the commands' options).
  const importers = Object.entries(metafile.outputs)
    .filter(([, output]) => output.imports.some((i) => i.path === `./${REPLAY_ACTION}`))
    .map(([file]) => file)
    .sort();
  if (importers.join() !== 'dist/src/cli/cli.js,dist/src/cli/main.js')
    throw new Error(`./${REPLAY_ACTION} is imported from ${importers.join(', ')}, not main.js and cli.js`);
  await build({
    ...common,
    entryPoints: ['dist/src/cli/replay-entry.js'],
    outfile: join('dist', 'src', 'cli', REPLAY_ACTION),
    banner: {},
  });
  await writeReplayScript(common);
  await writeCliScript(common);
}

/**
 * esbuild's options for a file that is one function expression of Node.js's CommonJS wrapper, with
 * `extra` parameters after the wrapper's five (src/cli/code-cache.ts runs such a file).
 */
function wrappedScript(common, extra, plugins) {
  return {
    ...common,
    format: 'cjs',
    // The file is read as Latin-1 when it is ASCII (what esbuild writes: it escapes the rest).
    charset: 'ascii',
    // A CommonJS file has no import.meta: its URL is the file's own, from the wrapper's __filename.
    define: { 'import.meta.url': '__importMetaUrl' },
    banner: {
      js: `(function (${['exports', 'require', 'module', '__filename', '__dirname', ...extra].join(', ')}) {'use strict';const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;`,
    },
    footer: { js: '})' },
    plugins,
  };
}

/** The replay command's work as one CommonJS file, which replay-action.js runs (src/cli/replay-entry.ts). */
const REPLAY_SCRIPT = join('dist', 'src', 'cli', 'replay-action.cjs');
const REPLAY_CODE_CACHE = join('dist', 'src', 'cli', 'replay-action.code-cache');

/** What the code cache is made from: a one-request replay of the README's first config. */
const WARM_UP = {
  config: join(root, 'sweeps', 'configs', 'qwen3-32b-h100-tp2.yaml'),
  set: ['traffic.stop={requests: 1}'],
  perRequest: false,
  json: false,
  aiperf: false,
  skipInvalidRows: false,
};

/**
 * `servesim replay`'s work (dist/src/cli/actions/replay.js and all it imports), bundled as the body
 * of Node.js's CommonJS wrapper, which src/cli/code-cache.ts compiles with V8's code cache: Node.js
 * 20 caches no compiled code of the modules it loads, and compiling this file, on loading and
 * function by function as each first runs, cost a one-request replay a fifth of its start-up. The
 * cache is written by a replay run once (the functions it compiled are in it); src/cli/code-cache.ts
 * says when a process uses it.
 */
async function writeReplayScript(common) {
  for (const file of [REPLAY_CODE_CACHE, `${REPLAY_CODE_CACHE}.id`]) rmSync(join(root, file), { force: true });
  await build({
    ...wrappedScript(common, [], [dataSnapshot(DATA_SNAPSHOT_DIR)]),
    entryPoints: ['dist/src/cli/actions/replay.js'],
    outfile: REPLAY_SCRIPT,
  });
  // vm.Script runs it without a loader for import(): every module it needs must be bundled or required.
  const text = readFileSync(join(root, REPLAY_SCRIPT), 'latin1');
  const dynamicImport = /\bimport\s*\(/.exec(text);
  if (dynamicImport !== null) throw new Error(`${REPLAY_SCRIPT} calls import() at offset ${dynamicImport.index}; vm.Script cannot run it`);
  // The warm-up replay runs in a process of its own, without the options of this one (V8 refuses
  // a cache made under other flags), its table thrown away.
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  const replay = pathToFileURL(join(root, 'dist', 'src', 'cli', REPLAY_ACTION)).href;
  const script =
    `const m = await import(${JSON.stringify(replay)});` +
    `await m.runReplayCommand(${JSON.stringify(WARM_UP)});` +
    'm.writeReplayCodeCache();';
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (child.status !== 0) throw new Error(`writing ${REPLAY_CODE_CACHE}: the warm-up replay failed (exit ${child.status})`);
}

/** The command line's yargs part as one CommonJS file, which cli-entry.ts runs (main.cjs and main.js load it). */
const CLI_SCRIPT = join('dist', 'src', 'cli', 'cli.cjs');
const CLI_CODE_CACHE = join('dist', 'src', 'cli', 'cli.code-cache');

/**
 * The bundled cli.js (yargs and every command's options, what any command line but a plain replay
 * loads first), as the body of Node.js's CommonJS wrapper, which src/cli/code-cache.ts compiles
 * with V8's code cache: as an ES module it was compiled afresh by every command, and loading it
 * started Node.js's ES module loader (its file reads, its module objects for Node.js's own
 * modules), together a fifth of `servesim --help`'s start-up. The command's own work stays in the
 * ES module chunks (dist/src/cli/bundle/): cli.cjs loads them with `import()` through a function
 * cli-entry.ts passes it (`__import`). The chunks cli.js imports statically (the error classes, a
 * number format, esbuild's helpers) are copied into cli.cjs: an error made by a chunk's copy of a
 * class is told apart by name and exit code, not by `instanceof` (src/cli/report-error.ts). The
 * cache is written after a `--help` has run the file.
 */
async function writeCliScript(common) {
  for (const file of [CLI_CODE_CACHE, `${CLI_CODE_CACHE}.id`]) rmSync(join(root, file), { force: true });
  const dynamicExternal = {
    name: 'cli-dynamic-external',
    setup(bundle) {
      bundle.onResolve({ filter: /^\.\/.*\.js$/ }, (args) =>
        args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined,
      );
    },
  };
  await build({
    ...wrappedScript(common, ['__import'], [dynamicExternal]),
    entryPoints: [join('dist', 'src', 'cli', 'cli.js')],
    outfile: CLI_SCRIPT,
    splitting: false,
  });
  // Every import() of a file beside it goes through __import; no other import() may be left (vm.Script cannot run it).
  const path = join(root, CLI_SCRIPT);
  const text = readFileSync(path, 'latin1').replace(/\bimport\(("\.\/[^"]+\.js")\)/g, '__import($1)');
  const left = /\bimport\s*\(/.exec(text);
  if (left !== null) throw new Error(`${CLI_SCRIPT} calls import() at offset ${left.index} other than of a file beside it`);
  writeFileSync(path, text, 'latin1');
  // The warm-up runs in a process of its own, without the options of this one, its help text thrown away.
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  const entry = pathToFileURL(join(root, 'dist', 'src', 'cli', 'cli-entry.js')).href;
  const script = `const m = await import(${JSON.stringify(entry)}); await m.main(['--help']); m.writeCliCodeCache();`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (child.status !== 0) throw new Error(`writing ${CLI_CODE_CACHE}: the warm-up --help failed (exit ${child.status})`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
