/**
 * Reading a text input file (a config, a trace, a CSV or an AIPerf export) as UTF-8, refusing what
 * would otherwise be read silently wrong: a NUL byte (a binary or damaged file) and bytes that are
 * not UTF-8 (a file saved as Latin-1 or UTF-16), each named with the file and line. A UTF-8
 * byte-order mark is accepted and dropped. A path that is missing or a folder is an `InputError`
 * too, never an `ENOENT` stack.
 */
import { readFileSync, statSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { InputError } from '../config/errors.js';
import { formatFileSize } from '../config/limits.js';

const LF = 0x0a;

/** Why a path cannot be read, as a reason for an `InputError`; null when it is a readable file. */
export function unreadableReason(path: string): string | null {
  let stat;
  try {
    stat = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'no such file';
    return `cannot be read (${code ?? (err as Error).message})`;
  }
  return stat.isDirectory() ? 'is a folder, not a file' : null;
}

/** Reads a file's bytes; a missing path, a folder or a file over `maxBytes` is an `InputError` naming `label`. */
export function readInputBytes(path: string, label: string, maxBytes = Infinity, what = 'file'): Buffer {
  const reason = unreadableReason(path);
  if (reason !== null) throw new InputError(label, 0, reason);
  if (Number.isFinite(maxBytes)) {
    const size = statSync(path).size;
    if (size > maxBytes) {
      throw new InputError(
        label,
        0,
        `is ${formatFileSize(size)}, more than the ${formatFileSize(maxBytes)} a ${what} may have; it is not read`,
      );
    }
  }
  try {
    return readFileSync(path);
  } catch (err) {
    throw new InputError(label, 0, `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
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
export function readTextFile(path: string, label = path, maxBytes = Infinity, what = 'file'): string {
  return decodeUtf8(readInputBytes(path, label, maxBytes, what), label);
}
