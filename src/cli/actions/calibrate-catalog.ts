/**
 * What `servesim calibrate catalog [--measured CSV] [--write FILE]` does (its options are in
 * `commands/calibrate-catalog.ts`): fits the catalog's efficiency factors (every GPU and backend)
 * on measured closed-loop points of many deployments, in the silicon sample's columns, and prints
 * or writes the table (`npm run fit:catalog` rewrites `data/efficiency.yaml` from the bundled
 * sample).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../../catalog/load.js';
import { CalibrateUsageError } from '../../calibrate/arguments.js';
import {
  catalogPoints,
  efficiencyFileText,
  efficiencyTableOf,
  fitCatalogFactors,
  TrajectoryPool,
} from '../../calibrate/catalog-calibration.js';
import { resolveSimLoad } from '../../calibrate/sim-load.js';
import { InputError } from '../../config/errors.js';
import { checkOutputDir, writeOutputFiles } from '../../io/write-output.js';
import { CATALOG_SAMPLE } from '../commands/calibrate-catalog.js';

export interface CatalogFitArgs {
  measured?: string;
  write?: string;
  rounds: number;
  threads?: number;
  requestsPerSlot?: number;
  maxOsl?: number;
  json?: boolean;
}

/** The numeric flags and `--write`, refused with the flag named before anything is read or fitted. */
function checkCatalogFitArgs(args: CatalogFitArgs): void {
  const bad = (flag: string, value: unknown, rule: string) => new CalibrateUsageError(`${flag} ${String(value)}: ${rule}`);
  if (!(Number.isInteger(args.rounds) && args.rounds >= 1 && args.rounds <= 100)) {
    throw bad('--rounds', args.rounds, 'must be a whole number of rounds from 1 to 100');
  }
  if (args.threads !== undefined && !(Number.isInteger(args.threads) && args.threads >= 1)) {
    throw bad('--threads', args.threads, 'must be a positive integer (pool threads)');
  }
  const perSlot = args.requestsPerSlot;
  if (perSlot !== undefined && !(Number.isFinite(perSlot) && perSlot > 0 && perSlot <= 1e6)) {
    throw bad('--requests-per-slot', perSlot, 'must be a number of simulated requests per slot above 0 (and at most 1,000,000), e.g. 10');
  }
  if (args.maxOsl !== undefined && !(Number.isFinite(args.maxOsl) && args.maxOsl >= 1)) {
    throw bad('--max-osl', args.maxOsl, 'must be a number of output tokens, at least 1');
  }
  if (args.write !== undefined) {
    if (existsSync(args.write) && statSync(args.write).isDirectory()) {
      throw new InputError(`--write ${args.write}`, 0, 'is a folder; give the file to write (e.g. data/efficiency.yaml)');
    }
    checkOutputDir(dirname(args.write), '--write');
  }
}

export async function runCatalogFit(args: CatalogFitArgs, log: (line: string) => void): Promise<string> {
  checkCatalogFitArgs(args);
  const measured = args.measured ?? join(packageRoot(), CATALOG_SAMPLE);
  const { points, skipped } = catalogPoints(measured, { maxOsl: args.maxOsl });
  if (points.length === 0) {
    const why = skipped.length > 0 ? `; ${skipped.length} left out, e.g. ${skipped[0].label}: ${skipped[0].reason}` : '';
    throw new InputError(
      args.measured ?? CATALOG_SAMPLE,
      0,
      `no usable row: no closed-loop point (mode agg, batch_size, silicon_ttft_ms and silicon_tpot_ms above 0) of a deployment the catalog can build${why}`,
    );
  }
  log(
    `${points.length} points of ${new Set(points.map((p) => p.label)).size} deployments (${skipped.length} deployments left out: not buildable from the catalog)`,
  );
  for (const s of skipped) log(`  left out: ${s.label}: ${s.reason}`);
  const load = resolveSimLoad({ requestsPerSlot: args.requestsPerSlot });
  const pool = new TrajectoryPool(args.threads);
  try {
    const { fit, recorded, rounds } = await fitCatalogFactors(pool, points, load, { rounds: args.rounds, log });
    const table = efficiencyTableOf(fit, recorded);
    const text = efficiencyFileText(table, { points, rounds, load, source: args.measured ?? CATALOG_SAMPLE });
    if (args.write !== undefined) {
      // Written next to the target and renamed over it: a failed write leaves the old table.
      checkOutputDir(dirname(args.write), '--write');
      writeOutputFiles([[args.write, text]]);
    }
    if (args.json === true) return `${JSON.stringify(table, null, 2)}\n`;
    return args.write !== undefined ? `wrote ${args.write}\n` : text;
  } finally {
    await pool.destroy();
  }
}
