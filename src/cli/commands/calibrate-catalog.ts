/**
 * `servesim calibrate catalog [--measured CSV] [--write FILE]`: fits the catalog's efficiency
 * factors (every GPU and backend) on measured closed-loop points of many deployments, in the
 * silicon sample's columns, and prints or writes the table (`npm run fit:catalog` rewrites
 * `data/efficiency.yaml` from the bundled sample).
 */
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { packageRoot } from '../../catalog/load.js';
import {
  catalogPoints,
  efficiencyFileText,
  efficiencyTableOf,
  fitCatalogFactors,
  TrajectoryPool,
  writeEfficiencyFile,
} from '../../calibrate/catalog-calibration.js';
import { resolveSimLoad } from '../../calibrate/sim-load.js';

interface CatalogFitArgs {
  measured?: string;
  write?: string;
  rounds: number;
  threads?: number;
  requestsPerSlot?: number;
  maxOsl?: number;
  json?: boolean;
}

export const CATALOG_SAMPLE = 'data/silicon/aic-silicon-sample.csv';

export async function runCatalogFit(args: CatalogFitArgs, log: (line: string) => void): Promise<string> {
  const measured = args.measured ?? join(packageRoot(), CATALOG_SAMPLE);
  const { points, skipped } = catalogPoints(measured, { maxOsl: args.maxOsl });
  if (points.length === 0)
    throw Object.assign(new Error(`${measured}: no closed-loop point of a deployment the catalog can build`), { exitCode: 2 });
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
    if (args.write !== undefined) writeEfficiencyFile(args.write, text);
    if (args.json === true) return `${JSON.stringify(table, null, 2)}\n`;
    return args.write !== undefined ? `wrote ${args.write}\n` : text;
  } finally {
    await pool.destroy();
  }
}

export const calibrateCatalogCommand: CommandModule<object, CatalogFitArgs> = {
  command: 'catalog',
  describe: "Fit the catalog's efficiency factors (roofline timing) on measured points of many deployments",
  builder: (y: Argv) =>
    y
      .option('measured', {
        type: 'string',
        describe: `closed-loop points in the silicon sample's columns [default: the bundled ${CATALOG_SAMPLE}]`,
      })
      .option('write', { type: 'string', describe: 'write the table to FILE (data/efficiency.yaml is the one roofline timing reads)' })
      .option('rounds', { type: 'number', default: 3, describe: 'rounds of replays and fits' })
      .option('max-osl', { type: 'number', describe: 'only deployments with at most this many output tokens (faster)' })
      .option('requests-per-slot', { type: 'number', describe: 'simulated requests per concurrency slot [default: 10]' })
      .option('threads', { type: 'number', describe: 'pool threads [default: cores]' })
      .option('json', { type: 'boolean', default: false, describe: 'print the table as JSON (also with --write)' }),
  handler: async (argv) => {
    process.stdout.write(await runCatalogFit(argv, (line) => process.stderr.write(`${line}\n`)));
  },
};
