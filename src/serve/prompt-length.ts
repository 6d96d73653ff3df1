/**
 * How a live engine counts a prompt's tokens (docs/serving.md, "What is simulated"): with
 * `--tokenizer FILE`, a Hugging Face `tokenizer.json` read by `@huggingface/tokenizers` (special
 * tokens added as the model adds them, a tokenizer_config.json beside it read when present);
 * without one, the length of the text in characters (UTF-16 code units) / 4, rounded up, at
 * least 1. A prompt given as token ids counts its ids.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError } from '../config/errors.js';

export interface PromptCounter {
  /** Tokens of this text. */
  count(text: string): number;
  /** The rule, as the server prints it at start-up. */
  readonly rule: string;
}

export const CHARS_PER_TOKEN = 4;

/** characters / 4, rounded up, at least 1. */
export const charsPerTokenCounter: PromptCounter = {
  count: (text) => Math.max(1, Math.ceil(text.length / CHARS_PER_TOKEN)),
  rule: `characters / ${CHARS_PER_TOKEN}, rounded up`,
};

function readJson(path: string, label: string): object {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(label, 0, `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InputError(label, 0, `is not JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError(label, 0, 'must hold a JSON object');
  return value;
}

interface HfTokenizer {
  encode(text: string): { ids: number[] };
}
type HfTokenizerClass = new (tokenizer: object, config: object) => HfTokenizer;

/** A tokenizer.json (and the tokenizer_config.json beside it, when there is one) as a counter. */
export async function loadTokenizerCounter(path: string): Promise<PromptCounter> {
  const json = readJson(path, path);
  const configPath = join(dirname(path), 'tokenizer_config.json');
  const config = existsSync(configPath) ? readJson(configPath, configPath) : {};
  // The package's type declarations import their modules without extensions, which this
  // project's module resolution does not follow: the little used is typed here.
  const { Tokenizer } = (await import('@huggingface/tokenizers')) as unknown as { Tokenizer: HfTokenizerClass };
  let tokenizer: HfTokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
    tokenizer.encode('servesim');
  } catch (err) {
    throw new InputError(path, 0, `is not a tokenizer.json that @huggingface/tokenizers can use (${(err as Error).message})`);
  }
  return {
    count: (text) => Math.max(1, tokenizer.encode(text).ids.length),
    rule: `the tokenizer ${path}`,
  };
}
