/** How `servesim serve` counts prompt tokens: a tokenizer.json through @huggingface/tokenizers, or characters / 4. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { charsPerTokenCounter, loadTokenizerCounter } from '../src/serve/prompt-length.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'serve');

describe('prompt tokens', () => {
  it('are characters / 4, rounded up, at least 1, without a tokenizer', () => {
    expect(['', 'a', 'abcd', 'abcde', 'x'.repeat(4000)].map((t) => charsPerTokenCounter.count(t))).toEqual([1, 1, 1, 2, 1000]);
  });

  it("are the tokenizer's tokens with one", async () => {
    // A word-level vocabulary split on whitespace and punctuation: each word or comma one token.
    const counter = await loadTokenizerCounter(join(FIXTURES, 'tokenizer.json'));
    expect(counter.count('hello world')).toBe(2);
    expect(counter.count('hello, world, unknown words')).toBe(6);
  });

  it('refuse a file that is not a tokenizer, naming it', async () => {
    const path = join(FIXTURES, 'not-a-tokenizer.json');
    await expect(loadTokenizerCounter(path)).rejects.toThrow(`${path}: is not a tokenizer.json that @huggingface/tokenizers can use`);
    await expect(loadTokenizerCounter(join(FIXTURES, 'missing.json'))).rejects.toThrow(/missing\.json: cannot be read \(ENOENT\)/);
  });
});
