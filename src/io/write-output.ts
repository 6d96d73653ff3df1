/**
 * Writing output files so that nothing is ever half written: every file goes to a temporary file
 * in the same folder (`<file>.<unsigned 32-bit number>`), is flushed, and is renamed over the old
 * one. A write that fails (a full disk, a quota, a read-only folder) removes its temporary file,
 * leaves the previous complete file in place and becomes one `OutputError` naming the file (exit
 * status 1). The files of one result (a replay's summary.json and requests.jsonl, a fit's files)
 * are written as a group (`writeOutputFiles`): all of them to temporary files first, then renamed
 * together, so they appear together or not at all, and folders the group created are removed
 * again when it fails. A folder given with `--out` that is a file, or sits under one, is bad input
 * (exit status 2) found before any work is done.
 *
 * Why not write-file-atomic (7.0.1 was tried): it makes one write() per file and ignores how many
 * bytes the system took. On a full disk the first write is short without an error, so a
 * 4,096-byte start of report.html was renamed into place and the command exited 0 (seen on a
 * 4 MiB tmpfs). Node's writeFileSync on a descriptor writes until everything is written or the
 * system says why not, which is what this needs.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { InputError } from '../config/errors.js';

let random: typeof Crypto.randomInt | undefined;

/**
 * `<file>.<unsigned 32-bit number>`, the temporary file `file` is written to. `node:crypto` is
 * loaded when the first file is written: loading it costs about ten milliseconds, a noticeable
 * part of the start-up of a replay that writes nothing.
 */
function temporaryFile(file: string): string {
  random ??= (createRequire(import.meta.url)('node:crypto') as typeof Crypto).randomInt;
  return `${file}.${random(2 ** 32 - 1)}`;
}

/** Exit status of a run that could not write its output. */
export const OUTPUT_ERROR_EXIT_CODE = 1;

/** An output file that could not be written; its previous version, if any, is untouched. */
export class OutputError extends Error {
  readonly exitCode = OUTPUT_ERROR_EXIT_CODE;
  readonly file: string;
  readonly code: string | undefined;
  constructor(file: string, message: string, code?: string) {
    super(message);
    this.name = 'OutputError';
    this.file = file;
    this.code = code;
  }
}

const REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'a folder of that name is in the way',
  ENOTDIR: 'a file is in the way of its folder',
  EIO: 'an I/O error',
  EMFILE: 'too many open files',
  EFBIG: 'the file is too large for the file system',
};

/** A file path as short as it can be shown (relative to the working folder when below it). */
function shown(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') && rel.length < file.length ? rel : file;
}

/** The `OutputError` for a failed write of `file` (any other error is returned as it is). */
export function outputError(file: string, err: unknown, existed = false): Error {
  if (err instanceof OutputError) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string') return err as Error;
  const reason = REASONS[code] ?? (err as Error).message;
  const kept = existed ? '; the previous version is left in place' : '';
  return new OutputError(file, `cannot write ${shown(file)}: ${reason} (${code})${kept}`, code);
}

/** What the writers do to the file system; tests swap in one that fails. */
export interface OutputIo {
  open(file: string): number;
  /** Writes all of `data` at the descriptor's position, or throws. */
  write(fd: number, data: string | Buffer): void;
  sync(fd: number): void;
  close(fd: number): void;
  rename(from: string, to: string): void;
  remove(file: string): void;
}

export const fileSystemIo: OutputIo = {
  open: (file) => openSync(file, 'w'),
  // On a descriptor, writeFileSync loops until every byte is written: a short write (a disk
  // filling up) is followed by the write that reports ENOSPC.
  write: (fd, data) => writeFileSync(fd, data),
  sync: (fd) => fsyncSync(fd),
  close: (fd) => closeSync(fd),
  rename: (from, to) => renameSync(from, to),
  remove: (file) => rmSync(file, { force: true }),
};

/** Lines are written in chunks of about this many characters. */
const CHUNK_CHARS = 1 << 20;

/**
 * Writes `content` to `file` through a temporary file and a rename. `content` is the whole text,
 * or an iterable of pieces (lines) written as they come, so that an output larger than one string
 * can hold is never joined. Throws `OutputError` when the write fails.
 */
export function writeOutputFile(file: string, content: OutputContent, io: OutputIo = fileSystemIo): void {
  const existed = existsSync(file);
  const tmp = temporaryFile(file);
  let fd: number | undefined;
  try {
    fd = io.open(tmp);
    writeContent(fd, content, io);
    io.sync(fd);
    io.close(fd);
    fd = undefined;
    io.rename(tmp, file);
  } catch (err) {
    if (fd !== undefined) {
      try {
        io.close(fd);
      } catch {
        // The write already failed; the close error says nothing more.
      }
    }
    io.remove(tmp);
    throw outputError(file, err, existed);
  }
}

/** What an output file holds: the whole text, or pieces (lines) written as they come. */
export type OutputContent = string | Buffer | Iterable<string>;

/** Writes `content` to the open descriptor `fd`, in chunks when it comes in pieces. */
function writeContent(fd: number, content: OutputContent, io: OutputIo): void {
  if (typeof content === 'string' || Buffer.isBuffer(content)) {
    io.write(fd, content);
    return;
  }
  let chunk = '';
  for (const piece of content) {
    chunk += piece;
    if (chunk.length >= CHUNK_CHARS) {
      io.write(fd, chunk);
      chunk = '';
    }
  }
  if (chunk !== '') io.write(fd, chunk);
}

/**
 * Writes the files of one result so that they appear together or not at all: each to a temporary
 * file beside it (flushed), then, once every one is complete, all renamed into place. When a
 * write fails, every temporary file is removed, the previous files stay as they were, the folders
 * this call created are removed, and the `OutputError` names the file that failed. Folders are
 * created as needed (`makeOutputDir`: a file in the way is bad input, exit status 2).
 */
export function writeOutputFiles(files: ReadonlyArray<readonly [string, OutputContent]>, io: OutputIo = fileSystemIo): void {
  const created: string[] = [];
  const written: Array<{ tmp: string; file: string }> = [];
  let failed: { file: string; existed: boolean } | undefined;
  try {
    for (const [file, content] of files) {
      failed = { file, existed: existsSync(file) };
      const made = makeOutputDir(dirname(file));
      if (made !== undefined) created.push(made);
      const tmp = temporaryFile(file);
      let fd: number | undefined;
      try {
        fd = io.open(tmp);
        written.push({ tmp, file });
        writeContent(fd, content, io);
        io.sync(fd);
        io.close(fd);
        fd = undefined;
      } finally {
        if (fd !== undefined) {
          try {
            io.close(fd);
          } catch {
            // The write already failed; the close error says nothing more.
          }
        }
      }
    }
    for (const { tmp, file } of written) {
      failed = { file, existed: existsSync(file) };
      io.rename(tmp, file);
    }
  } catch (err) {
    for (const { tmp } of written) io.remove(tmp);
    for (const dir of created.reverse()) removeEmptyFolders(dir);
    if (err instanceof InputError) throw err;
    throw failed === undefined ? err : outputError(failed.file, err, failed.existed);
  }
}

/** Removes `dir` when it holds no file (only empty folders, or nothing); returns whether it did. */
export function removeEmptyFolders(dir: string): boolean {
  const holdsFile = (path: string): boolean => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (!entry.isDirectory() || holdsFile(join(path, entry.name))) return true;
    }
    return false;
  };
  try {
    if (holdsFile(dir)) return false;
    rmSync(dir, { recursive: true, force: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks that `dir` can be an output folder: it is a folder or does not exist yet, and no
 * existing folder on its way is a file. `flag` names it in the error (exit status 2). Nothing is
 * created: call it before any work, and `makeOutputDir` when there is something to write.
 */
export function checkOutputDir(dir: string, flag = '--out'): void {
  const target = resolve(dir);
  let path = target;
  for (;;) {
    if (existsSync(path)) {
      if (!statSync(path).isDirectory()) {
        const what = path === target ? 'is a file, not a folder' : `${shown(path)} is a file, so it cannot hold a folder`;
        throw new InputError(`${flag} ${dir}`, 0, `${what}; give a folder`);
      }
      return;
    }
    const parent = dirname(path);
    if (parent === path) return;
    path = parent;
  }
}

/**
 * Creates an output folder (and its parents); see `checkOutputDir`. Returns the first folder it
 * created (the top of what is new, to remove when what goes into it cannot be written), or
 * undefined when the folder was there.
 */
export function makeOutputDir(dir: string, flag = '--out'): string | undefined {
  checkOutputDir(dir, flag);
  // One level at a time, outermost first: a recursive mkdir reports ENOENT for a read-only file
  // system, where the folder's own mkdir says EROFS (or EACCES, ENOSPC).
  const missing: string[] = [];
  for (let path = resolve(dir); !existsSync(path); path = dirname(path)) {
    missing.unshift(path);
    if (dirname(path) === path) break;
  }
  for (const path of missing) {
    try {
      mkdirSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(path).isDirectory()) continue;
      if (path !== missing[0]) removeEmptyFolders(missing[0]);
      throw outputError(path, err);
    }
  }
  return missing[0];
}

/**
 * Removes temporary files an interrupted write left in `dir` (a process killed between writing
 * and renaming): `<name>.<number>` for each of `names`, and the `<name>.<pid>.tmp` of earlier
 * versions. Returns the names removed.
 */
export function removeStaleTemporaries(dir: string, names: readonly string[]): string[] {
  if (!existsSync(dir)) return [];
  const wanted = new Set(names);
  const removed: string[] = [];
  for (const entry of readdirSync(dir)) {
    const match = /^(.*)\.(\d{1,10})(\.tmp)?$/.exec(entry);
    if (match === null || !wanted.has(match[1])) continue;
    rmSync(join(dir, entry), { force: true });
    removed.push(entry);
  }
  return removed;
}
