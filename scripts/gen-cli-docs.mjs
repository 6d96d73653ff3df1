#!/usr/bin/env node
// Writes docs/cli.md from the built CLI's own --help texts (run `npm run build` first):
//   node scripts/gen-cli-docs.mjs
// (after adding a command to COMMANDS; `npm run docs:outputs` refreshes the texts themselves).
// test/cli-docs.e2e.test.ts fails when docs/cli.md and the CLI disagree.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'src', 'cli', 'main.js');

export const COMMANDS = [
  [],
  ['replay'],
  ['sweep'],
  ['sweep', 'merge'],
  ['score'],
  ['calibrate'],
  ['calibrate', 'detokenization'],
  ['calibrate', 'response-overhead'],
  ['calibrate', 'pass-time'],
  ['calibrate', 'engine'],
  ['calibrate', 'catalog'],
  ['quickstart'],
  ['catalog'],
  ['schema'],
  ['plan'],
  ['serve'],
];

export function helpText(args) {
  return execFileSync(process.execPath, [cli, ...args, '--help'], { encoding: 'utf8', env: { ...process.env, COLUMNS: '110' } }).trimEnd();
}

const INTRO = `# Command-line reference

\`npx servesim <command> [options]\`. Every command prints its own help with \`--help\`; this page
is generated from those texts (\`node scripts/gen-cli-docs.mjs\`), so it says exactly what the
installed version accepts.

**Exit codes.** 0: done. 2: bad input, found before anything is written: a config error names
the file and the dotted field (\`run.yaml: engine.detokenization.workers: must be a positive
integer, got 0\`), a bad data line names the file and the line (\`conv.jsonl:17: input_length:
...\`), a bad option names the option (\`--holdout 1.5: ...\`), a fit that cannot be trusted says
why and how to go on (\`--force\`). 1: the run could not finish (a sweep with failed points, a
plan with failed replays, a score above \`--max-mape\`, an output that could not be written:
\`cannot write out/summary.json: no space left on the device (ENOSPC); the previous version is
left in place\`). 130: a sweep or a plan stopped with Ctrl-C (finished points and replays are
kept; the message says how to resume). Errors are one line, plus one on what to do where that
helps; no stack trace.

**Inputs** are read from regular files only (a symlink to one is fine): a folder, a FIFO, a
device such as \`/dev/zero\` or a socket in the place of a config, trace, catalog entry or measured
file is refused before it is read, naming the path (exit status 2). Each kind of file has a size
limit, applied to the bytes read whatever size the file claims, and a trace line has a length
limit ([config.md](config.md#limits)).

**Outputs** are written whole or not at all: each file goes to a temporary file beside it
(\`<file>.<number>\`) and is renamed over the old one once complete, so a full disk or a kill
leaves the previous complete file. The files of one result (a replay's \`summary.json\`,
\`requests.jsonl\` and AIPerf files; a fit's files; a score or plan report) are renamed together
once every one is complete: after a failed write none of the new ones is in place, and a folder
the command created for them is removed again. A sweep or plan that cannot write its \`.lock\`
leaves none. A \`--out\` that is a file is refused before the run. When whatever reads a replay's
printed table or JSON goes away (\`servesim replay run.yaml | head -3\`), the rest of the text is
dropped without an error; the replay's files are written all the same.

**Overrides.** \`--set dotted.key=value\` (replay, calibrate engine) sets any run-config key; the
value is read as YAML (\`512\`, \`true\`, \`{type: fixed, blocks: 1000}\`, \`max\`) and validated like the
file, and an error names the override. A tag (\`!!js/function\`, \`!mytag\`) is refused, in
\`--set\` as in a file.

| command | what it does | more |
|---|---|---|
| \`replay\` | one run config, an AIPerf-style table or the summary JSON | [replay-model.md](replay-model.md), [config.md](config.md) |
| \`sweep\`, \`sweep merge\` | a grid of configs on a worker-thread pool; merge shards | [sweeps.md](sweeps.md) |
| \`plan\` | the cheapest deployment that meets latency targets, searched over GPUs and parallelism | [planning.md](planning.md) |
| \`score\` | MAPE of simulated points against measured ones | [scoring.md](scoring.md) |
| \`calibrate <target>\` | fit constants from measurements | [calibration.md](calibration.md) |
| \`calibrate catalog\` | fit the catalog's efficiency factors on measured deployments | [hardware-and-models.md](hardware-and-models.md) |
| \`quickstart\` | the whole workflow on the shipped data (\`npm start\`) | [calibration.md](calibration.md) |
| \`catalog\` | list the catalog's models and GPUs | [hardware-and-models.md](hardware-and-models.md) |
| \`schema\` | the JSON Schema of run configs | [config.md](config.md) |
`;

function main() {
  // Each help text is marked as the output of its command, so that the docs check (and npm run
  // docs:outputs) keep it current like every other output the docs show.
  const sections = COMMANDS.map((args) => {
    const command = `servesim${args.length ? ' ' + args.join(' ') : ''}`;
    return `## \`${command}\`\n\n<!-- output: npx ${command} --help -->\n\`\`\`text\n${helpText(args)}\n\`\`\`\n`;
  });
  writeFileSync(join(root, 'docs', 'cli.md'), `${INTRO}\n${sections.join('\n')}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
