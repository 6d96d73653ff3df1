/**
 * The one way servesim reads an input file (a config, a catalog entry, a trace, a CSV, an AIPerf
 * export, a sweep's own files). Every path is checked before a byte is read:
 * - it must be a regular file, following symlinks: a folder, a FIFO (named pipe), a device
 *   (`/dev/zero`, `/dev/urandom`) or a socket is refused. Reading a FIFO waits for a writer
 *   forever and a device never ends, so neither is ever opened for a blocking read: the file is
 *   opened without blocking and what was opened is checked again (the path may have changed
 *   between the two looks);
 * - at most `maxBytes + 1` bytes are read, whatever the file's size says (a file may grow while
 *   it is read, and /proc files say 0): a file over its limit is refused, never read whole;
 * - a trace is read line by line (`forEachLine`) with a limit on each line's bytes, so an
 *   over-long line is refused before it is parsed.
 * Text must be UTF-8 without NUL bytes (a binary or damaged file, a file saved as Latin-1 or
 * UTF-16), each problem named with the file and line; a UTF-8 byte-order mark is accepted and
 * dropped. Every problem is an `InputError` (exit status 2), never an `ENOENT` stack.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { InputError } from '../config/errors.js';
import { MAX_TEXT_FILE_BYTES, formatFileSize } from '../config/limits.js';

const LF = 0x0a;
/** Bytes read per system call when a file is read in pieces. */
const CHUNK_BYTES = 1024 * 1024;

/** What a path that is not a regular file is, for messages. */
function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** The reason a stat (of the path, symlinks followed) is not a readable file; null for a regular file. */
function statReason(stat: Stats): string | null {
  if (stat.isFile()) return null;
  if (stat.isDirectory()) return 'is a folder, not a file';
  return `is ${kindOf(stat)}, not a regular file; give a file`;
}

function errnoReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'no such file';
  if (code === 'ELOOP') return 'cannot be read (a loop of symlinks)';
  return `cannot be read (${code ?? (err as Error).message})`;
}

/** Why a path cannot be read, as a reason for an `InputError`; null when it is a regular file. */
export function unreadableReason(path: string): string | null {
  try {
    return statReason(statSync(path));
  } catch (err) {
    return errnoReason(err);
  }
}

/**
 * Whether an input path is a regular file or a folder (symlinks followed); a missing path and
 * anything else (a FIFO, a device, a socket) is an `InputError` naming `label`.
 */
export function inputPathKind(path: string, label = path): 'file' | 'folder' {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch (err) {
    const reason = errnoReason(err);
    throw new InputError(label, 0, reason === 'no such file' ? 'no such file or folder' : reason);
  }
  if (stat.isFile()) return 'file';
  if (stat.isDirectory()) return 'folder';
  throw new InputError(label, 0, `is ${kindOf(stat)}, not a file or a folder; give a file or a folder`);
}

/** True when `path` is a regular file (symlinks followed); false for anything else, a missing path too. */
export function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** True when `path` is a folder (symlinks followed); false for anything else, a missing path too. */
export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Opens a regular file for reading, or throws an `InputError` naming `label`. The open never
 * blocks (O_NONBLOCK: a FIFO that took the place of the file would otherwise wait for a writer),
 * and the descriptor is checked to be a regular file before it is returned.
 */
export function openInputFile(path: string, label: string): number {
  const reason = unreadableReason(path);
  if (reason !== null) throw new InputError(label, 0, reason);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new InputError(label, 0, errnoReason(err));
  }
  const opened = statReason(fstatSync(fd));
  if (opened !== null) {
    closeSync(fd);
    throw new InputError(label, 0, opened);
  }
  return fd;
}

function readFrom(fd: number, buffer: Buffer, offset: number, length: number, label: string): number {
  try {
    return readSync(fd, buffer, offset, length, null);
  } catch (err) {
    throw new InputError(label, 0, errnoReason(err));
  }
}

/** `size` is the stated size, or undefined when the file held more than it stated. */
function tooLarge(label: string, size: number | undefined, maxBytes: number, what: string): InputError {
  const is = size === undefined ? 'holds' : `is ${formatFileSize(size)},`;
  return new InputError(label, 0, `${is} more than the ${formatFileSize(maxBytes)} a ${what} may have; it is not read`);
}

/**
 * Reads a file's bytes: a path that is missing, a folder or not a regular file, and a file over
 * `maxBytes`, are an `InputError` naming `label`. The size the file system states is checked
 * first (a large file is refused unread), and the read stops after `maxBytes + 1` bytes whatever
 * it stated.
 */
export function readInputBytes(path: string, label: string, maxBytes = MAX_TEXT_FILE_BYTES, what = 'file'): Buffer {
  const fd = openInputFile(path, label);
  try {
    const stated = fstatSync(fd).size;
    if (stated > maxBytes) throw tooLarge(label, stated, maxBytes, what);
    let buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(stated + 1, 64 * 1024)));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) break;
        const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buffer.length * 2));
        buffer.copy(bigger, 0, 0, length);
        buffer = bigger;
      }
      const read = readFrom(fd, buffer, length, buffer.length - length, label);
      if (read === 0) break;
      length += read;
    }
    if (length > maxBytes) throw tooLarge(label, undefined, maxBytes, what);
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** The first bytes of a file (at most `bytes`), checked as `readInputBytes` checks a path. */
export function readInputHead(path: string, label: string, bytes: number): Buffer {
  const fd = openInputFile(path, label);
  try {
    const buffer = Buffer.allocUnsafe(bytes);
    let length = 0;
    while (length < bytes) {
      const read = readFrom(fd, buffer, length, bytes - length, label);
      if (read === 0) break;
      length += read;
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/**
 * Calls `onLine` with the bytes of each line of a file (without its LF; a CR before it is kept)
 * and the 1-based line number, until the file ends or `onLine` returns false. The file is read in
 * pieces, never whole. A line longer than `maxLineBytes` is an `InputError` at its line as soon
 * as that many bytes of it are read: it is never held whole or parsed. `tooLong` says why the
 * limit is what it is. The bytes passed are valid only during the call.
 */
export function forEachLine(
  path: string,
  label: string,
  maxLineBytes: number,
  tooLong: string,
  onLine: (bytes: Buffer, line: number) => boolean,
): void {
  const fd = openInputFile(path, label);
  try {
    let buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxLineBytes + 2));
    /** The unread bytes are buffer[start, end); no LF in buffer[start, scanned). */
    let start = 0;
    let end = 0;
    let scanned = 0;
    let line = 0;
    let atEnd = false;
    for (;;) {
      const newline = buffer.subarray(0, end).indexOf(LF, scanned);
      if (newline >= 0) {
        line++;
        if (newline - start > maxLineBytes) throw longLine(label, line, maxLineBytes, tooLong);
        if (!onLine(buffer.subarray(start, newline), line)) return;
        start = newline + 1;
        scanned = start;
        continue;
      }
      scanned = end;
      if (end - start > maxLineBytes) throw longLine(label, line + 1, maxLineBytes, tooLong);
      if (atEnd) {
        if (end > start) onLine(buffer.subarray(start, end), line + 1);
        return;
      }
      // Room for the next piece: move what is left of the current line to the front, or grow.
      if (start > 0) {
        buffer.copy(buffer, 0, start, end);
        end -= start;
        scanned -= start;
        start = 0;
      }
      if (end === buffer.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxLineBytes + 2));
        buffer.copy(bigger, 0, 0, end);
        buffer = bigger;
      }
      const read = readFrom(fd, buffer, end, buffer.length - end, label);
      if (read === 0) atEnd = true;
      end += read;
    }
  } finally {
    closeSync(fd);
  }
}

function longLine(label: string, line: number, maxLineBytes: number, why: string): InputError {
  return new InputError(label, line, `is longer than ${formatFileSize(maxLineBytes)} (${why}); it is not parsed`);
}

/** The problem with one line's bytes (a NUL byte, bytes that are not UTF-8), or null. */
export function lineBytesProblem(bytes: Uint8Array): string | null {
  const nul = bytes.indexOf(0);
  if (nul >= 0) return `has a NUL byte (column ${nul + 1}): the file is binary or damaged`;
  if (!isUtf8(bytes)) return 'is not UTF-8 text; save the file as UTF-8';
  return null;
}

/**
 * The text of UTF-8 bytes, without a leading byte-order mark. A NUL byte or bytes that are not
 * UTF-8 are an `InputError` naming `label` and the 1-based line.
 */
export function decodeUtf8(bytes: Buffer, label: string): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new InputError(label, 1, 'is UTF-16 text (it starts with a UTF-16 byte-order mark); save the file as UTF-8');
  }
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const body = bytes.subarray(start);
  if (body.indexOf(0) < 0 && isUtf8(body)) return body.toString('utf8');
  // Find the first bad line (LF is never part of a multi-byte UTF-8 sequence).
  let line = 1;
  let pos = 0;
  while (pos <= body.length) {
    const newline = body.indexOf(LF, pos);
    const end = newline < 0 ? body.length : newline;
    const problem = lineBytesProblem(body.subarray(pos, end));
    if (problem !== null) throw new InputError(label, line, problem);
    if (newline < 0) break;
    pos = newline + 1;
    line++;
  }
  return body.toString('utf8');
}

/** Reads a text file (see `readInputBytes` and `decodeUtf8`). */
export function readTextFile(path: string, label = path, maxBytes = MAX_TEXT_FILE_BYTES, what = 'file'): string {
  return decodeUtf8(readInputBytes(path, label, maxBytes, what), label);
}
