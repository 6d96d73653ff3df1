/**
 * Loading a run config: YAML text -> raw object -> `--set` overrides -> schema (defaults,
 * per-field rules) -> cross-field rules -> `RunConfig`. Every problem becomes a
 * `ConfigError` naming the file and the dotted path, or an `InputError` naming the file
 * and the line for YAML syntax errors. Nothing is resolved here (the trace path stays as
 * written; `baseDir` says what it is relative to).
 */
import { dirname, resolve } from 'node:path';
import { Composer, isMap, isScalar, isSeq, LineCounter, Parser, type Document } from 'yaml';
import type * as z from 'zod';
import { readTextFile } from '../io/read-text.js';
import { ConfigError, InputError, makeConfigIssue, type ConfigIssue } from './errors.js';
import { MAX_YAML_BYTES, MAX_YAML_DEPTH, formatFileSize } from './limits.js';
import { checkRunConfigRules } from './rules.js';
import { checkEngineStartup, checkRunResources } from './run-checks.js';
import { runConfigSchema } from './schema.js';
import { applySet, parseSetAssignment, type SetAssignment } from './set-override.js';
import type { RunConfig } from './types.js';

export interface LoadedRunConfig {
  config: RunConfig;
  /** The config path as the caller gave it; used as the file label of errors. */
  file: string;
  /** Absolute folder of the config file: relative paths in the config are relative to it. */
  baseDir: string;
}

/**
 * Validates a raw config object (as parsed from YAML or JSON) and fills every default.
 * `file` labels errors. The result is a plain JSON-serializable object whose keys follow
 * the schema's order, so `JSON.stringify` of it is stable.
 */
export function parseRunConfig(raw: unknown, file: string): RunConfig {
  return validate(raw, file, []);
}

/**
 * Applies `--set` assignments to an in-memory config (not modified), then validates it, including
 * the checks a run for a user must pass (run-checks.ts: engine start-up checks, request and
 * memory bounds).
 */
export function loadRunConfigFromObject(raw: unknown, label: string, sets: readonly string[] = []): RunConfig {
  const assignments = sets.map((set) => parseSetAssignment(set));
  let current: unknown = raw ?? {};
  for (const assignment of assignments) current = applySet(current as object, assignment);
  return validate(current, label, assignments, true);
}

/** Reads a YAML (or JSON) config file, applies `--set` assignments, and validates it. */
export function loadRunConfig(path: string, sets: readonly string[] = []): LoadedRunConfig {
  const raw = readYamlFile(path, path);
  return { config: loadRunConfigFromObject(raw, path, sets), file: path, baseDir: dirname(resolve(path)) };
}

/**
 * Reads one YAML document. An empty document is `{}`. A missing file, a folder, a file over
 * MAX_YAML_BYTES (checked before it is read), bytes that are not UTF-8 text, nesting deeper than
 * MAX_YAML_DEPTH and syntax errors (including duplicate keys) are `InputError`s naming `label`
 * and, where there is one, the line.
 */
export function readYamlFile(path: string, label: string): unknown {
  return parseYamlText(readTextFile(path, label, MAX_YAML_BYTES, 'config or sweep file'), label);
}

/** Parses YAML text as one document; see `readYamlFile`. */
export function parseYamlText(text: string, label: string): unknown {
  if (text.length > MAX_YAML_BYTES) {
    throw new InputError(
      label,
      0,
      `is ${formatFileSize(text.length)}, more than the ${formatFileSize(MAX_YAML_BYTES)} a config or sweep file may have`,
    );
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

type PathKey = string | number;

function validate(raw: unknown, file: string, sets: readonly SetAssignment[], runChecks = false): RunConfig {
  const parsed = runConfigSchema.safeParse(raw, { reportInput: true });
  const found: { path: PathKey[]; reason: string }[] = [];
  let config: RunConfig | undefined;
  if (parsed.success) {
    config = parsed.data;
    for (const violation of checkRunConfigRules(config)) {
      found.push({ path: violation.path.split('.'), reason: violation.reason });
    }
    // Start-up and resource checks assume a config that follows the rules.
    if (runChecks && found.length === 0) {
      const more = checkEngineStartup(config);
      if (more.length === 0) more.push(...checkRunResources(config));
      for (const violation of more) found.push({ path: violation.path.split('.'), reason: violation.reason });
    }
  } else {
    found.push(...fromZodIssues(parsed.error.issues));
  }
  if (found.length === 0 && config !== undefined) return config;

  found.sort((a, b) => comparePaths(a.path, b.path) || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
  const issues: ConfigIssue[] = found.map(({ path, reason }) => makeConfigIssue(file, path.join('.'), reason, findSetter(path, sets)));
  throw new ConfigError(issues);
}

function fromZodIssues(zodIssues: readonly z.core.$ZodIssue[]): { path: PathKey[]; reason: string }[] {
  const out: { path: PathKey[]; reason: string }[] = [];
  for (const issue of zodIssues) {
    const path = issue.path.map((key) => (typeof key === 'number' ? key : String(key)));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...path, key], reason: issue.message });
    } else {
      out.push({ path, reason: issue.message });
    }
  }
  return out;
}

/** Path order: element by element, numbers before strings, a prefix before its extensions. */
function comparePaths(a: readonly PathKey[], b: readonly PathKey[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** The last `--set` that wrote the field, a mapping containing it, or a field inside it. */
function findSetter(path: readonly PathKey[], sets: readonly SetAssignment[]): string | undefined {
  if (path.length === 0) return undefined;
  for (let i = sets.length - 1; i >= 0; i--) {
    const segments = sets[i].segments;
    const n = Math.min(segments.length, path.length);
    let related = true;
    for (let k = 0; k < n && related; k++) related = segments[k] === String(path[k]);
    if (related) return sets[i].text;
  }
  return undefined;
}
