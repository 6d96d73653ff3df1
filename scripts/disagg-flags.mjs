#!/usr/bin/env node
// Writes data/silicon/disagg-flags.csv (to stdout): the prefill and decode engines' flags of the
// rows of data/silicon/disagg-workers.csv whose InferenceX config entry names a launch recipe
// (`CONFIG_FILE=recipes/...`), read from the recipe as it stood when the row was measured.
//
//   node scripts/disagg-flags.mjs INFERENCEX_GIT_DIR BRANCH_GIT_DIR MAIN_GIT_DIR [WORKERS.csv]
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
import { parse } from 'yaml';
import { entriesOfMasterConfig, factsKey, loadDisaggWorkers } from '../dist/src/calibrate/disagg-workers.js';
import { FLAG_COLUMNS, flagCells, recipeFlags } from '../dist/src/calibrate/disagg-flags.js';

const BRANCH_HEAD = 'b92b1f60608bf35331591e4ccac7882b7f3748aa';
const BRANCH_REPOSITORY = 'csahithi/srt-slurm';
const MERGED = '5063eb432640574bd93410ae2697591a7d15f57c';
const DAY_MS = 86_400_000;

const [inferencex, branchDir, mainDir, workersFile = 'data/silicon/disagg-workers.csv'] = process.argv.slice(2);
if (mainDir === undefined) {
  process.stderr.write('usage: node scripts/disagg-flags.mjs INFERENCEX_GIT_DIR BRANCH_GIT_DIR MAIN_GIT_DIR [WORKERS.csv]\n');
  process.exit(2);
}
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

const tally = { written: 0, noRecipe: 0, severalRecipes: 0, afterMerge: 0, absent: 0, otherShape: 0, changed: 0 };
const out = new Map();
for (const row of loadDisaggWorkers(workersFile).values()) {
  const c = row.cells;
  const f = row.facts;
  // The entry the row was matched to, in the version recorded for it: its recipe.
  const recipes = new Set(
    entriesAt(c.commit, c.path)
      .filter(
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
      )
      .flatMap((e) => (e.settings ?? []).filter((s) => s.startsWith('CONFIG_FILE=')).map((s) => s.slice('CONFIG_FILE='.length))),
  );
  if (recipes.size === 0) {
    tally.noRecipe += 1;
    continue;
  }
  if (recipes.size > 1) {
    tally.severalRecipes += 1;
    continue;
  }
  const [path] = recipes;
  const at = Date.parse(f.measured);
  const from = at - DAY_MS;
  const to = /T00:00:00(\.000)?Z$/.test(f.measured) ? at + DAY_MS : at;
  if (to > merged.at) {
    tally.afterMerge += 1;
    continue;
  }
  const inForce = chain.findLastIndex((s) => s.at <= from);
  const states = chain.filter((s, i) => i === inForce || (s.at > from && s.at <= to));
  if (to > headAt) states.push(merged);
  // The run used a state holding the recipe: states of the window without it are passed over, but
  // the last one (in force at the measurement, or the merge) must hold it.
  const all = states.map((st) => flagsOf(st, path));
  if (all[all.length - 1] === undefined) {
    tally.absent += 1;
    continue;
  }
  const found = all.filter((x) => x !== undefined);
  if (found.some((x) => x === null)) {
    tally.otherShape += 1;
    continue;
  }
  if (new Set(found.map((x) => JSON.stringify(x))).size > 1) {
    tally.changed += 1;
    continue;
  }
  // Cite the state in force at the measurement (the last of the branch's known history before it).
  const cited = chain.findLast((s) => s.at <= Math.min(to, headAt)) ?? states[0];
  const cells = {
    ...Object.fromEntries(FLAG_COLUMNS.slice(0, 11).map((k) => [k, c[k]])),
    ...flagCells(found[0].prefill, 'prefill_'),
    ...flagCells(found[0].decode, 'decode_'),
    recipe_repository: cited.repository,
    recipe_path: path,
    recipe_commit: cited.commit,
    recipe_date: cited.date,
  };
  tally.written += 1;
  out.set(factsKey(f), FLAG_COLUMNS.map((k) => String(cells[k])).join(','));
}
const keys = [...out.keys()].sort();
process.stdout.write(`${FLAG_COLUMNS.join(',')}\n${keys.map((k) => out.get(k)).join('\n')}\n`);
process.stderr.write(
  `${tally.written} rows written; not written: ${tally.noRecipe} whose entry names no recipe, ${tally.severalRecipes} several, ` +
    `${tally.afterMerge} measured after the branch's last known state (${MERGED.slice(0, 8)}), ${tally.absent} whose recipe is absent ` +
    `from a state of the branch, ${tally.otherShape} of a recipe shape not read, ${tally.changed} whose recipe's flags changed around the measurement\n`,
);
