/**
 * The `.lock` of a sweep or plan folder (src/sweep/lock.ts): a running sweep's lock holds; a lock
 * left by a dead process, by this process's own pid (a restart), or by a pid now used by another
 * program (another start time) is stale and taken over; another host's lock holds. A lock that
 * cannot be written (a full disk) is in test/output-faults.e2e.test.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE, processStartTime, readLock, staleReason, takeLock } from '../src/sweep/lock.js';
import { SweepError } from '../src/sweep/sweep-file.js';
import { thrownBy } from './helpers/errors.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function lockIn(content: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'servesim-lock-'));
  dirs.push(dir);
  const file = join(dir, LOCK_FILE);
  writeFileSync(file, content);
  return { dir, file };
}
const lock = (pid: number, started: string | null, host = hostname()) => `${JSON.stringify({ host, pid, started })}\n`;

describe('sweep folder lock', () => {
  it('records host, pid and start time, and is removed on release', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-lock-'));
    dirs.push(dir);
    const release = takeLock(dir);
    expect(readLock(join(dir, LOCK_FILE))).toEqual({ host: hostname(), pid: process.pid, started: processStartTime(process.pid) });
    // Held by this process: a second sweep in the same process is refused.
    expect(thrownBy(() => takeLock(dir), SweepError).message).toMatch(/in use by a running sweep \(pid \d+\)/);
    release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('holds for a live process of this host whose start time matches', () => {
    const { dir, file } = lockIn(lock(process.ppid, processStartTime(process.ppid)));
    expect(staleReason(file, readLock(file)!)).toBeNull();
    expect(thrownBy(() => takeLock(dir), SweepError).message).toBe(
      `${file}: in use by a running sweep (pid ${process.ppid}); give each run or shard its own --out`,
    );
    expect(readFileSync(file, 'utf8')).toBe(lock(process.ppid, processStartTime(process.ppid)));
  });

  it('names a plan as the holder of a plan folder', () => {
    const { dir, file } = lockIn(lock(1, 'x', 'another-host'));
    expect(thrownBy(() => takeLock(dir, () => {}, 'plan'), SweepError).message).toBe(
      `${file}: in use by a running plan (host another-host, pid 1); give each run its own --out, or remove ${file} if no plan is running on another-host`,
    );
  });

  it('treats a FIFO or a device in place of the lock as an unreadable lock, without blocking on it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-lock-'));
    dirs.push(dir);
    execFileSync('mkfifo', [join(dir, LOCK_FILE)]);
    expect(readLock(join(dir, LOCK_FILE))).toBeNull();
    const notes: string[] = [];
    takeLock(dir, (line) => notes.push(line))();
    expect(notes).toEqual([`${join(dir, LOCK_FILE)}: took over an unreadable lock`]);
  });

  it("is stale when it holds this process's own pid (a container restarted with the same pid)", () => {
    const { dir, file } = lockIn(lock(process.pid, '12345'));
    expect(staleReason(file, readLock(file)!)).toMatch(/this process id/);
    const notes: string[] = [];
    takeLock(dir, (line) => notes.push(line))();
    expect(notes[0]).toMatch(/took over a stale lock/);
  });

  it('is stale when its pid is not running, or runs another program (another start time)', () => {
    const dead = lockIn(lock(2 ** 22 + 12345, null));
    expect(staleReason(dead.file, readLock(dead.file)!)).toMatch(/is not running/);
    const reused = lockIn(lock(process.ppid, 'not the start time'));
    expect(staleReason(reused.file, readLock(reused.file)!)).toMatch(/another program/);
    expect(() => takeLock(reused.dir)()).not.toThrow();
  });

  it("holds for another host's lock, saying which file to remove", () => {
    const { dir, file } = lockIn(lock(1, 'x', 'another-host'));
    expect(thrownBy(() => takeLock(dir), SweepError).message).toBe(
      `${file}: in use by a running sweep (host another-host, pid 1); give each run or shard its own --out, or remove ${file} if no sweep is running on another-host`,
    );
  });

  it('reads the line format of earlier versions', () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)']);
    try {
      const { file } = lockIn(`${hostname()} ${child.pid}\n`);
      expect(readLock(file)).toEqual({ host: hostname(), pid: child.pid, started: null });
      expect(staleReason(file, readLock(file)!)).toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
  });
});
