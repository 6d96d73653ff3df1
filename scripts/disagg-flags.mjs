#!/usr/bin/env node
// Writes data/silicon/disagg-flags.csv (to stdout): the prefill and decode engines' flags of the
// rows of data/silicon/disagg-workers.csv whose InferenceX config entry names a launch recipe
// (`CONFIG_FILE=recipes/...`), read from the recipe as it stood when the row was measured, or
// (where that state is not known) the decode batch limit a TensorRT-LLM recipe's name states, or the
// sizes an entry without a recipe gives its script; with --db-flags, the same for the sample's
// database-dump rows (data/silicon/disagg-db-flags.csv), each matched to a config entry by its pools.
// The rules: data/silicon/README.md.
//
//   node scripts/disagg-flags.mjs INFERENCEX_GIT_DIR BRANCH_GIT_DIR MAIN_GIT_DIR [WORKERS.csv [SAMPLE.csv]] [--db-flags OUT.csv]
//
// INFERENCEX_GIT_DIR: a git directory of github.com/SemiAnalysisAI/InferenceX with its history.
// The runners clone github.com/ishandhanani/srt-slurm (now NVIDIA/srt-slurm) at its branch
// sa-submission-q1-2026 and submit the recipe there. That branch is gone; what is known of it:
// BRANCH_GIT_DIR, a git directory of github.com/csahithi/srt-slurm, whose ref
// sahithi/test-multiple-runners holds the branch's history up to BRANCH_HEAD (2026-02-12), and
// MAIN_GIT_DIR, one of github.com/NVIDIA/srt-slurm, whose MERGED commit is the branch squashed
// into main (2026-03-03). Rule (data/silicon/README.md): the states of the branch in force from
// one day before the row's measurement to the measurement (a date without a time: to the end of
// that day) that hold the recipe give the same flags for it, and the one in force at the
// measurement holds it; when that interval reaches past BRANCH_HEAD, the branch at MERGED is the
// one in force; past MERGED, the branch is not known and the row takes no flags.
// A summary goes to stderr.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import {
  dbRowFactsOf,
  entriesOfMasterConfig,
  factsKey,
  loadDisaggWorkers,
  matchDbEntry,
  WINDOW_DAYS,
} from '../dist/src/calibrate/disagg-workers.js';
import {
  configSettingsFlags,
  DB_FLAG_COLUMNS,
  FLAG_COLUMNS,
  flagCells,
  recipeFlags,
  recipeNameFlags,
  runsOnQ2Branch,
} from '../dist/src/calibrate/disagg-flags.js';
import { readTable } from '../dist/src/calibrate/read-table.js';
import { sourceFields } from '../dist/src/calibrate/silicon-deployments.js';

const BRANCH_HEAD = 'b92b1f60608bf35331591e4ccac7882b7f3748aa';
const BRANCH_REPOSITORY = 'csahithi/srt-slurm';
const MERGED = '5063eb432640574bd93410ae2697591a7d15f57c';
const DAY_MS = 86_400_000;

const args = process.argv.slice(2);
const dbAt = args.indexOf('--db-flags');
const dbOut = dbAt >= 0 ? args[dbAt + 1] : undefined;
if (dbAt >= 0) args.splice(dbAt, 2);
const [
  inferencex,
  branchDir,
  mainDir,
  workersFile = 'data/silicon/disagg-workers.csv',
  sampleFile = 'data/silicon/aic-silicon-sample.csv',
] = args;
if (mainDir === undefined) {
  process.stderr.write(
    'usage: node scripts/disagg-flags.mjs INFERENCEX_GIT_DIR BRANCH_GIT_DIR MAIN_GIT_DIR [WORKERS.csv [SAMPLE.csv]] [--db-flags OUT.csv]\n',
  );
  process.exit(2);
}
const MASTER = '.github/configs/nvidia-master.yaml';
const git = (dir, ...args) => execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
const tryShow = (dir, commit, path) => {
  try {
    return execFileSync('git', ['--git-dir', dir, 'show', `${commit}:${path}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
};

// The known states of the branch, oldest first: its history up to BRANCH_HEAD (complete), then MERGED.
const chain = git(branchDir, 'log', '--first-parent', '--format=%H %cI', BRANCH_HEAD)
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => line.split(' '))
  .map(([commit, date]) => ({ dir: branchDir, repository: BRANCH_REPOSITORY, commit, date, at: Date.parse(date) }))
  .sort((a, b) => a.at - b.at);
const headAt = chain[chain.length - 1].at;
const mergedDate = git(mainDir, 'show', '-s', '--format=%cI', MERGED).trim();
const merged = { dir: mainDir, repository: 'NVIDIA/srt-slurm', commit: MERGED, date: mergedDate, at: Date.parse(mergedDate) };

// NVIDIA/srt-slurm's sa-submission-q2-2026 branches off at MERGED; its history (first parent) up to
// Q2_HEAD is known. Which runs cloned it: `runsOnQ2Branch` (src/calibrate/disagg-flags.ts).
const Q2_HEAD = 'deb1dfd9934398664f92d194169c183e009da83b';
const q2Chain = git(mainDir, 'log', '--first-parent', '--format=%H %cI', `${MERGED}..${Q2_HEAD}`)
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => line.split(' '))
  .map(([commit, date]) => ({ dir: mainDir, repository: 'NVIDIA/srt-slurm', commit, date, at: Date.parse(date) }))
  .concat([merged])
  .sort((a, b) => a.at - b.at);

const flagsAt = new Map();
const flagsOf = (state, path) => {
  const key = `${state.commit}:${path}`;
  if (!flagsAt.has(key)) {
    // undefined: no such file at that state; null: a recipe of a shape not read.
    const text = tryShow(state.dir, state.commit, path);
    flagsAt.set(key, text === undefined ? undefined : recipeFlags(parse(text)));
  }
  return flagsAt.get(key);
};

const docs = new Map();
const entriesAt = (commit, path) => {
  if (!docs.has(commit)) docs.set(commit, entriesOfMasterConfig(parse(git(inferencex, 'show', `${commit}:${path}`)), `${commit}:${path}`));
  return docs.get(commit);
};

const tally = { written: 0, noRecipe: 0, severalRecipes: 0, afterMerge: 0, absent: 0, otherShape: 0, changed: 0, byName: 0, bySettings: 0 };

/**
 * The flags of a row (its backend and `measured=` time) that ran one of the config entries
 * `matched` (of the master config at `config` {commit, date}): { flags, readFrom, recipe }, or a
 * tally key saying why none.
 */
function flagsOfEntries(row, measured, matched, config) {
  const { backend } = row;
  const fromConfig = { repository: 'SemiAnalysisAI/InferenceX', commit: config.commit, date: config.date };
  const recipes = new Set(
    matched.flatMap((e) => (e.settings ?? []).filter((s) => s.startsWith('CONFIG_FILE=')).map((s) => s.slice('CONFIG_FILE='.length))),
  );
  if (recipes.size === 0) {
    // An entry without a recipe whose script takes its sizes from the entry's settings.
    const settings = new Set(matched.map((e) => JSON.stringify(backend === 'trtllm' ? configSettingsFlags(e.settings ?? []) : null)));
    const [only] = settings;
    if (settings.size === 1 && only !== 'null') {
      return {
        flags: JSON.parse(only),
        readFrom: 'config settings',
        recipe: { ...fromConfig, path: '.github/configs/nvidia-master.yaml' },
        tally: 'bySettings',
      };
    }
    return 'noRecipe';
  }
  if (recipes.size > 1) return 'severalRecipes';
  const [path] = recipes;
  // Where the recipe's state at the measurement is not known, a TensorRT-LLM recipe's name still
  // states the decode batch limit; the name is the config entry's, in the version the row was matched in.
  const byName = (reason) => {
    const flags = backend === 'trtllm' ? recipeNameFlags(path) : null;
    return flags === null ? reason : { flags, readFrom: 'recipe name', recipe: { ...fromConfig, path }, tally: 'byName' };
  };
  const at = Date.parse(measured);
  const from = at - DAY_MS;
  const to = /T00:00:00(\.000)?Z$/.test(measured) ? at + DAY_MS : at;
  if (runsOnQ2Branch(row, to)) {
    // The q2 branch's states in force over the same window; cite the one in force at the measurement.
    const states = statesIn(q2Chain, from, to);
    return fromStates(states, states[states.length - 1], path, byName);
  }
  if (to > merged.at) return byName('afterMerge');
  const states = statesIn(chain, from, to);
  if (to > headAt) states.push(merged);
  // Cite the state in force at the measurement (the last of the branch's known history before it).
  return fromStates(states, chain.findLast((s) => s.at <= Math.min(to, headAt)) ?? states[0], path, byName);
}

/** The states of a branch's history (oldest first) in force from `from` to `to` (ms): the one in force at `from`, then those after. */
function statesIn(history, from, to) {
  const inForce = history.findLastIndex((s) => s.at <= from);
  return history.filter((s, i) => i === inForce || (s.at > from && s.at <= to));
}

/**
 * The recipe's flags over `states`: the run used a state holding the recipe, so states without it
 * are passed over, but the last one (in force at the measurement) must hold it, and those that
 * hold it must agree; else `byName` of the reason.
 */
function fromStates(states, cited, path, byName) {
  const all = states.map((st) => flagsOf(st, path));
  if (all.length === 0 || all[all.length - 1] === undefined) return byName('absent');
  const found = all.filter((x) => x !== undefined);
  if (found.some((x) => x === null)) return byName('otherShape');
  if (new Set(found.map((x) => JSON.stringify(x))).size > 1) return byName('changed');
  return {
    flags: found[0],
    readFrom: 'recipe',
    recipe: { repository: cited.repository, path, commit: cited.commit, date: cited.date },
    tally: 'written',
  };
}

const sourceCells = (r) => ({
  read_from: r.readFrom,
  recipe_repository: r.recipe.repository,
  recipe_path: r.recipe.path,
  recipe_commit: r.recipe.commit,
  recipe_date: r.recipe.date,
});

// The export rows of the workers file, each with the entry it was matched to, in the version recorded for it.
const out = new Map();
for (const row of loadDisaggWorkers(workersFile).values()) {
  const c = row.cells;
  const f = row.facts;
  const matched = entriesAt(c.commit, c.path).filter(
    (e) =>
      e.config === c.config &&
      e.isl === f.isl &&
      e.osl === f.osl &&
      e.spec === c.spec_decoding &&
      e.concurrency.includes(f.concurrency) &&
      e.prefill.workers === row.prefillWorkers &&
      e.decode.workers === row.decodeWorkers &&
      e.prefill.tp === Number(c.entry_prefill_tp) &&
      e.prefill.ep === Number(c.entry_prefill_ep) &&
      e.decode.tp === Number(c.entry_decode_tp) &&
      e.decode.ep === Number(c.entry_decode_ep),
  );
  const r = flagsOfEntries({ backend: f.backend, gpu: f.system.split('_')[0], model: f.model }, f.measured, matched, {
    commit: c.commit,
    date: c.commit_date,
  });
  if (typeof r === 'string') {
    tally[r] += 1;
    continue;
  }
  tally[r.tally] += 1;
  const cells = {
    ...Object.fromEntries(FLAG_COLUMNS.slice(0, 11).map((k) => [k, c[k]])),
    ...flagCells(r.flags.prefill, 'prefill_'),
    ...flagCells(r.flags.decode, 'decode_'),
    ...sourceCells(r),
  };
  out.set(factsKey(f), FLAG_COLUMNS.map((k) => String(cells[k])).join(','));
}
const keys = [...out.keys()].sort();
process.stdout.write(`${FLAG_COLUMNS.join(',')}\n${keys.map((k) => out.get(k)).join('\n')}\n`);
process.stderr.write(
  `export rows: ${tally.written} from their recipe, ${tally.byName} from a TensorRT-LLM recipe's name, ${tally.bySettings} from their entry's settings; not written: ${tally.noRecipe} whose entry names no recipe, ${tally.severalRecipes} several, ` +
    `${tally.afterMerge} measured after the branch's last known state (${MERGED.slice(0, 8)}), ${tally.absent} whose recipe is absent ` +
    `from a state of the branch, ${tally.otherShape} of a recipe shape not read, ${tally.changed} whose recipe's flags changed around the measurement\n`,
);

// The database-dump rows, each matched to a config entry by its pools (`matchDbEntry`) in the
// versions of the master config around its measurement.
if (dbOut !== undefined) {
  for (const k of Object.keys(tally)) tally[k] = 0;
  const matches = { one: 0, none: 0, several: 0 };
  const rows = readTable(sampleFile)
    .rows.map(({ cells }) => dbRowFactsOf(cells, sourceFields(cells.silicon_data_source ?? '')))
    .filter((f) => f !== null);
  // The versions up to the last one that can count for a row (as scripts/disagg-workers.mjs reads them).
  const last = Math.max(...rows.map((f) => Date.parse(f.measured))) + WINDOW_DAYS * DAY_MS;
  const versions = git(inferencex, 'log', '--first-parent', '--format=%H %cI', '--', MASTER)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(' '))
    .filter(([, date]) => Date.parse(date) <= last)
    .map(([commit, date]) => ({ commit, date, entries: entriesAt(commit, MASTER) }));
  const lines = [];
  for (const f of rows) {
    const m = matchDbEntry(f, versions);
    matches[m.kind] += 1;
    if (m.kind !== 'one') continue;
    const r = flagsOfEntries({ backend: f.backend, gpu: f.system.split('_')[0], model: f.model }, f.measured, [m.entry], m.version);
    if (typeof r === 'string') {
      tally[r] += 1;
      continue;
    }
    tally[r.tally] += 1;
    const row = {
      id: f.id,
      config: m.entry.config,
      config_commit: m.version.commit,
      ...flagCells(r.flags.prefill, 'prefill_'),
      ...flagCells(r.flags.decode, 'decode_'),
      ...sourceCells(r),
    };
    lines.push([f.id, DB_FLAG_COLUMNS.map((k) => String(row[k])).join(',')]);
  }
  lines.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  writeFileSync(dbOut, `${DB_FLAG_COLUMNS.join(',')}\n${lines.map(([, l]) => l).join('\n')}\n`);
  process.stderr.write(
    `database-dump rows: ${matches.one} match one entry (${matches.none} none, ${matches.several} several); ` +
      `${tally.written} from their recipe, ${tally.byName} from a TensorRT-LLM recipe's name, ${tally.bySettings} from their entry's settings; ` +
      `not written: ${tally.noRecipe} whose entry names no recipe, ${tally.severalRecipes} several, ${tally.afterMerge} measured after ${MERGED.slice(0, 8)}, ` +
      `${tally.absent} absent, ${tally.otherShape} of another shape, ${tally.changed} changed\n`,
  );
}
