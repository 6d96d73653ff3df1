#!/usr/bin/env node
// The documentation's examples and the outputs it shows, run as a user runs them (npm run build
// first). `npm run docs:outputs` (this file) re-runs every page and rewrites each shown output
// with what its command prints now; test/docs-examples.e2e.test.ts runs the same and fails when
// an example fails or a shown output differs. Outputs change when the model's defaults change:
// this is how they are refreshed.
//
//   node scripts/docs-outputs.mjs                 every page
//   node scripts/docs-outputs.mjs docs/planning.md   some pages
//
// Each page runs in a folder of its own holding the files a user has (data/, sweeps/,
// calibration/, scripts/) and servesim installed in node_modules, its blocks in order:
// - ```sh blocks run in bash (`set -euo pipefail`), `npx servesim` being the built CLI;
// - ```js blocks run as ES modules, importing 'servesim' by name;
// - ```yaml blocks that are run configs (engine, traffic, report) are replayed;
// - ```yaml blocks that are CI workflows run their `run:` steps that call servesim.
// Not run: ```bash (commands for other systems: a Slurm job, a cluster's shared volume), other
// YAML (a Kubernetes manifest), and the npm commands that install, build, test or benchmark this
// project (the test suite itself and the benches are run on their own).
//
// Every ```text and ```json block says on the line above it what it is, in an HTML comment
// (not shown when the page is rendered):
//   <!-- output of the example above -->   what the example block above it printed (stdout)
//   <!-- output: CMD -->                   what CMD prints on stdout, run in bash in the page's
//                                          folder at that point (commands joined by ; all run;
//                                          2>&1 shows an error); it must exit 0, or N with
//   <!-- output (exit N): CMD -->
//   <!-- not run: WHY -->                  not an output of this project's commands (a synopsis,
//                                          a diagram, an input format, a benchmark's figures
//                                          measured on the machine the page names)
// An output block holds exactly what its command printed, except for what depends on the
// machine, which is compared as a placeholder (MASKS): wall times (`in 3.2 s`, `in 4.79 ms`,
// `(18.73 us per token)`, `20 replays, 6.85 s`, fit.json's `wall_ms`, a response's `created`). A block that differs only
// there is left as it is, so that refreshing does not churn the pages.
//
// calibration/README.md is a page too: its commands write calibration/fitted/, which is emptied
// first in the page's folder; every file they write must equal the shipped one (fit.json's
// wall_ms masked), and no shipped file may be missing from what they write.
// `npm run fitted:refresh` (--fitted) runs them and copies what they wrote over calibration/fitted/.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
/** The page whose commands write the shipped fitted files, and where they go. */
export const FITTED_PAGE = 'calibration/README.md';
export const FITTED_DIR = 'calibration/fitted';

/**
 * The pages: the fitted files' page first (the other pages' sweeps and scores read what it
 * writes, so a refresh must write it before they run), the README, every docs page.
 */
export const PAGES = [
  FITTED_PAGE,
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** What depends on the machine in a shown output, and the placeholder it is compared as. */
export const MASKS = [
  // A command's or a replay's wall time: `52 replays in 3.2 s`, `5/5 points ok (...) in 6.6 s`, `256 output tokens in 4.79 ms`.
  [/\bin \d[\d,]*(?:\.\d+)? (ms|s)\b/g, 'in <time> $1'],
  [/\(\d[\d,]*(?:\.\d+)? us per token\)/g, '(<time> us per token)'],
  // calibrate engine's headline: `20 replays, 6.85 s`.
  [/(\d+ replays, )\d[\d,]*(?:\.\d+)? s\b/g, '$1<time> s'],
  [/("wall_ms": )\d+/g, '$1<time>'],
  // An OpenAI response's creation time (servesim serve).
  [/("created":)\d+/g, '$1<time>'],
];

export function masked(text) {
  let out = text;
  for (const [pattern, replacement] of MASKS) out = out.replace(pattern, replacement);
  return out;
}

const RUN_CONFIG_KEYS = new Set(['engine', 'traffic', 'report']);

function isRunConfig(value) {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).every((key) => RUN_CONFIG_KEYS.has(key))
  );
}

const MARKER = /^<!--\s*(output of the example above|output(?:\s*\(exit (\d+)\))?:\s*(.+?)|not run:\s*(.+?))\s*-->$/;

/**
 * The fenced blocks of a page in order: `kind` is `sh`, `js` or `config` for an example that runs,
 * `output` or `not-run` for a text or JSON block (with its marker), `other` for the rest. `line`
 * is the 1-based line of the opening fence; `start`..`end` the content's offsets in the page.
 */
export function blocksOf(markdown) {
  const blocks = [];
  for (const match of markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
    const before = markdown.slice(0, match.index);
    const line = before.split('\n').length;
    const [, lang, code] = match;
    const start = match.index + 3 + lang.length + 1;
    const block = { lang, code, line, start, end: start + code.length };
    const markerLine = before.trimEnd().split('\n').pop()?.trim() ?? '';
    const marker = MARKER.exec(markerLine);
    if (lang === 'text' || lang === 'json') {
      if (marker === null) blocks.push({ ...block, kind: 'unmarked' });
      else if (marker[4] !== undefined) blocks.push({ ...block, kind: 'not-run', why: marker[4] });
      else if (marker[3] !== undefined) blocks.push({ ...block, kind: 'output', command: marker[3], exit: Number(marker[2] ?? 0) });
      else blocks.push({ ...block, kind: 'output', ofExample: true });
    } else if (lang === 'sh') blocks.push({ ...block, kind: 'sh' });
    else if (lang === 'js') blocks.push({ ...block, kind: 'js' });
    else if (lang === 'yaml' && isRunConfig(parse(code))) blocks.push({ ...block, kind: 'config' });
    else if (lang === 'yaml' && /\bnpx servesim\b/.test(code)) {
      const steps = parse(code);
      const runs = (Array.isArray(steps) ? steps : []).map((step) => step.run).filter((run) => typeof run === 'string');
      blocks.push({ ...block, kind: 'sh', code: runs.filter((run) => /\bnpx servesim\b/.test(run)).join('\n') });
    } else blocks.push({ ...block, kind: 'other' });
  }
  return blocks;
}

/** A project folder as a user has it: the shipped files, servesim installed. */
export function projectFolder(scratch, name) {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  for (const folder of ['data', 'sweeps', 'calibration', 'scripts']) cpSync(join(ROOT, folder), join(dir, folder), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'servesim'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{"type": "module", "private": true}\n');
  return dir;
}

const FUNCTIONS = `
npx() {
  if [ "$1" = servesim ]; then shift; node "$SERVESIM_CLI" "$@"; else echo "not a servesim command: npx $*" >&2; return 1; fi
}
npm() {
  case "$*" in
    start) node "$SERVESIM_CLI" quickstart ;;
    ci|test|"run build"|"run bench"*) echo "(npm $*: run on its own)" ;;
    *) echo "unexpected: npm $*" >&2; return 1 ;;
  esac
}
if [ ! -x /usr/bin/chromium ]; then
  node() { if [ "\${1:-}" = scripts/check-report-html.mjs ]; then echo "(no Chromium here: skipped)"; else command node "$@"; fi; }
fi
`;

function bash(script, cwd) {
  return spawnSync('bash', ['-c', script], {
    cwd,
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 64 << 20,
    env: { ...process.env, SERVESIM_CLI: CLI, COLUMNS: '110' },
  });
}

/** Runs an example block in `cwd`; a spawnSync result. */
export function runExample(block, cwd) {
  if (block.kind === 'config') {
    const file = join(cwd, `example-${block.line}.yaml`);
    writeFileSync(file, block.code);
    return spawnSync(process.execPath, [CLI, 'replay', file, '--json'], { cwd, encoding: 'utf8', timeout: 600_000, maxBuffer: 64 << 20 });
  }
  if (block.kind === 'js') {
    const file = join(cwd, `example-${block.line}.mjs`);
    writeFileSync(file, block.code);
    return spawnSync(process.execPath, [file], { cwd, encoding: 'utf8', timeout: 600_000, maxBuffer: 64 << 20 });
  }
  return bash(`set -euo pipefail\n${FUNCTIONS}\n${block.code}`, cwd);
}

/** Runs an output marker's command in `cwd` (every command runs; the status is the last one's). */
export function runOutputCommand(command, cwd) {
  return bash(`${FUNCTIONS}\n${command}`, cwd);
}

/** What a block shows and what its command printed, compared without the trailing newlines. */
function shown(text) {
  return text.replace(/\s+$/, '');
}

/**
 * Runs a page in a new folder under `scratch`. Returns the examples that failed, the output
 * blocks with what their commands printed (`actual`, `matches` when equal but for MASKS), the
 * text or JSON blocks without a marker, and for the fitted files' page the comparison with the
 * shipped files (`fitted`).
 */
export function runPage(page, scratch) {
  const markdown = readFileSync(join(ROOT, page), 'utf8');
  const cwd = projectFolder(scratch, page.replace(/\W/g, '-'));
  if (page === FITTED_PAGE) rmSync(join(cwd, FITTED_DIR), { recursive: true, force: true });
  const failures = [];
  const outputs = [];
  const unmarked = [];
  let last = null;
  for (const block of blocksOf(markdown)) {
    if (block.kind === 'sh' || block.kind === 'js' || block.kind === 'config') {
      const result = runExample(block, cwd);
      last = { block, result };
      if (result.status !== 0) {
        failures.push(`${page}:${block.line}\n${block.code}\n${(result.stdout ?? '').slice(-2000)}\n${(result.stderr ?? '').slice(-4000)}`);
      }
    } else if (block.kind === 'unmarked') {
      unmarked.push(`${page}:${block.line}`);
    } else if (block.kind === 'output') {
      let actual;
      let problem = null;
      if (block.ofExample) {
        if (last === null) problem = 'no example above it';
        actual = last?.result.stdout ?? '';
      } else {
        const result = runOutputCommand(block.command, cwd);
        actual = result.stdout ?? '';
        if (result.status !== block.exit) {
          problem = `${block.command}: exit status ${result.status} (expected ${block.exit})\n${(result.stderr ?? '').slice(-2000)}`;
        }
      }
      const matches = problem === null && masked(shown(actual)) === masked(shown(block.code));
      outputs.push({ page, block, actual: shown(actual), problem, matches });
    }
  }
  const fitted = page === FITTED_PAGE ? compareFitted(cwd) : null;
  return { page, cwd, failures, outputs, unmarked, fitted };
}

function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

/** The shipped fitted files against what the page's commands wrote in `cwd`: the files that differ, are missing or are extra. */
export function compareFitted(cwd) {
  const shipped = filesUnder(join(ROOT, FITTED_DIR));
  const written = filesUnder(join(cwd, FITTED_DIR));
  const differ = written.filter(
    (file) =>
      shipped.includes(file) &&
      masked(readFileSync(join(cwd, FITTED_DIR, file), 'utf8')) !== masked(readFileSync(join(ROOT, FITTED_DIR, file), 'utf8')),
  );
  return {
    written,
    differ,
    notWritten: shipped.filter((file) => !written.includes(file)),
    notShipped: written.filter((file) => !shipped.includes(file)),
  };
}

/** The page with each output block that differs replaced by what its command printed. */
export function rewritten(markdown, outputs) {
  let out = markdown;
  for (const output of [...outputs].sort((a, b) => b.block.start - a.block.start)) {
    if (output.matches || output.problem !== null) continue;
    out = `${out.slice(0, output.block.start)}${output.actual}\n${out.slice(output.block.end)}`;
  }
  return out;
}

/** Copies what the fitted files' commands wrote over the shipped ones (stale ones removed). */
function refreshFitted(cwd) {
  rmSync(join(ROOT, FITTED_DIR), { recursive: true, force: true });
  cpSync(join(cwd, FITTED_DIR), join(ROOT, FITTED_DIR), { recursive: true });
}

function main(args) {
  if (!existsSync(CLI)) {
    process.stderr.write(`${CLI} is missing: run \`npm run build\` first\n`);
    return 1;
  }
  const fittedOnly = args.includes('--fitted');
  const pages = fittedOnly ? [FITTED_PAGE] : args.filter((arg) => !arg.startsWith('--'));
  const scratch = mkdtempSync(join(tmpdir(), 'servesim-docs-'));
  let status = 0;
  try {
    for (const page of pages.length > 0 ? pages : PAGES) {
      const started = Date.now();
      const result = runPage(page, scratch);
      for (const failure of result.failures) process.stderr.write(`example failed: ${failure}\n`);
      for (const where of result.unmarked)
        process.stderr.write(`${where}: a text or json block with no marker (see the top of this script)\n`);
      for (const output of result.outputs.filter((o) => o.problem !== null)) {
        process.stderr.write(`${page}:${output.block.line}: ${output.problem}\n`);
      }
      if (result.failures.length > 0 || result.unmarked.length > 0 || result.outputs.some((o) => o.problem !== null)) status = 1;
      const changed = result.outputs.filter((o) => !o.matches && o.problem === null);
      if (changed.length > 0 && !fittedOnly) {
        const markdown = readFileSync(join(ROOT, page), 'utf8');
        writeFileSync(join(ROOT, page), rewritten(markdown, result.outputs));
      }
      if (result.fitted !== null && result.failures.length === 0) refreshFitted(result.cwd);
      const fittedNote = result.fitted === null ? '' : `; ${FITTED_DIR}: ${result.fitted.written.length} files written`;
      process.stdout.write(
        `${page}: ${result.outputs.length} outputs, ${changed.length} rewritten${fittedNote} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
      );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return status;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
