/**
 * Running a bundled CommonJS file with V8's code cache: the built replay command
 * (scripts/bundle-cli.mjs) is such a file, and V8 compiling its 600 KB (the YAML parser, zod, the
 * replay core), on loading and then function by function as each first runs, was a large part of
 * a one-request replay's start-up. Node.js 20 keeps no code cache for the modules it loads, so
 * the file is compiled here as a `vm.Script` given the cache the build wrote after one run.
 *
 * The cache file holds a header line, then V8's data. It is used only when the header names this
 * Node.js (version, architecture, V8) and the source file as it was when the cache was made: its
 * size, device, inode, modification and status-change times, to the nanosecond. Writing to the
 * file, replacing it or copying it changes its status-change time or its inode, which no program
 * can set back, so a cache made before the file was edited is not taken for it (V8 itself compares
 * only the source's length), and a copy of the build compiles from source until it is built
 * again. (Python checks its compiled files the same way, by the source's size and modification
 * time.) The build writes the cache after a replay has run the file, long after the file was
 * written, so no later write can share its times.
 *
 * V8 checks its data's version and flags, and compiles from the source when it refuses them, but
 * not that its data is whole: a damaged cache ends the process in V8. So the cache file is named
 * the same way, by its own status, in a file written beside it once it is complete (`<cache>.id`):
 * a cache written, cut or damaged after that is not given to V8, and checking costs a few system
 * calls where a checksum or a second copy of the data cost milliseconds of every start. The header
 * also says whether the source is ASCII (read as Latin-1, without decoding) so that a process with
 * the cache does not scan the file for it. A missing, stale, damaged or refused cache costs the
 * compile time, never a result.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync, type BigIntStats } from 'node:fs';
import { isAscii } from 'node:buffer';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Script } from 'node:vm';

/** What became of the cache: used, refused by V8, not made from this source by this Node.js or damaged, or not there. */
export type CodeCacheUse = 'accepted' | 'rejected' | 'stale' | 'absent';

export interface CachedScript {
  /** The file's `module.exports`. */
  exports: unknown;
  cache: CodeCacheUse;
  /** The compiled script: `writeCodeCache` takes its cache after the file has run. */
  script: Script;
  /** The source file's status when it was read: the cache written from `script` is for that file. */
  stat: BigIntStats;
  /** Whether the source is ASCII (read as Latin-1). */
  ascii: boolean;
}

const MAGIC = 'servesim-code-cache 3';

/** A file's identity: size, device, inode, modification and status-change times (ns). */
function identity(stat: BigIntStats): string {
  return `${stat.size} ${stat.dev} ${stat.ino} ${stat.mtimeNs} ${stat.ctimeNs}`;
}

/** The header line of a cache made by this Node.js from the source file `stat` describes, with `dataLength` bytes of V8's data. */
function header(stat: BigIntStats, ascii: boolean, dataLength: number): string {
  return `${MAGIC} ${process.version} ${process.arch} ${process.versions.v8} ${identity(stat)} ${ascii ? 'ascii' : 'utf8'} ${dataLength}\n`;
}

/** The file beside a cache that names the cache, whole, by its identity. */
function identityFile(cacheFile: string): string {
  return `${cacheFile}.id`;
}

/**
 * V8's data in `cacheFile` when it is the cache as written whole (its identity file names it) and
 * was made by this Node.js from the source file as `stat` describes it, with whether that source is
 * ASCII; null when it is not; undefined when there is no cache.
 */
function cachedDataFor(cacheFile: string, stat: BigIntStats): { data: Buffer; ascii: boolean } | null | undefined {
  let cache: { bytes: Buffer; stat: BigIntStats };
  try {
    cache = readWithStat(cacheFile);
  } catch {
    return undefined; // no cache (or none readable): compiled from the source
  }
  let written: string;
  try {
    written = readFileSync(identityFile(cacheFile), 'latin1');
  } catch {
    return null;
  }
  if (written !== identity(cache.stat) || cache.bytes.length !== Number(cache.stat.size)) return null;
  const bytes = cache.bytes;
  const end = bytes.indexOf(10);
  if (end < 0 || end > 300) return null;
  const line = bytes.toString('latin1', 0, end + 1);
  const fields = / (ascii|utf8) (\d+)\n$/.exec(line);
  if (fields === null) return null;
  const ascii = fields[1] === 'ascii';
  const dataLength = Number(fields[2]);
  if (!(dataLength > 0) || line !== header(stat, ascii, dataLength) || bytes.length !== line.length + dataLength) return null;
  return { data: bytes.subarray(line.length), ascii };
}

/** The file's bytes and its status, taken from the same open file. */
function readWithStat(file: string): { bytes: Buffer; stat: BigIntStats } {
  const fd = openSync(file, 'r');
  try {
    const stat = fstatSync(fd, { bigint: true });
    const bytes = Buffer.allocUnsafe(Number(stat.size));
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return { bytes: read === bytes.length ? bytes : bytes.subarray(0, read), stat };
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs `file`, whose text is one function expression of Node.js's CommonJS wrapper
 * (`(function (exports, require, module, __filename, __dirname) { ... })`), with the code cache
 * in `cacheFile` when it fits (see the header comment), and returns its exports. `extra` are passed
 * to the function after the wrapper's five arguments (cli-entry.ts gives cli.cjs its import()).
 */
export function runCachedScript(path: string, cacheFile: string, extra: readonly unknown[] = []): CachedScript {
  const file = resolve(path);
  const { bytes: source, stat } = readWithStat(file);
  // A file read shorter than its size is being written: its cache is not for it.
  const found = source.length === Number(stat.size) ? cachedDataFor(cacheFile, stat) : null;
  let cache: CodeCacheUse = found === undefined ? 'absent' : found === null ? 'stale' : 'accepted';
  // An ASCII file (what the build writes) is read as Latin-1, a copy; UTF-8 would be decoded.
  const ascii = found?.ascii ?? isAscii(source);
  const text = source.toString(ascii ? 'latin1' : 'utf8');
  const cachedData = found?.data;
  const script = new Script(text, { filename: file, cachedData });
  if (cachedData !== undefined && script.cachedDataRejected === true) cache = 'rejected';
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
    ...extra: unknown[]
  ) => void;
  const module: { exports: unknown } = { exports: {} };
  wrapper(module.exports as object, createRequire(file), module, file, dirname(file), ...extra);
  return { exports: module.exports, cache, script, stat, ascii };
}

/**
 * Writes the code cache of a file `runCachedScript` ran: V8's data holds the functions compiled
 * so far, so the build runs the file's common path before it writes the cache.
 */
export function writeCodeCache(ran: CachedScript, cacheFile: string): void {
  const data = ran.script.createCachedData();
  const head = Buffer.from(header(ran.stat, ran.ascii, data.length), 'latin1');
  // Written whole, then renamed: a process reading the cache never sees part of it. Then the
  // cache, as it is on disk, is named in its identity file (written the same way).
  const partial = `${cacheFile}.partial`;
  writeFileSync(partial, Buffer.concat([head, data]));
  renameSync(partial, cacheFile);
  const named = `${identityFile(cacheFile)}.partial`;
  writeFileSync(named, identity(statSync(cacheFile, { bigint: true })), 'latin1');
  renameSync(named, identityFile(cacheFile));
}
