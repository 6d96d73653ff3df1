/**
 * Every example of the README and of every docs page runs as written, in order, each page in a
 * folder of its own holding the files a user has (data/, sweeps/, calibration/, scripts/) and
 * servesim installed in node_modules:
 * - ```sh blocks run in bash, `npx servesim` being the built CLI;
 * - ```js blocks run as ES modules, importing 'servesim' by name;
 * - ```yaml blocks that are run configs (engine, traffic, report) are replayed;
 * - ```yaml blocks that are CI workflows run their `run:` steps that call servesim.
 * Not run: ```text (synopses and output), ```bash (commands for other systems: a Slurm job, a
 * cluster's shared volume), other YAML (a Kubernetes manifest), and the npm commands that install, build, test or
 * benchmark this project (`npm ci`, `npm run build`, `npm test`, `npm run bench...`: the test
 * suite itself and the benches are run on their own).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const scratch = mkdtempSync(join(tmpdir(), 'servesim-docs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Example {
  kind: 'sh' | 'js' | 'config';
  code: string;
  line: number;
}

const RUN_CONFIG_KEYS = new Set(['engine', 'traffic', 'report']);

function isRunConfig(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).every((key) => RUN_CONFIG_KEYS.has(key))
  );
}

/** The examples of a page that run, in order. */
function examplesOf(markdown: string): Example[] {
  const examples: Example[] = [];
  for (const match of markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
    const line = markdown.slice(0, match.index).split('\n').length;
    const [, lang, code] = match;
    if (lang === 'sh') examples.push({ kind: 'sh', code, line });
    else if (lang === 'js') examples.push({ kind: 'js', code, line });
    else if (lang === 'yaml' && isRunConfig(parse(code))) examples.push({ kind: 'config', code, line });
    else if (lang === 'yaml' && /\bnpx servesim\b/.test(code)) {
      const steps = parse(code) as Array<{ run?: string }>;
      const runs = (Array.isArray(steps) ? steps : []).map((step) => step.run).filter((run): run is string => typeof run === 'string');
      examples.push({ kind: 'sh', code: runs.filter((run) => /\bnpx servesim\b/.test(run)).join('\n'), line });
    }
  }
  return examples;
}

/** A project folder as a user has it: the shipped files, servesim installed. */
function projectFolder(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  for (const folder of ['data', 'sweeps', 'calibration', 'scripts']) cpSync(join(ROOT, folder), join(dir, folder), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'servesim'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{"type": "module", "private": true}\n');
  return dir;
}

const PRELUDE = `
set -euo pipefail
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

function run(example: Example, cwd: string) {
  if (example.kind === 'config') {
    const file = join(cwd, `example-${example.line}.yaml`);
    writeFileSync(file, example.code);
    return spawnSync(process.execPath, [CLI, 'replay', file, '--json'], { cwd, encoding: 'utf8', timeout: 600_000 });
  }
  if (example.kind === 'js') {
    const file = join(cwd, `example-${example.line}.mjs`);
    writeFileSync(file, example.code);
    return spawnSync(process.execPath, [file], { cwd, encoding: 'utf8', timeout: 600_000 });
  }
  return spawnSync('bash', ['-c', `${PRELUDE}\n${example.code}`], {
    cwd,
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, SERVESIM_CLI: CLI },
  });
}

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((page) => page.endsWith('.md'));

describe('documentation examples', () => {
  it('finds the examples of the pages', () => {
    const counts = Object.fromEntries(PAGES.map((page) => [page, examplesOf(readFileSync(join(ROOT, page), 'utf8')).length]));
    for (const page of ['README.md', 'docs/sweeps.md', 'docs/scoring.md', 'docs/calibration.md', 'docs/api.md', 'docs/config.md']) {
      expect(counts[page], page).toBeGreaterThan(0);
    }
  });

  it.each(PAGES)(
    '%s: every example runs as written',
    (page) => {
      const examples = examplesOf(readFileSync(join(ROOT, page), 'utf8'));
      const cwd = projectFolder(page.replace(/\W/g, '-'));
      for (const example of examples) {
        const result = run(example, cwd);
        expect(
          result.status,
          `${page}:${example.line}\n${example.code}\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-4000)}`,
        ).toBe(0);
      }
    },
    900_000,
  );
});
