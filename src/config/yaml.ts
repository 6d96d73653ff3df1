/**
 * Reading YAML (or JSON) files as one document, with syntax errors turned into `InputError`s
 * that name the file and the line. Shared by run configs, sweep files and the catalog. Inputs
 * past the size and depth limits (limits.ts) are refused before they are parsed. Values are plain
 * (strings, numbers, booleans, null, lists, mappings): a custom tag (`!mytag`, `!!js/function`)
 * and YAML 1.1's typed tags (`!!binary`, `!!timestamp`, `!!set`, `!!omap`, `!!pairs`) are
 * refused at their line, where the YAML library would turn them into a string, a byte array or
 * a date without a word. The core tags (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map`,
 * `!!seq`) are accepted.
 */
import {
  Composer,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  Parser,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';
import { readTextFile } from '../io/read-text.js';
import { InputError } from './errors.js';
import { MAX_YAML_BYTES, MAX_YAML_DEPTH, formatFileSize } from './limits.js';

/**
 * Reads one YAML document. An empty document is `{}`. A missing file, a folder, a file over
 * MAX_YAML_BYTES (checked before it is read), bytes that are not UTF-8 text, nesting deeper than
 * MAX_YAML_DEPTH and syntax errors (including duplicate keys) are `InputError`s naming `label`
 * and, where there is one, the line.
 */
export function readYamlFile(path: string, label: string, what = 'config or sweep file'): unknown {
  return parseYamlText(readTextFile(path, label, MAX_YAML_BYTES, what), label, what);
}

/** Parses YAML text as one document; see `readYamlFile`. */
export function parseYamlText(text: string, label: string, what = 'config or sweep file'): unknown {
  if (text.length > MAX_YAML_BYTES) {
    throw new InputError(label, 0, `is ${formatFileSize(text.length)}, more than the ${formatFileSize(MAX_YAML_BYTES)} a ${what} may have`);
  }
  // One pass of the parser; its syntax tree is checked for depth before the document is built.
  const lineCounter = new LineCounter();
  const tokens = [...new Parser(lineCounter.addNewLine).parse(text)];
  checkNesting(tokens, label, lineCounter);
  // The library's own duplicate-key check compares each key with every earlier key of its
  // mapping (quadratic: 40,000 keys took a minute); `uniqueKeys: false` turns it off and
  // `checkUniqueKeys` does the same check with a set per mapping.
  const docs = [...new Composer({ ...PLAIN_VALUES, uniqueKeys: false }).compose(tokens, true, text.length)];
  const doc = docs[0];
  const first = doc.errors[0];
  if (first !== undefined) {
    const position = lineCounter.linePos(first.pos[0]);
    throw new InputError(label, position.line, `invalid YAML: ${first.message.split('\n')[0]} (column ${position.col})`);
  }
  if (docs.length > 1) {
    const position = lineCounter.linePos(docs[1].range[0]);
    throw new InputError(label, position.line, 'invalid YAML: the file holds several documents (a line of ---); a config is one');
  }
  const tag = unsupportedTag(doc, text);
  if (tag !== null) {
    const { line, col } = lineCounter.linePos(tag.offset);
    throw new InputError(label, line, `invalid YAML: ${tag.reason} (column ${col})`);
  }
  checkUniqueKeys(doc, label, lineCounter);
  try {
    return doc.toJS() ?? {};
  } catch (err) {
    throw new InputError(label, 0, `invalid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Parser options that keep values plain: YAML 1.1's typed tags are not resolved (see the header). */
export const PLAIN_VALUES: ParseOptions & DocumentOptions & SchemaOptions = { resolveKnownTags: false };

/**
 * The first tag of `doc` the library could not resolve (a custom or YAML 1.1 tag), with its
 * offset in `text` and the reason to give; null when there is none.
 */
export function unsupportedTag(doc: Document, text: string): { offset: number; reason: string } | null {
  const warning = doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (warning === undefined) return null;
  const offset = warning.pos[0];
  const tag = /^!\S*/.exec(text.slice(offset))?.[0] ?? 'a tag';
  return {
    offset,
    reason: `the tag ${tag} is not supported; write a plain value (a string, number, boolean, list or mapping) without a tag`,
  };
}

/** A YAML syntax tree node as the parser yields it (only the fields the walk reads). */
interface CstNode {
  type?: string;
  offset?: number;
  value?: CstNode;
  key?: CstNode | null;
  items?: Array<{ key?: CstNode | null; value?: CstNode }>;
}

const COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection']);

/**
 * Refuses nesting deeper than MAX_YAML_DEPTH before the document is built (building it recurses
 * once per level, and thousands of levels overflow the stack). Walks the parser's syntax tree
 * with an explicit stack.
 */
function checkNesting(tokens: readonly CstNode[], label: string, lineCounter: LineCounter): void {
  const stack: Array<[CstNode, number]> = tokens.map((token) => [token, 0]);
  while (stack.length > 0) {
    const [node, parentDepth] = stack.pop() as [CstNode, number];
    const depth = COLLECTIONS.has(node.type ?? '') ? parentDepth + 1 : parentDepth;
    if (depth > MAX_YAML_DEPTH) {
      const line = lineCounter.linePos(node.offset ?? 0).line;
      throw new InputError(label, line, `nested more than ${MAX_YAML_DEPTH} levels deep; a config needs a handful`);
    }
    if (node.value) stack.push([node.value, depth]);
    if (node.key) stack.push([node.key, depth]);
    for (const item of node.items ?? []) {
      if (item.value) stack.push([item.value, depth]);
      if (item.key) stack.push([item.key, depth]);
    }
  }
}

/** Two equal scalar keys in one mapping are an error at the second (YAML requires unique keys). */
function checkUniqueKeys(doc: Document, label: string, lineCounter: LineCounter): void {
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key)) {
          const value = typeof key.value === 'string' ? `s:${key.value}` : key.value;
          if (seen.has(value)) {
            const { line, col } = lineCounter.linePos(key.range?.[0] ?? 0);
            throw new InputError(label, line, `invalid YAML: Map keys must be unique (column ${col})`);
          }
          seen.add(value);
        } else if (key !== null) {
          stack.push(key);
        }
        stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    }
  }
}
