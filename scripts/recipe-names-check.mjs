#!/usr/bin/env node
// Checks the rule by which data/silicon/disagg-flags.csv reads a TensorRT-LLM recipe's decode batch
// limit from its file name (`recipeNameFlags`): for every recipe so named in each given state of
// srt-slurm, whether the decode engine's `max_batch_size` its contents give (`recipeFlags`) is the
// name's. Prints the counts per state and the recipes that differ (npm run build first).
//
//   node scripts/recipe-names-check.mjs GIT_DIR:REF [GIT_DIR:REF ...]
//
// e.g. /path/to/NVIDIA-srt-slurm/.git:sa-submission-q2-2026 /path/to/NVIDIA-srt-slurm/.git:5063eb43
// /path/to/csahithi-srt-slurm/.git:b92b1f60 (the states data/silicon/README.md cites).
import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import { recipeFlags, recipeNameFlags } from '../dist/src/calibrate/disagg-flags.js';

const states = process.argv.slice(2).map((arg) => {
  const at = arg.lastIndexOf(':');
  return { dir: arg.slice(0, at), ref: arg.slice(at + 1) };
});
if (states.length === 0 || states.some((s) => s.dir === '' || s.ref === '')) {
  process.stderr.write('usage: node scripts/recipe-names-check.mjs GIT_DIR:REF [GIT_DIR:REF ...]\n');
  process.exit(2);
}
const git = (dir, ...args) => execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
for (const { dir, ref } of states) {
  const counts = { agree: 0, differ: 0, 'not read (other shape)': 0 };
  const files = git(dir, 'ls-tree', '-r', '--name-only', ref)
    .split('\n')
    .filter((f) => f.startsWith('recipes/') && /\.ya?ml$/.test(f));
  for (const file of files) {
    const byName = recipeNameFlags(file);
    if (byName === null) continue;
    const flags = recipeFlags(parse(git(dir, 'show', `${ref}:${file}`)));
    if (flags === null) counts['not read (other shape)'] += 1;
    else if (flags.decode.maxSequences === byName.decode.maxSequences) counts.agree += 1;
    else {
      counts.differ += 1;
      process.stdout.write(`  ${ref} ${file}: name ${byName.decode.maxSequences}, recipe ${flags.decode.maxSequences}\n`);
    }
  }
  process.stdout.write(`${ref}: ${JSON.stringify(counts)}\n`);
}
