/**
 * `npm run bench:accuracy -- --zero-shot [--rounds N] [--max-osl N] [--requests-per-slot N] [--json] [--write-efficiency FILE]`: predicts every
 * aggregated deployment of the silicon sample from the catalog alone, the efficiency factors
 * fitted without any point of the model being predicted (leave one model out), and prints the
 * MAPE of TTFT avg and ITL avg by stratum (backend x dense/MoE), point-weighted, over every point
 * and over single-node deployments only (at most 8 GPUs; 4 on GB200/GB300, whose nodes hold 4).
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  catalogPoints,
  efficiencyFileText,
  efficiencyTableOf,
  TrajectoryPool,
  zeroShot,
  type ZeroShotPoint,
} from '../src/calibrate/catalog-calibration.js';
import { resolveSimLoad } from '../src/calibrate/sim-load.js';
import { packageRoot } from '../src/catalog/load.js';
import { writeOutputFile } from '../src/io/write-output.js';

const argValue = (name: string, fallback: number) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback;

const singleNode = (p: ZeroShotPoint) => p.gpus <= (p.hardware === 'gb200' || p.hardware === 'gb300' ? 4 : 8);

function mape(points: readonly ZeroShotPoint[]): { ttft: number; itl: number; n: number } {
  let ttft = 0;
  let itl = 0;
  for (const p of points) {
    ttft += Math.abs(p.predicted.ttftMs / p.measured.ttftMs - 1);
    itl += Math.abs(p.predicted.itlMs / p.measured.itlMs - 1);
  }
  const n = Math.max(1, points.length);
  return { ttft: (100 * ttft) / n, itl: (100 * itl) / n, n: points.length };
}

export async function zeroShotBench(): Promise<void> {
  const started = performance.now();
  const threads = argValue('--threads', availableParallelism());
  const maxOsl = argValue('--max-osl', Infinity);
  const { points, skipped } = catalogPoints(
    join(packageRoot(), 'data/silicon/aic-silicon-sample.csv'),
    Number.isFinite(maxOsl) ? { maxOsl } : {},
  );
  const load = resolveSimLoad({ requestsPerSlot: argValue('--requests-per-slot', 10) });
  process.stdout.write(
    `zero-shot accuracy: ${points.length} points of ${new Set(points.map((p) => p.label)).size} aggregated deployments, ${new Set(points.map((p) => p.model)).size} models` +
      `${skipped.length > 0 ? ` (${skipped.length} deployments not buildable from the catalog)` : ''}; leave one model out; ${threads} threads\n`,
  );
  const pool = new TrajectoryPool(threads);
  let predictions: ZeroShotPoint[];
  try {
    const result = await zeroShot(pool, points, load, {
      rounds: argValue('--rounds', 3),
      log: (line) => process.stdout.write(`  ${line}\n`),
    });
    predictions = result.predictions;
    // The fit on every point is the one `npm run fit:catalog` makes: --write-efficiency keeps it.
    const write = process.argv.includes('--write-efficiency') ? process.argv[process.argv.indexOf('--write-efficiency') + 1] : undefined;
    if (write !== undefined) {
      const table = efficiencyTableOf(result.all, result.recorded);
      writeOutputFile(
        write,
        efficiencyFileText(table, { points, rounds: result.rounds, load, source: 'data/silicon/aic-silicon-sample.csv' }),
      );
      process.stdout.write(`wrote ${write}\n`);
    }
  } finally {
    await pool.destroy();
  }
  const strata = new Map<string, ZeroShotPoint[]>();
  for (const p of predictions) {
    const key = `${p.backend} ${p.moe ? 'MoE' : 'dense'}`;
    strata.set(key, [...(strata.get(key) ?? []), p]);
  }
  const rows = [...strata.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const cell = (m: { ttft: number; itl: number; n: number }) =>
    `${m.ttft.toFixed(1).padStart(6)} % ${m.itl.toFixed(1).padStart(6)} % ${String(m.n).padStart(5)}`;
  process.stdout.write(`\n${'stratum'.padEnd(14)} ${'all points: TTFT    ITL      n'.padEnd(28)}   single-node: TTFT    ITL      n\n`);
  for (const [stratum, list] of rows)
    process.stdout.write(`${stratum.padEnd(14)} ${cell(mape(list))}   ${cell(mape(list.filter(singleNode)))}\n`);
  process.stdout.write(`${'overall'.padEnd(14)} ${cell(mape(predictions))}   ${cell(mape(predictions.filter(singleNode)))}\n`);
  process.stdout.write(
    `targets: TTFT avg MAPE <= 20 %, ITL avg MAPE <= 12 % per stratum; wall ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  const byModel = new Map<string, ZeroShotPoint[]>();
  for (const p of predictions) byModel.set(p.model, [...(byModel.get(p.model) ?? []), p]);
  process.stdout.write('\nby model (left out of the fit that predicts it):\n');
  for (const [model, list] of [...byModel.entries()].sort(([a], [b]) => (a < b ? -1 : 1)))
    process.stdout.write(`  ${model.padEnd(40)} ${cell(mape(list))}\n`);
  if (process.argv.includes('--json')) {
    process.stdout.write(
      `${JSON.stringify({ strata: Object.fromEntries(rows.map(([k, list]) => [k, { all: mape(list), single_node: mape(list.filter(singleNode)) }])), overall: mape(predictions) }, null, 2)}\n`,
    );
  }
}
