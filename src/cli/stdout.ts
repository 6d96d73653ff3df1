/**
 * A command's output written to standard output synchronously, without Node.js's stream: the
 * first use of `process.stdout` builds that stream, loading Node.js's stream modules (and, for a
 * pipe, its socket modules), a tenth of a one-request replay's start-up. Where standard output is
 * a pipe nobody reads any more (`servesim replay ... | head -1`), the rest of the output is
 * dropped without an error: the command's work and its files are not affected.
 */
import { fstatSync, writeSync } from 'node:fs';
import { format } from 'node:util';

/** A `write(2)`: the number of bytes written, or an error with the system's code. */
export type WriteFn = (fd: number, bytes: Uint8Array, offset: number, length: number) => number;

const SLEEP = new Int32Array(new SharedArrayBuffer(4));
/** File descriptors whose reader has gone: nothing more is written to them. */
const closed = new Set<number>();

/**
 * Writes all of `text` to `fd`: waits and retries while a non-blocking descriptor is full
 * (`EAGAIN`), stops quietly when its reader has gone (`EPIPE`), throws any other error.
 */
export function writeAll(fd: number, text: string, write: WriteFn = writeSync): void {
  if (closed.has(fd)) return;
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += write(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') Atomics.wait(SLEEP, 0, 0, 1);
      else if (code === 'EPIPE') {
        closed.add(fd);
        return;
      } else throw error;
    }
  }
}

/** Writes `text` to standard output (see the header comment). */
export function writeStdout(text: string): void {
  writeAll(1, text);
}

/**
 * The terminal's width when standard output is a terminal, else undefined (as
 * `process.stdout.columns` gives), found without building `process.stdout` for a pipe or a file:
 * only a character device can be a terminal.
 */
export function stdoutColumns(): number | undefined {
  try {
    if (!fstatSync(1).isCharacterDevice()) return undefined;
  } catch {
    return undefined;
  }
  return process.stdout.columns;
}

/** What yargs prints (help, version), written as `console.log` would write it, without `process.stdout`. */
export function logLine(...args: unknown[]): void {
  writeStdout(`${format(...args)}\n`);
}
