/**
 * Text inputs are regular files read within their size limit, UTF-8 without NUL bytes; a
 * byte-order mark is dropped (src/io/read-text.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import { parseYamlText } from '../src/config/load.js';
import { decodeUtf8, forEachLine, inputPathKind, readInputBytes, readTextFile, unreadableReason } from '../src/io/read-text.js';
import { parseMooncakeTrace } from '../src/io/read-mooncake.js';
import { thrownBy } from './helpers/errors.js';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('decodeUtf8', () => {
  it('drops a UTF-8 byte-order mark and keeps the rest', () => {
    expect(decodeUtf8(bytes([0xef, 0xbb, 0xbf], 'a: 1\nb: é\n'), 'x')).toBe('a: 1\nb: é\n');
  });

  it('names the line of bytes that are not UTF-8, and of a NUL byte with its column', () => {
    expect(thrownBy(() => decodeUtf8(bytes('a\nb\nc', [0xff], '\n'), 'f.yaml'), InputError).message).toBe(
      'f.yaml:3: is not UTF-8 text; save the file as UTF-8',
    );
    expect(thrownBy(() => decodeUtf8(bytes('a\nbb', [0], 'c\n'), 'f.yaml'), InputError).message).toBe(
      'f.yaml:2: has a NUL byte (column 3): the file is binary or damaged',
    );
    // A multi-byte character cut by the end of the file.
    expect(thrownBy(() => decodeUtf8(bytes('a\n', [0xc3]), 'f.yaml'), InputError).line).toBe(2);
  });

  it('says UTF-16 when the file starts with its byte-order mark', () => {
    expect(thrownBy(() => decodeUtf8(Buffer.from('\ufeffa: 1\n', 'utf16le'), 'f.yaml'), InputError).message).toMatch(
      /^f\.yaml:1: is UTF-16 text/,
    );
  });
});

describe('traces', () => {
  const row = '{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [0]}';
  it('accept a byte-order mark before the first row', () => {
    expect(parseMooncakeTrace(bytes([0xef, 0xbb, 0xbf], `${row}\n${row}\n`), { label: 't.jsonl' }).rows).toBe(2);
  });
  it('name the line of bytes that are not UTF-8 or a NUL, even where --skip-invalid-rows would skip it', () => {
    expect(thrownBy(() => parseMooncakeTrace(bytes(`${row}\n`, [0xfe], `${row}\n`), { label: 't.jsonl' }), InputError).message).toBe(
      't.jsonl:2: is not UTF-8 text; save the file as UTF-8',
    );
    expect(parseMooncakeTrace(bytes(`${row}\n`, [0], `${row}\n${row}\n`), { label: 't.jsonl', skipInvalid: true }).skipped).toBe(1);
  });
});

describe('YAML tags', () => {
  it('refuses a custom tag or a YAML 1.1 typed tag at its line and column', () => {
    for (const [text, line, tag, column] of [
      ['engine:\n  model: !mytag m\n', 2, '!mytag', 10],
      ['a: 1\nb: !!js/function "function () {}"\n', 2, '!!js/function', 4],
      ['x: [1, !!binary aGVsbG8=]\n', 1, '!!binary', 8],
      ['when: !!timestamp 2001-12-14\n', 1, '!!timestamp', 7],
      ['s: !!set {a, b}\n', 1, '!!set', 4],
      ['engine: !cfg {model: m}\n', 1, '!cfg', 9],
    ] as const) {
      expect(thrownBy(() => parseYamlText(text, 'run.yaml'), InputError).message).toBe(
        `run.yaml:${line}: invalid YAML: the tag ${tag} is not supported; write a plain value (a string, number, boolean, list or mapping) without a tag (column ${column})`,
      );
    }
  });

  it('reads the core tags as the plain values they name', () => {
    expect(
      parseYamlText(
        'a: !!str 12\nb: !!int "7"\nc: !!float 1.5\nd: !!bool true\ne: !!null ""\nf: !!seq [1]\ng: !!map {x: 1}\nh: ! 5\n',
        'ok.yaml',
      ),
    ).toEqual({
      a: '12',
      b: 7,
      c: 1.5,
      d: true,
      e: null,
      f: [1],
      g: { x: 1 },
      h: '5',
    });
  });
});

describe('YAML limits', () => {
  it('refuses nesting deeper than 64 levels at the line where it goes past', () => {
    let text = 'a:\n';
    for (let i = 1; i <= 70; i++) text += `${' '.repeat(i)}k${i}:\n`;
    expect(thrownBy(() => parseYamlText(text, 'deep.yaml'), InputError).message).toBe(
      'deep.yaml:65: nested more than 64 levels deep; a config needs a handful',
    );
    expect(() => parseYamlText(`a: ${'['.repeat(64)}1${']'.repeat(64)}\n`, 'ok.yaml')).toThrow(/nested/);
    expect(parseYamlText(`a: ${'['.repeat(60)}1${']'.repeat(60)}\n`, 'ok.yaml')).toBeDefined();
  });

  it('finds a duplicated key in a large mapping, at its line and column', () => {
    const keys = Array.from({ length: 5000 }, (_, i) => `  k${i}: ${i}`);
    keys.push('  k17: again');
    expect(thrownBy(() => parseYamlText(`engine:\n${keys.join('\n')}\n`, 'dup.yaml'), InputError).message).toBe(
      'dup.yaml:5002: invalid YAML: Map keys must be unique (column 3)',
    );
    // Keys that differ only in type are different keys, as YAML says.
    expect(parseYamlText('a:\n  1: x\n  "1": y\n', 'types.yaml')).toEqual({ a: { 1: 'y' } });
  });
});

describe('paths that are not regular files', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  function tempDir(): string {
    const d = mkdtempSync(join(tmpdir(), 'servesim-read-'));
    dirs.push(d);
    return d;
  }

  it('refuses a FIFO without opening it for a blocking read (which would wait for a writer forever)', () => {
    const fifo = join(tempDir(), 'x.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(thrownBy(() => readTextFile(fifo, 'models/x.yaml'), InputError).message).toBe(
      'models/x.yaml: is a FIFO (named pipe), not a regular file; give a file',
    );
    expect(unreadableReason(fifo)).toBe('is a FIFO (named pipe), not a regular file; give a file');
  });

  it('refuses /dev/zero and /dev/urandom, named directly or through a symlink', () => {
    const link = join(tempDir(), 'x.yaml');
    symlinkSync('/dev/zero', link);
    for (const [path, label] of [
      ['/dev/zero', '/dev/zero'],
      ['/dev/urandom', '/dev/urandom'],
      [link, 'x.yaml'],
    ]) {
      expect(thrownBy(() => readInputBytes(path, label), InputError).message).toBe(
        `${label}: is a character device, not a regular file; give a file`,
      );
    }
  });

  it('tells a file, a folder and anything else apart', () => {
    const d = tempDir();
    writeFileSync(join(d, 'f'), 'x');
    expect(inputPathKind(join(d, 'f'))).toBe('file');
    expect(inputPathKind(d)).toBe('folder');
    expect(thrownBy(() => inputPathKind('/dev/null', 'm'), InputError).message).toBe(
      'm: is a character device, not a file or a folder; give a file or a folder',
    );
    expect(thrownBy(() => inputPathKind(join(d, 'none')), InputError).reason).toBe('no such file or folder');
  });
});

describe('the size limit applies to what is read', () => {
  it('stops after the limit when the stated size is 0 (a /proc file), and reads a file within it whole', () => {
    // /proc/self/status states a size of 0 and holds about 1.4 KiB.
    expect(statSync('/proc/self/status').size).toBe(0);
    expect(thrownBy(() => readInputBytes('/proc/self/status', 'status', 100, 'status file'), InputError).message).toBe(
      'status: holds more than the 1 KiB a status file may have; it is not read',
    );
    const whole = readInputBytes('/proc/self/status', 'status', 64 * 1024);
    expect(whole.toString('utf8')).toMatch(/^Name:/);
    expect(whole.toString('utf8')).toMatch(/\nPid:\s+\d+\n/);
  });

  it('refuses a file whose stated size is over the limit before reading it', () => {
    const d = mkdtempSync(join(tmpdir(), 'servesim-read-'));
    try {
      writeFileSync(join(d, 'big.yaml'), 'x'.repeat(3000));
      expect(thrownBy(() => readTextFile(join(d, 'big.yaml'), 'big.yaml', 2048, 'config'), InputError).message).toBe(
        'big.yaml: is 3 KiB, more than the 2 KiB a config may have; it is not read',
      );
      expect(readTextFile(join(d, 'big.yaml'), 'big.yaml', 3000)).toHaveLength(3000);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('forEachLine', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'servesim-lines-')), 'lines.txt');
  afterAll(() => rmSync(dirname(file), { recursive: true, force: true }));
  const collect = (text: string | Buffer, max = 100) => {
    writeFileSync(file, text);
    const seen: Array<[number, string]> = [];
    forEachLine(file, 'lines.txt', max, 'a test limit', (bytes, line) => {
      seen.push([line, bytes.toString('utf8')]);
      return true;
    });
    return seen;
  };

  it('gives every line with its number, a last line without LF and an empty line too', () => {
    expect(collect('a\nbb\r\n\nccc')).toEqual([
      [1, 'a'],
      [2, 'bb\r'],
      [3, ''],
      [4, 'ccc'],
    ]);
    expect(collect('a\n')).toEqual([[1, 'a']]);
    expect(collect('')).toEqual([]);
  });

  it('reads lines across its pieces (1 MiB each) and stops when told to', () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `${i}:${'y'.repeat(i % 97)}`);
    expect(collect(`${lines.join('\n')}\n`, 1000).map(([, text]) => text)).toEqual(lines);
    writeFileSync(file, 'a\nb\nc\n');
    let calls = 0;
    forEachLine(file, 'f', 10, 'why', () => ++calls < 2);
    expect(calls).toBe(2);
  });

  it('refuses an over-long line at its number, the last one too, and accepts one at the limit', () => {
    expect(thrownBy(() => collect(`ok\n${'z'.repeat(101)}\nok\n`), InputError).message).toBe(
      'lines.txt:2: is longer than 1 KiB (a test limit); it is not parsed',
    );
    expect(thrownBy(() => collect(`ok\nok\n${'z'.repeat(101)}`), InputError).line).toBe(3);
    expect(collect(`${'z'.repeat(100)}\n`)).toHaveLength(1);
  });

  it('refuses a line of 3 MiB without a newline after reading only part of it', () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 0x31);
    expect(thrownBy(() => collect(big, 1024 * 1024), InputError).line).toBe(1);
  });
});
