/**
 * Measured AIPerf runs (docs/aiperf-files.md). One run is one artifact folder holding
 * `profile_export_aiperf.json` (preferred), `profile_export_aiperf.csv` (fallback) and
 * `profile_export.jsonl` (per request, read on demand); GenAI-Perf's
 * `profile_export_genai_perf.*` and custom prefixes (`*_aiperf.json`) are found too.
 *
 * Reading guide: `read-aiperf-json.ts`, `read-aiperf-csv.ts`, `read-aiperf-jsonl.ts` parse
 * one file each; `read-aiperf-load.ts` finds the load parameters; `read-aiperf-stats.ts`
 * recomputes a summary from the JSONL; `read-aiperf-tags.ts` is the metric catalogue.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readAiperfCsv } from './read-aiperf-csv.js';
import { AiperfInputError } from './read-aiperf-errors.js';
import { readAiperfJson } from './read-aiperf-json.js';
import { readAiperfJsonl } from './read-aiperf-jsonl.js';
import { resolveAiperfLoad } from './read-aiperf-load.js';
import { inputPathKind, isFolder, isRegularFile } from './read-text.js';
import type { AiperfLoad, AiperfRequestRecord, AiperfSummary } from './read-aiperf-types.js';

export * from './read-aiperf-types.js';
export { AiperfInputError, InputError } from './read-aiperf-errors.js';
export { parseAiperfJson, readAiperfJson } from './read-aiperf-json.js';
export { parseAiperfCsv, readAiperfCsv } from './read-aiperf-csv.js';
export { isValidRecord, parseAiperfJsonl, readAiperfJsonl } from './read-aiperf-jsonl.js';
export { resolveAiperfLoad } from './read-aiperf-load.js';
export { summarizeAiperfRecords } from './read-aiperf-stats.js';

export interface AiperfRunFiles {
  json: string | undefined;
  csv: string | undefined;
  jsonl: string | undefined;
}

export interface AiperfRun {
  dir: string;
  files: AiperfRunFiles;
  /** From the JSON when there is one, else from the CSV. */
  summary: AiperfSummary;
  load: AiperfLoad;
  /** The JSONL's records, when asked for and present. */
  records: AiperfRequestRecord[] | undefined;
}

export interface ReadAiperfRunOptions {
  /** Also read the per-request JSONL. */
  records?: boolean;
  /** Load parameters given by the user; they win over what the files say. */
  load?: Partial<Pick<AiperfLoad, 'concurrency' | 'requestRate' | 'isl' | 'osl' | 'requestCount' | 'model'>>;
}

function pick(names: string[], preferred: string[], suffixes: string[]): string | undefined {
  for (const name of preferred) if (names.includes(name)) return name;
  return names.filter((name) => suffixes.some((suffix) => name.endsWith(suffix))).sort()[0];
}

/** The summary and per-request files of an artifact folder (undefined where absent). */
export function findAiperfFiles(dir: string): AiperfRunFiles {
  const names = readdirSync(dir).filter((name) => isRegularFile(join(dir, name)));
  const json = pick(names, ['profile_export_aiperf.json', 'profile_export_genai_perf.json'], ['_aiperf.json', '_genai_perf.json']);
  const csv = pick(names, ['profile_export_aiperf.csv', 'profile_export_genai_perf.csv'], ['_aiperf.csv', '_genai_perf.csv']);
  const jsonl = pick(
    names.filter((name) => !name.endsWith('_raw.jsonl')),
    ['profile_export.jsonl'],
    ['profile_export.jsonl', '.jsonl'],
  );
  return {
    json: json && join(dir, json),
    csv: csv && join(dir, csv),
    jsonl: jsonl && join(dir, jsonl),
  };
}

function isRunFolder(dir: string): boolean {
  const files = findAiperfFiles(dir);
  return files.json !== undefined || files.csv !== undefined;
}

/**
 * Artifact folders at or under a path (a folder of runs such as a sweep's `artifacts/`),
 * sorted by path. A path to a summary file stands for its folder.
 */
export function findAiperfRunDirs(path: string, maxDepth = 4): string[] {
  if (inputPathKind(path) === 'file') return [dirname(path)];
  if (isRunFolder(path)) return [path];
  const found: string[] = [];
  const visit = (dir: string, depth: number): void => {
    for (const name of readdirSync(dir).sort()) {
      const child = join(dir, name);
      if (!isFolder(child)) continue;
      if (isRunFolder(child)) found.push(child);
      else if (depth < maxDepth) visit(child, depth + 1);
    }
  };
  visit(path, 1);
  return found;
}

/** Reads one measured run: a folder, or a path to its summary JSON or CSV. */
export function readAiperfRun(path: string, options: ReadAiperfRunOptions = {}): AiperfRun {
  let dir = path;
  let files: AiperfRunFiles;
  if (inputPathKind(path) === 'file') {
    dir = dirname(path);
    const found = findAiperfFiles(dir);
    files = path.endsWith('.csv') ? { json: undefined, csv: path, jsonl: found.jsonl } : { json: path, csv: found.csv, jsonl: found.jsonl };
  } else {
    files = findAiperfFiles(dir);
  }
  let summary: AiperfSummary;
  if (files.json) summary = readAiperfJson(files.json);
  else if (files.csv) summary = readAiperfCsv(files.csv);
  else throw new AiperfInputError(dir, undefined, 'no AIPerf summary here (profile_export_aiperf.json or .csv, or *_genai_perf.*)');
  const records = options.records && files.jsonl ? readAiperfJsonl(files.jsonl) : undefined;
  return { dir, files, summary, load: resolveAiperfLoad(summary, basename(dir), options.load), records };
}
