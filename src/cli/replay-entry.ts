/**
 * The built replay command's module (dist/src/cli/replay-action.js, written by
 * scripts/bundle-cli.mjs from this file): `actions/replay.ts` and all it imports are bundled into
 * one CommonJS file beside it, replay-action.cjs, which this module runs with the code cache the
 * build wrote (code-cache.ts says why and when the cache is used).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Replay from './actions/replay.js';
import { runCachedScript, writeCodeCache } from './code-cache.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The bundled file and its code cache, beside this module in the build. */
export const REPLAY_SCRIPT = join(here, 'replay-action.cjs');
export const REPLAY_CODE_CACHE = join(here, 'replay-action.code-cache');

const loaded = runCachedScript(REPLAY_SCRIPT, REPLAY_CODE_CACHE);

/** How the bundled file was compiled (for the build's check and the tests). */
export const replayCodeCache = loaded.cache;

export const { runReplayCommand, runReplayMain } = loaded.exports as typeof Replay;

/** Writes the code cache of the bundled file as compiled so far (the build calls it after a replay). */
export function writeReplayCodeCache(): void {
  writeCodeCache(loaded, REPLAY_CODE_CACHE);
}
