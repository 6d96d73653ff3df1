#!/usr/bin/env node
// Writes data/silicon/disagg-workers.csv: the worker counts of the silicon sample's disaggregated
// InferenceX export rows, read from the versions of InferenceX's benchmark master config by the
// rule of src/calibrate/disagg-workers.ts (npm run build first).
//
//   node scripts/disagg-workers.mjs GIT_DIR [SAMPLE.csv] > data/silicon/disagg-workers.csv
//
// GIT_DIR is a git directory of github.com/SemiAnalysisAI/InferenceX with its history; the
// versions read are the main branch's (first-parent) commits of .github/configs/nvidia-master.yaml.
// A summary (rows looked at, with one, no or several matching entries) goes to stderr.
import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import {
  entriesOfMasterConfig,
  factsKey,
  matchWorkers,
  rowFactsOf,
  WINDOW_DAYS,
  WORKER_COLUMNS,
} from '../dist/src/calibrate/disagg-workers.js';
import { sourceFields } from '../dist/src/calibrate/silicon-deployments.js';
import { readTable } from '../dist/src/calibrate/read-table.js';

const REPOSITORY = 'SemiAnalysisAI/InferenceX';
const PATH = '.github/configs/nvidia-master.yaml';
const [gitDir, sampleFile = 'data/silicon/aic-silicon-sample.csv'] = process.argv.slice(2);
if (gitDir === undefined) {
  process.stderr.write('usage: node scripts/disagg-workers.mjs GIT_DIR [SAMPLE.csv]\n');
  process.exit(2);
}
const git = (...args) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });

const rows = [];
// The measured values at each key: a key holding two different measurements is two runs the
// row's facts cannot tell apart, and takes no counts whatever the config says.
const values = new Map();
for (const row of readTable(sampleFile).rows) {
  const facts = rowFactsOf(row.cells, sourceFields(row.cells.silicon_data_source ?? ''));
  if (facts === null) continue;
  rows.push(facts);
  const key = factsKey(facts);
  values.set(key, new Set([...(values.get(key) ?? []), `${row.cells.silicon_ttft_ms}/${row.cells.silicon_tpot_ms}`]));
}
const last = Math.max(...rows.map((r) => Date.parse(r.measured))) + WINDOW_DAYS * 86_400_000;
const versions = git('log', '--first-parent', '--format=%H %cI', '--', PATH)
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => line.split(' '))
  .filter(([, date]) => Date.parse(date) <= last)
  .map(([commit, date]) => ({
    commit,
    date,
    entries: entriesOfMasterConfig(parse(git('show', `${commit}:${PATH}`)), `${commit}:${PATH}`),
  }));

const tally = { one: 0, none: 0, several: 0, aggregated: 0, twoRuns: 0 };
const out = new Map();
for (const f of rows) {
  const m = matchWorkers(f, versions);
  tally[m.kind] += 1;
  if (m.kind !== 'one') continue;
  if (values.get(factsKey(f)).size > 1) {
    tally.one -= 1;
    tally.twoRuns += 1;
    continue;
  }
  // An aggregated run listed in a disaggregated config: no worker counts to give.
  if (m.entry.prefill.workers === 0 || m.entry.decode.workers === 0) {
    tally.one -= 1;
    tally.aggregated += 1;
    continue;
  }
  const e = m.entry;
  const cells = {
    model: f.model,
    system: f.system,
    backend: f.backend,
    precision: f.precision,
    isl: f.isl,
    osl: f.osl,
    prefill_tp: f.prefillTp,
    prefill_ep: f.prefillEp,
    decode_tp: f.decodeTp,
    concurrency: f.concurrency,
    measured: f.measured,
    prefill_workers: e.prefill.workers,
    decode_workers: e.decode.workers,
    config: e.config,
    spec_decoding: e.spec,
    tp_reading: m.reading,
    entry_prefill_tp: e.prefill.tp,
    entry_prefill_ep: e.prefill.ep,
    entry_prefill_dp_attn: e.prefill.dpAttention,
    entry_decode_tp: e.decode.tp,
    entry_decode_ep: e.decode.ep,
    entry_decode_dp_attn: e.decode.dpAttention,
    repository: REPOSITORY,
    path: PATH,
    commit: m.version.commit,
    commit_date: m.version.date,
  };
  out.set(factsKey(f), WORKER_COLUMNS.map((c) => String(cells[c])).join(','));
}
const keys = [...out.keys()].sort();
process.stdout.write(`${WORKER_COLUMNS.join(',')}\n${keys.map((k) => out.get(k)).join('\n')}\n`);
process.stderr.write(
  `${rows.length} export rows without worker counts; ${tally.one} match one entry (${out.size} distinct keys), ` +
    `${tally.aggregated} one aggregated entry and ${tally.twoRuns} one entry but two measurements at their key (not written), ` +
    `${tally.none} none, ${tally.several} several; ` +
    `${versions.length} versions of ${PATH} read (main branch up to snapshot ${git('rev-parse', 'HEAD').trim()})\n`,
);
