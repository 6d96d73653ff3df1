/**
 * Reading YAML (or JSON) files as one document, with syntax errors turned into `InputError`s
 * that name the file and the line. Shared by run configs, sweep files and the catalog. Inputs
 * past the size and depth limits (limits.ts) are refused before they are parsed.
 */
import { Composer, isMap, isScalar, isSeq, LineCounter, Parser, type Document } from 'yaml';
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
  const docs = [...new Composer({ uniqueKeys: false }).compose(tokens, true, text.length)];
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
  checkUniqueKeys(doc, label, lineCounter);
  try {
    return doc.toJS() ?? {};
  } catch (err) {
    throw new InputError(label, 0, `invalid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
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
