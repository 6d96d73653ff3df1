/**
 * Output files are written whole or not at all (src/io/write-output.ts). A failing disk is
 * injected through the writers' `OutputIo` (a full disk for real is in
 * test/output-faults.e2e.test.ts, which needs root for its tmpfs).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import {
  OutputError,
  checkOutputDir,
  fileSystemIo,
  removeEmptyFolders,
  removeStaleTemporaries,
  writeOutputFile,
  writeOutputFiles,
  type OutputIo,
} from '../src/io/write-output.js';
import { thrownBy } from './helpers/errors.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'servesim-out-'));
  dirs.push(d);
  return d;
}

/** A file system whose writes fail with `code` once `budget` characters have been written. */
function fullDisk(budget: number, code = 'ENOSPC'): OutputIo {
  let written = 0;
  const fail = () => Object.assign(new Error(`${code}: no space left on device, write`), { code });
  return {
    ...fileSystemIo,
    write: (fd, data) => {
      written += data.length;
      if (written > budget) {
        // Part of the chunk reaches the disk before the error, as on a real full disk.
        fileSystemIo.write(fd, data.slice(0, data.length - (written - budget)));
        throw fail();
      }
      fileSystemIo.write(fd, data);
    },
  };
}

describe('writeOutputFile', () => {
  it('replaces a file whole, leaving no temporary file', () => {
    const d = tempDir();
    const file = join(d, 'summary.json');
    writeOutputFile(file, 'old\n');
    writeOutputFile(file, 'new\n');
    expect(readFileSync(file, 'utf8')).toBe('new\n');
    expect(readdirSync(d)).toEqual(['summary.json']);
  });

  it('streams pieces (lines) larger than one chunk in order', () => {
    const d = tempDir();
    const file = join(d, 'requests.jsonl');
    const lines = Array.from({ length: 30_000 }, (_, i) => `${JSON.stringify({ id: i, pad: 'x'.repeat(40) })}\n`);
    writeOutputFile(file, lines);
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('on a full disk mid-stream: one error naming the file, the previous file kept, no temporary left', () => {
    const d = tempDir();
    const file = join(d, 'requests.jsonl');
    writeFileSync(file, 'the previous complete file\n');
    const lines = Array.from({ length: 50_000 }, (_, i) => `{"request_id":${i}}\n`);
    const error = thrownBy(() => writeOutputFile(file, lines, fullDisk(300_000)), OutputError);
    expect(error.exitCode).toBe(1);
    expect(error.code).toBe('ENOSPC');
    expect(error.message).toBe(`cannot write ${file}: no space left on the device (ENOSPC); the previous version is left in place`);
    expect(error.message).not.toContain('\n');
    expect(readFileSync(file, 'utf8')).toBe('the previous complete file\n');
    expect(readdirSync(d)).toEqual(['requests.jsonl']);
  });

  it('on a full disk for a whole file: the same, and no file at all when there was none', () => {
    const d = tempDir();
    const file = join(d, 'report.html');
    const error = thrownBy(() => writeOutputFile(file, 'x'.repeat(100), fullDisk(10, 'EDQUOT')), OutputError);
    expect(error.message).toBe(`cannot write ${file}: the disk quota is used up (EDQUOT)`);
    expect(existsSync(file)).toBe(false);
  });

  it('leaves errors that are not from the file system as they are', () => {
    const d = tempDir();
    const io: OutputIo = {
      ...fileSystemIo,
      write: () => {
        throw new TypeError('a bug');
      },
    };
    expect(() => writeOutputFile(join(d, 'x'), ['a'], io)).toThrow(TypeError);
    expect(readdirSync(d)).toEqual([]);
  });
});

describe('writeOutputFiles: the files of one result appear together or not at all', () => {
  it('writes every file and creates their folders', () => {
    const d = tempDir();
    writeOutputFiles([
      [join(d, 'out', 'summary.json'), '{}\n'],
      [join(d, 'out', 'requests.jsonl'), ['{"id":0}\n', '{"id":1}\n']],
      [join(d, 'out', 'aiperf', 'profile_export_aiperf.json'), '{"a":1}\n'],
    ]);
    expect(readFileSync(join(d, 'out', 'requests.jsonl'), 'utf8')).toBe('{"id":0}\n{"id":1}\n');
    expect(readdirSync(join(d, 'out')).sort()).toEqual(['aiperf', 'requests.jsonl', 'summary.json']);
  });

  it('when a later file fails, the earlier ones are not put in place either and no temporary is left', () => {
    const d = tempDir();
    writeFileSync(join(d, 'summary.json'), 'old summary\n');
    writeFileSync(join(d, 'requests.jsonl'), 'old requests\n');
    // The summary (100 characters) fits; the requests do not.
    const error = thrownBy(
      () =>
        writeOutputFiles(
          [
            [join(d, 'summary.json'), 's'.repeat(100)],
            [join(d, 'requests.jsonl'), Array.from({ length: 1000 }, (_, i) => `{"request_id":${i}}\n`)],
          ],
          fullDisk(5000),
        ),
      OutputError,
    );
    expect(error.message).toBe(
      `cannot write ${join(d, 'requests.jsonl')}: no space left on the device (ENOSPC); the previous version is left in place`,
    );
    expect(readFileSync(join(d, 'summary.json'), 'utf8')).toBe('old summary\n');
    expect(readFileSync(join(d, 'requests.jsonl'), 'utf8')).toBe('old requests\n');
    expect(readdirSync(d).sort()).toEqual(['requests.jsonl', 'summary.json']);
  });

  it('removes the folders it created when it fails, and keeps folders that were there', () => {
    const d = tempDir();
    mkdirSync(join(d, 'kept'));
    const failing = (): void =>
      writeOutputFiles(
        [
          [join(d, 'kept', 'a.json'), 'a'],
          [join(d, 'new', 'deeper', 'b.json'), 'b'.repeat(100)],
        ],
        fullDisk(50, 'EDQUOT'),
      );
    expect(thrownBy(failing, OutputError).code).toBe('EDQUOT');
    expect(readdirSync(d)).toEqual(['kept']);
    expect(readdirSync(join(d, 'kept'))).toEqual([]);
  });

  it('refuses a file in the way of a folder as bad input, writing nothing', () => {
    const d = tempDir();
    writeFileSync(join(d, 'out'), 'x');
    expect(thrownBy(() => writeOutputFiles([[join(d, 'out', 'summary.json'), '{}']]), InputError).exitCode).toBe(2);
    expect(readdirSync(d)).toEqual(['out']);
  });
});

describe('removeEmptyFolders', () => {
  it('removes a tree of empty folders and keeps one that holds a file', () => {
    const d = tempDir();
    mkdirSync(join(d, 'a', 'b', 'c'), { recursive: true });
    expect(removeEmptyFolders(join(d, 'a'))).toBe(true);
    mkdirSync(join(d, 'x', 'y'), { recursive: true });
    writeFileSync(join(d, 'x', 'y', 'f'), '');
    expect(removeEmptyFolders(join(d, 'x'))).toBe(false);
    expect(readdirSync(d)).toEqual(['x']);
  });
});

describe('output folders', () => {
  it('accepts a folder or a path not made yet, and refuses a file or a path under one (exit 2)', () => {
    const d = tempDir();
    writeFileSync(join(d, 'file'), 'x');
    expect(() => checkOutputDir(d)).not.toThrow();
    expect(() => checkOutputDir(join(d, 'new', 'deeper'))).not.toThrow();
    const onFile = thrownBy(() => checkOutputDir(join(d, 'file')), InputError);
    expect(onFile.message).toBe(`--out ${join(d, 'file')}: is a file, not a folder; give a folder`);
    expect(onFile.exitCode).toBe(2);
    const under = thrownBy(() => checkOutputDir(join(d, 'file', 'sub'), '--aiperf'), InputError);
    expect(under.message).toMatch(/^--aiperf .*file\/sub: .*file is a file, so it cannot hold a folder; give a folder$/);
  });

  it('removes the temporary files an interrupted write left, and nothing else', () => {
    const d = tempDir();
    mkdirSync(join(d, 'sub'));
    for (const name of ['points.jsonl', 'points.jsonl.123456789', 'summary.csv.4242.tmp', 'summary.csv', 'notes.txt.12', 'plan.json.x1']) {
      writeFileSync(join(d, name), 'x');
    }
    expect(removeStaleTemporaries(d, ['points.jsonl', 'summary.csv', 'plan.json']).sort()).toEqual([
      'points.jsonl.123456789',
      'summary.csv.4242.tmp',
    ]);
    expect(readdirSync(d).sort()).toEqual(['notes.txt.12', 'plan.json.x1', 'points.jsonl', 'sub', 'summary.csv']);
  });
});
