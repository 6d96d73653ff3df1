/**
 * Reading YAML (or JSON) files as one document, with syntax errors turned into `InputError`s
 * that name the file and the line. Shared by run configs, sweep files and the catalog.
 */
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { InputError } from './errors.js';

/**
 * Reads one YAML document. An empty document is `{}`. Syntax errors (including duplicate
 * keys) are `InputError`s naming `label` and the line.
 */
export function readYamlFile(path: string, label: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(label, 0, `cannot read the file (${err instanceof Error ? err.message : String(err)})`);
  }
  return parseYamlText(text, label);
}

/** Parses YAML text as one document; see `readYamlFile`. */
export function parseYamlText(text: string, label: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const position = first.linePos?.[0];
    const detail = first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    const column = position === undefined ? '' : ` (column ${position.col})`;
    throw new InputError(label, position?.line ?? 0, `invalid YAML: ${detail}${column}`);
  }
  try {
    return doc.toJS() ?? {};
  } catch (err) {
    throw new InputError(label, 0, `invalid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
}
