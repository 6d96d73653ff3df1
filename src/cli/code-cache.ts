/**
 * Running a bundled CommonJS file with V8's code cache: the built replay command
 * (scripts/bundle-cli.mjs) is such a file, and V8 compiling its 600 KB (the YAML parser, zod, the
 * replay core), on loading and then function by function as each first runs, was a large part of
 * a one-request replay's start-up. Node.js 20 keeps no code cache for the modules it loads, so
 * the file is compiled here as a `vm.Script` given the cache the build wrote after one run.
 *
 * The cache file holds a header line, then V8's data twice. It is used only when the header names
 * this Node.js (version, architecture, V8) and the source file as it was when the cache was made:
 * its size, device, inode, modification and status-change times, to the nanosecond. Writing to
 * the file, replacing it or copying it changes its status-change time or its inode, which no
 * program can set back, so a cache made before the file was edited is not taken for it (V8
 * itself compares only the source's length), and a copy of the build compiles from source until
 * it is built again. (Python checks its compiled files the same way, by the source's size and
 * modification time.) The build writes the cache after a replay has run the file, long after the
 * file was written, so no later write can share its times. V8 then checks its data's version and
 * flags, and compiles from the source when it refuses them. V8 does not check that its data is
 * whole (a damaged cache ends the process in V8), and comparing the two copies costs far less at
 * start-up than a checksum. A missing, stale, damaged or refused cache costs the compile time,
 * never a result.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, renameSync, writeFileSync, type BigIntStats } from 'node:fs';
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
}

const MAGIC = 'servesim-code-cache 2';

/** The source file's identity in a cache header: size, device, inode, modification and status-change times (ns). */
function identity(stat: BigIntStats): string {
  return `${stat.size} ${stat.dev} ${stat.ino} ${stat.mtimeNs} ${stat.ctimeNs}`;
}

/** The header line of a cache made by this Node.js from the source file `stat` describes, with `dataLength` bytes of V8's data. */
function header(stat: BigIntStats, dataLength: number): string {
  return `${MAGIC} ${process.version} ${process.arch} ${process.versions.v8} ${identity(stat)} ${dataLength}\n`;
}

/** V8's data in `cache` when it was made by this Node.js from the source file as `stat` describes it, and is whole; else undefined. */
function cachedDataFor(cache: Buffer, stat: BigIntStats): Buffer | undefined {
  const end = cache.indexOf(10);
  if (end < 0 || end > 300) return undefined;
  const line = cache.toString('latin1', 0, end + 1);
  const dataLength = Number(/ (\d+)\n$/.exec(line)?.[1]);
  if (!(dataLength > 0) || line !== header(stat, dataLength)) return undefined;
  const start = line.length;
  if (cache.length !== start + 2 * dataLength) return undefined;
  const first = cache.subarray(start, start + dataLength);
  return first.equals(cache.subarray(start + dataLength)) ? first : undefined;
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
  let cachedData: Buffer | undefined;
  let cache: CodeCacheUse = 'absent';
  try {
    // A file read shorter than its size is being written: its cache is not for it.
    cachedData = source.length === Number(stat.size) ? cachedDataFor(readFileSync(cacheFile), stat) : undefined;
    cache = cachedData === undefined ? 'stale' : 'accepted';
  } catch {
    // No cache (or none readable): compiled from the source.
  }
  // An ASCII file (what the build writes) is read as Latin-1, a copy; UTF-8 would be decoded.
  const text = source.toString(isAscii(source) ? 'latin1' : 'utf8');
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
  return { exports: module.exports, cache, script, stat };
}

/**
 * Writes the code cache of a file `runCachedScript` ran: V8's data holds the functions compiled
 * so far, so the build runs the file's common path before it writes the cache.
 */
export function writeCodeCache(ran: CachedScript, cacheFile: string): void {
  const data = ran.script.createCachedData();
  const head = Buffer.from(header(ran.stat, data.length), 'latin1');
  // Written whole, then renamed: a process reading the cache never sees part of it.
  const partial = `${cacheFile}.partial`;
  writeFileSync(partial, Buffer.concat([head, data, data]));
  renameSync(partial, cacheFile);
}
