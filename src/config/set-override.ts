/**
 * `--set path=value` overrides, applied to the raw config before validation. The value is
 * YAML (`512` is a number, `true` a boolean, `{type: fixed, blocks: 100}` a mapping, `max`
 * a string); missing intermediate mappings are created.
 */
import { parseDocument } from 'yaml';
import { ConfigError, formatValue } from './errors.js';
import { PLAIN_VALUES, unsupportedTag } from './yaml.js';

/** The file label of errors in the assignment itself. */
export const SET_LABEL = '--set';

export interface SetAssignment {
  /** The assignment as the user wrote it. */
  text: string;
  /** Dotted path, e.g. `engine.workers.aggregated.scheduler.max_sequences`. */
  path: string;
  segments: string[];
  value: unknown;
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Splits `path=value` (at the first `=`) and parses the value as YAML. */
export function parseSetAssignment(assignment: string): SetAssignment {
  const eq = assignment.indexOf('=');
  if (eq < 0) {
    throw new ConfigError(SET_LABEL, '', `${JSON.stringify(assignment)} has no "=": write path=value`);
  }
  const path = assignment.slice(0, eq).trim();
  const segments = path.split('.');
  if (path === '' || segments.some((segment) => segment === '')) {
    throw new ConfigError(SET_LABEL, '', `${JSON.stringify(assignment)}: the path must be dotted keys, like a.b.c`);
  }
  const bad = segments.find((segment) => FORBIDDEN_KEYS.has(segment));
  if (bad !== undefined) throw new ConfigError(SET_LABEL, path, `key ${JSON.stringify(bad)} is not allowed`);
  // Parsed as a document, not with parse(), which prints the library's warnings (an unresolved
  // tag) to stderr as they come: a tag is refused here like in a file.
  const text = assignment.slice(eq + 1);
  const doc = parseDocument(text, PLAIN_VALUES);
  const error = doc.errors[0];
  if (error !== undefined) throw new ConfigError(SET_LABEL, path, `the value is not valid YAML: ${error.message.split('\n')[0]}`);
  const tag = unsupportedTag(doc, text);
  if (tag !== null) throw new ConfigError(SET_LABEL, path, `the value is not valid YAML: ${tag.reason}`);
  let value: unknown;
  try {
    value = doc.toJS() ?? null;
  } catch (err) {
    const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ConfigError(SET_LABEL, path, `the value is not valid YAML: ${detail}`);
  }
  return { text: assignment, path, segments, value };
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Returns a copy of `raw` with one assignment applied; `raw` is not modified. A missing or
 * null intermediate key becomes an empty mapping; any other non-mapping on the way is an
 * error naming its path.
 */
export function applySet(raw: object, assignment: string | SetAssignment): Record<string, unknown> {
  const parsed = typeof assignment === 'string' ? parseSetAssignment(assignment) : assignment;
  if (!isMapping(raw)) {
    throw new ConfigError(SET_LABEL, '', `cannot apply ${parsed.text}: the config is ${formatValue(raw)}, not a mapping`);
  }
  const root = structuredClone<Record<string, unknown>>(raw);
  assignInPlace(root, parsed);
  return root;
}

/**
 * Applies one assignment to `root` itself (see `applySet`). For many assignments in a row (a
 * sweep file's `set` of thousands of keys): cloning the whole config for each made planning
 * quadratic in the number of keys.
 */
export function assignInPlace(root: Record<string, unknown>, parsed: SetAssignment): void {
  let node: Record<string, unknown> = root;
  for (let i = 0; i < parsed.segments.length - 1; i++) {
    const key = parsed.segments[i];
    const next = node[key];
    if (next === undefined || next === null) {
      const created: Record<string, unknown> = {};
      node[key] = created;
      node = created;
    } else if (isMapping(next)) {
      node = next;
    } else {
      const at = parsed.segments.slice(0, i + 1).join('.');
      throw new ConfigError(SET_LABEL, at, `is ${formatValue(next)}, not a mapping, so ${parsed.text} cannot set a key inside it`);
    }
  }
  node[parsed.segments[parsed.segments.length - 1]] = parsed.value;
}
