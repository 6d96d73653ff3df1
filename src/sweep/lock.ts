/**
 * The `.lock` of a sweep or plan output folder: one run writes a folder at a time. The lock records the
 * host, the pid and the pid's start time (Linux: clock ticks since boot, from /proc). A lock left
 * behind is taken over when it is stale:
 * - its pid is this process's own, and this process does not hold it (a container restarted with
 *   the same pid as before);
 * - on this host, its pid is not running, or is running but started at another time than the
 *   lock says (the pid was reused by another program).
 * A lock of another host cannot be checked from here: it holds, and the message says which file
 * to remove if no sweep runs there.
 */
import { closeSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readInputBytes } from '../io/read-text.js';
import { outputError } from '../io/write-output.js';
import { SweepError } from './sweep-file.js';

export const LOCK_FILE = '.lock';

export interface LockInfo {
  host: string;
  pid: number;
  /** The process's start time as `processStartTime` gives it; null where it cannot be read. */
  started: string | null;
}

/** Lock files this process holds now. */
const held = new Set<string>();

/** A process's start time (field 22 of /proc/<pid>/stat), or null when it cannot be read (not Linux, no such process). */
export function processStartTime(pid: number): string | null {
  let stat: string;
  try {
    stat = readInputBytes(`/proc/${pid}/stat`, 'stat', 64 * 1024).toString('utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

/** Reads a lock file: JSON `{host, pid, started}`, or the `host pid` line of earlier versions. */
export function readLock(file: string): LockInfo | null {
  let text: string;
  try {
    // A lock is one short line: a larger file, a FIFO or a device in its place is unreadable.
    text = readInputBytes(file, file, 4096).toString('utf8').trim();
  } catch {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockInfo>;
    if (typeof parsed.host === 'string' && typeof parsed.pid === 'number') {
      return { host: parsed.host, pid: parsed.pid, started: typeof parsed.started === 'string' ? parsed.started : null };
    }
  } catch {
    // The line format below.
  }
  const [host, pidText] = text.split(' ');
  const pid = Number(pidText);
  return host !== undefined && Number.isInteger(pid) && pid > 0 ? { host, pid, started: null } : null;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Why a lock no longer holds, or null when it does. */
export function staleReason(file: string, lock: LockInfo, host = hostname()): string | null {
  if (lock.host !== host) return null;
  if (lock.pid === process.pid) return held.has(file) ? null : 'it holds this process id, left by an earlier process (a restart)';
  if (!isRunning(lock.pid)) return `process ${lock.pid} is not running`;
  const started = processStartTime(lock.pid);
  if (lock.started !== null && started !== null && started !== lock.started) {
    return `process ${lock.pid} is another program than the one that took the lock (it started at another time)`;
  }
  return null;
}

/**
 * Creates the lock file with `text`; false when a lock is there already. A lock that cannot be
 * written whole (a full disk) is removed again and becomes an `OutputError` naming it.
 */
function createLock(file: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw outputError(file, err);
  }
  try {
    writeFileSync(fd, text);
    closeSync(fd);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // The write already failed; the close error says nothing more.
    }
    rmSync(file, { force: true });
    throw outputError(file, err);
  }
  return true;
}

/**
 * Takes `outDir`'s lock for this process, or throws `SweepError` naming the lock file when a
 * running sweep (or plan: `what`) holds it. Returns the release function. `note` says when a
 * stale lock was taken over. A lock that cannot be written (a full disk) is an `OutputError`, and
 * no lock file is left.
 */
export function takeLock(outDir: string, note: (line: string) => void = () => {}, what: 'sweep' | 'plan' = 'sweep'): () => void {
  const file = join(outDir, LOCK_FILE);
  const mine: LockInfo = { host: hostname(), pid: process.pid, started: processStartTime(process.pid) };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createLock(file, `${JSON.stringify(mine)}\n`)) {
      held.add(file);
      return () => {
        held.delete(file);
        rmSync(file, { force: true });
      };
    }
    const lock = readLock(file);
    if (lock !== null) {
      const stale = staleReason(file, lock);
      if (stale === null) {
        const where = lock.host === mine.host ? `pid ${lock.pid}` : `host ${lock.host}, pid ${lock.pid}`;
        throw new SweepError(
          file,
          '',
          `in use by a running ${what} (${where}); give each run${what === 'sweep' ? ' or shard' : ''} its own --out` +
            (lock.host === mine.host ? '' : `, or remove ${file} if no ${what} is running on ${lock.host}`),
        );
      }
      note(`${file}: took over a stale lock (${stale})`);
    } else {
      note(`${file}: took over an unreadable lock`);
    }
    rmSync(file, { force: true });
  }
  throw new SweepError(file, '', `could not be taken (another ${what} keeps taking it); give each run its own --out`);
}
