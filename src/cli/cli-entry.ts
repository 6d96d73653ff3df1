/**
 * The built command line's yargs part, for every command line but a plain replay: `cli.ts` and all
 * it loads at start-up (yargs, each command's options) are one CommonJS file in the build,
 * dist/src/cli/cli.cjs (scripts/bundle-cli.mjs writes it from the bundled cli.js), which this
 * module runs with the code cache the build wrote (code-cache.ts says why and when the cache is
 * used). A command's own work stays in the ES module files beside it (dist/src/cli/bundle/), which
 * cli.cjs loads with `import()` through the function this module gives it: code compiled by
 * `vm.Script` cannot call `import()` itself.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Cli from './cli.js';
import { runCachedScript, writeCodeCache } from './code-cache.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The bundled file and its code cache, beside this module in the build. */
export const CLI_SCRIPT = join(here, 'cli.cjs');
export const CLI_CODE_CACHE = join(here, 'cli.code-cache');

const base = pathToFileURL(CLI_SCRIPT);
/** cli.cjs's `import()`: a module file named relative to cli.cjs. */
const importFrom = (specifier: string): Promise<unknown> => import(new URL(specifier, base).href);

const loaded = runCachedScript(CLI_SCRIPT, CLI_CODE_CACHE, [importFrom]);

/** How the bundled file was compiled (for the build's check and the tests). */
export const cliCodeCache = loaded.cache;

export const { hideBin, main } = loaded.exports as typeof Cli;

/** Writes the code cache of the bundled file as compiled so far (the build calls it after `--help`). */
export function writeCliCodeCache(): void {
  writeCodeCache(loaded, CLI_CODE_CACHE);
}
