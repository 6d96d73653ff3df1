/**
 * src/cli/stdout.ts: output written whole through partial writes and a full pipe, dropped without
 * an error once the reader has gone, and any other failure thrown.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeAll, type WriteFn } from '../src/cli/stdout.js';

const dir = mkdtempSync(join(tmpdir(), 'servesim-stdout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TEXT = 'Request Count (requests)  1\nτ ≤ 1 µs, 中文\n';

function failure(code: string): Error {
  return Object.assign(new Error(`write ${code}`), { code });
}

/** A writer that takes at most `chunk` bytes per call into `into`, after throwing each of `errors` in turn. */
function writer(into: number[], chunk: number, errors: string[] = []): WriteFn {
  return (_fd, bytes, offset, length) => {
    const code = errors.shift();
    if (code !== undefined) throw failure(code);
    const n = Math.min(chunk, length);
    into.push(...bytes.subarray(offset, offset + n));
    return n;
  };
}

describe('writing to standard output', () => {
  it('writes the text as UTF-8 to a file', () => {
    const file = join(dir, 'out.txt');
    const fd = openSync(file, 'w');
    writeAll(fd, TEXT);
    writeAll(fd, 'second\n');
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe(`${TEXT}second\n`);
  });

  it('writes everything through partial writes and a full pipe (EAGAIN)', () => {
    const into: number[] = [];
    writeAll(101, TEXT, writer(into, 3, ['EAGAIN', 'EAGAIN', 'EAGAIN']));
    expect(Buffer.from(into).toString('utf8')).toBe(TEXT);
    // 49 bytes of UTF-8, three at a time: 17 writes.
    expect(Buffer.byteLength(TEXT)).toBe(49);
  });

  it('drops the rest quietly once the reader has gone (EPIPE), and any later text', () => {
    const into: number[] = [];
    let calls = 0;
    const write: WriteFn = (fd, bytes, offset, length) => {
      calls++;
      if (offset >= 10) throw failure('EPIPE');
      return writer(into, 10)(fd, bytes, offset, length);
    };
    writeAll(102, TEXT, write);
    expect(Buffer.from(into).toString('latin1')).toBe(TEXT.slice(0, 10));
    expect(calls).toBe(2);
    writeAll(102, 'more', write);
    expect(calls).toBe(2);
  });

  it('throws any other error', () => {
    expect(() => writeAll(103, TEXT, writer([], 3, ['EIO']))).toThrow('write EIO');
  });
});
