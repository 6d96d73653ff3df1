/** Text inputs are UTF-8 without NUL bytes; a byte-order mark is dropped (src/io/read-text.ts). */
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import { parseYamlText } from '../src/config/load.js';
import { decodeUtf8 } from '../src/io/read-text.js';
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
