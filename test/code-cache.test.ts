/**
 * src/cli/code-cache.ts: a file wrapped as Node.js wraps CommonJS runs the same with or without
 * its code cache, and a cache made from another source or by another Node.js is not used. (That
 * V8 takes the built replay's cache, and refuses a damaged one, is checked on the build by
 * test/replay-code-cache.e2e.test.ts, in processes of their own: in this one V8 may take a source
 * it compiled before from its own memory.)
 */
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCachedScript, writeCodeCache } from '../src/cli/code-cache.js';

/** A CommonJS body: exports `answer` (the product of two numbers written in it) and the wrapper's arguments it saw. */
function wrapped(a: number, b: number, tag: string): string {
  return (
    `(function (exports, require, module, __filename, __dirname) {'use strict';\n` +
    `exports.answer = function () { return ${a} * ${b}; };\n` +
    `exports.tag = ${JSON.stringify(tag)};\n` +
    `exports.file = __filename;\n` +
    `exports.dir = __dirname;\n` +
    `exports.sep = require('node:path').sep;\n` +
    `})`
  );
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'servesim-code-cache-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Waits until the file system's clock has moved on from the file's last change, so that the next
 * write to it gets other times (a clock may tick in steps of several milliseconds).
 */
function afterTick(file: string): void {
  const changed = statSync(file, { bigint: true }).ctimeNs;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 100; i++) {
    Atomics.wait(sleeper, 0, 0, 5);
    const probe = `${file}.tick`;
    writeFileSync(probe, '');
    const now = statSync(probe, { bigint: true }).ctimeNs;
    rmSync(probe);
    if (now > changed) return;
  }
  throw new Error('the file system clock did not move in 500 ms');
}

interface Exported {
  answer: () => number;
  tag: string;
  file: string;
  dir: string;
  sep: string;
}

describe('running a bundled file with its code cache', () => {
  it('runs the file without a cache, then with the cache written after it ran', () => {
    const file = join(dir, 'a.cjs');
    const cache = join(dir, 'a.code-cache');
    writeFileSync(file, wrapped(6, 7, 'first'));
    const first = runCachedScript(file, cache);
    expect(first.cache).toBe('absent');
    const exported = first.exports as Exported;
    expect(exported.answer()).toBe(42);
    expect([exported.file, exported.dir, exported.sep]).toEqual([file, dir, '/']);
    writeCodeCache(first, cache);
    // The cache file: its header line (naming the source file by its status, and saying it is
    // ASCII), then V8's data; beside it, the cache's own status as written.
    const bytes = readFileSync(cache);
    const header = bytes.subarray(0, bytes.indexOf(10) + 1).toString('latin1');
    const dataLength = bytes.length - header.length;
    expect(dataLength).toBeGreaterThan(100);
    const s = statSync(file, { bigint: true });
    expect(header).toBe(
      `servesim-code-cache 3 ${process.version} ${process.arch} ${process.versions.v8} ${s.size} ${s.dev} ${s.ino} ${s.mtimeNs} ${s.ctimeNs} ascii ${dataLength}\n`,
    );
    const c = statSync(cache, { bigint: true });
    expect(readFileSync(`${cache}.id`, 'latin1')).toBe(`${c.size} ${c.dev} ${c.ino} ${c.mtimeNs} ${c.ctimeNs}`);
    const second = runCachedScript(file, cache);
    expect(second.cache).toBe('accepted');
    expect((second.exports as Exported).answer()).toBe(42);
  });

  it('does not use a cache made from another source of the same length: the file on disk is what runs', () => {
    const file = join(dir, 'b.cjs');
    const cache = join(dir, 'b.code-cache');
    writeFileSync(file, wrapped(6, 7, 'cached'));
    utimesSync(file, 1e9, 1e9);
    writeCodeCache(runCachedScript(file, cache), cache);
    const edited = wrapped(8, 9, 'edited');
    expect(edited.length).toBe(wrapped(6, 7, 'cached').length);
    afterTick(file);
    writeFileSync(file, edited);
    // Even with its modification time set back to what it was: same size, same times but one.
    utimesSync(file, 1e9, 1e9);
    expect(statSync(file, { bigint: true }).mtimeNs).toBe(1_000_000_000_000_000_000n);
    const run = runCachedScript(file, cache);
    expect(run.cache).toBe('stale');
    expect((run.exports as Exported).answer()).toBe(72);
    expect((run.exports as Exported).tag).toBe('edited');
  });

  it('does not use the cache for a copy of the file, nor for a file put in its place', () => {
    const file = join(dir, 'e.cjs');
    const cache = join(dir, 'e.code-cache');
    writeFileSync(file, wrapped(4, 5, 'e'));
    writeCodeCache(runCachedScript(file, cache), cache);
    expect(runCachedScript(file, cache).cache).toBe('accepted');
    // The same bytes copied with their times: another inode.
    const copy = join(dir, 'copy.cjs');
    cpSync(file, copy, { preserveTimestamps: true });
    renameSync(copy, file);
    const run = runCachedScript(file, cache);
    expect(run.cache).toBe('stale');
    expect((run.exports as Exported).answer()).toBe(20);
  });

  it('does not use a cache another Node.js made, nor one written to after it was made (cut, damaged)', () => {
    const file = join(dir, 'c.cjs');
    const cache = join(dir, 'c.code-cache');
    writeFileSync(file, wrapped(3, 5, 'c'));
    writeCodeCache(runCachedScript(file, cache), cache);
    const bytes = readFileSync(cache);
    const run = (): string => {
      const ran = runCachedScript(file, cache);
      expect((ran.exports as Exported).answer()).toBe(15);
      return ran.cache;
    };
    expect(run()).toBe('accepted');
    // Written after the cache was named, even with the same bytes: not used.
    const written = (content: Buffer): string => {
      afterTick(cache);
      writeFileSync(cache, content);
      return run();
    };
    const damaged = Buffer.from(bytes);
    damaged[bytes.length - 10] ^= 1;
    expect(written(damaged)).toBe('stale');
    expect(written(bytes.subarray(0, bytes.length - 1))).toBe('stale');
    expect(written(bytes)).toBe('stale');
    // Its identity file missing: not used.
    writeCodeCache(runCachedScript(file, cache), cache);
    expect(run()).toBe('accepted');
    rmSync(`${cache}.id`);
    expect(run()).toBe('stale');
    // Named whole, but made by another Node.js, on another architecture, or cut or grown: not used.
    const named = (content: Buffer): string => {
      writeFileSync(cache, content);
      const c = statSync(cache, { bigint: true });
      writeFileSync(`${cache}.id`, `${c.size} ${c.dev} ${c.ino} ${c.mtimeNs} ${c.ctimeNs}`);
      return run();
    };
    expect(named(bytes)).toBe('accepted');
    expect(named(Buffer.from(bytes.toString('latin1').replace(process.version, 'v0.0.1'), 'latin1'))).toBe('stale');
    expect(named(Buffer.from(bytes.toString('latin1').replace(process.arch, 'sparc'), 'latin1'))).toBe('stale');
    expect(named(bytes.subarray(0, bytes.length - 1))).toBe('stale');
    expect(named(Buffer.concat([bytes, Buffer.from([0])]))).toBe('stale');
    expect(named(Buffer.from('servesim-code-cache 2\n'))).toBe('stale');
    // No cache at all.
    rmSync(cache);
    expect(run()).toBe('absent');
  });

  it('reads a file that is not ASCII as UTF-8', () => {
    const file = join(dir, 'd.cjs');
    writeFileSync(file, wrapped(2, 2, 'τ ≤ 1 µs'));
    const cache = join(dir, 'd.code-cache');
    const run = runCachedScript(file, cache);
    expect(run.cache).toBe('absent');
    expect((run.exports as Exported).tag).toBe('τ ≤ 1 µs');
    // Its cache says so, and a process that takes the cache reads the file as UTF-8 without scanning it.
    writeCodeCache(run, cache);
    expect(readFileSync(cache, 'latin1').split('\n')[0]).toMatch(/ utf8 \d+$/);
    const cached = runCachedScript(file, cache);
    expect(cached.cache).toBe('accepted');
    expect((cached.exports as Exported).tag).toBe('τ ≤ 1 µs');
  });
});
