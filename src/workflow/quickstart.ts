/**
 * The out-of-the-box workflow (docs/calibration.md, "Out of the box"), `npm start` / `servesim quickstart`: on the
 * measured concurrency sweep shipped in `data/silicon/` (MiniMax-M2.5 FP8, TP4 on B200, vLLM
 * 0.17, ISL = OSL = 1024, concurrency 4..64), fit the engine on the three lowest points, sweep a
 * concurrency grid (1..128) with the fitted model, score the sweep against the held-back
 * measured points, and write the HTML report. Prints where the report is and the headline MAPEs.
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { runEngineCalibration } from '../calibrate/engine-command.js';
import { displayPath, packageRoot } from '../io/paths.js';
import { makeOutputDir, writeOutputFile } from '../io/write-output.js';
import { runScore } from '../score/run-score.js';
import { runSweep } from '../sweep/run-sweep.js';

export interface QuickstartOptions {
  out: string;
  threads?: number;
  /** Where the project's shipped files are (the package root by default). */
  root?: string;
  /** Sweep grid of concurrencies (default 1, 2, 4, ..., 128). */
  grid?: number[];
}

export interface QuickstartOutcome {
  text: string;
  reportHtml: string;
  fitDir: string;
  sweepDir: string;
  holdoutMape: Record<string, number | null>;
}

export const QUICKSTART_MEASURED = 'data/silicon/dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv';
export const QUICKSTART_BASE = 'calibration/minimax-m25-b200-tp4.base.yaml';

export async function runQuickstart(options: QuickstartOptions): Promise<QuickstartOutcome> {
  const root = options.root ?? packageRoot();
  const out = resolve(options.out);
  const measured = join(root, QUICKSTART_MEASURED);
  const base = join(root, QUICKSTART_BASE);
  const fitDir = join(out, 'fit');
  const lines: string[] = [];
  const show = displayPath;

  // 1. Fit on the three lowest measured points; the rest are held back.
  const fit = await runEngineCalibration({
    config: base,
    measured: [measured],
    select: ['source=hardware'],
    train: 'lowest:3',
    out: fitDir,
    fitClient: true,
    threads: options.threads,
  });
  lines.push(
    `1. fitted the engine on ${fit.calibration.train.map((p) => `c=${p.key.concurrency}`).join(', ')} of ${show(measured)} (${(fit.calibration.wallMs / 1000).toFixed(1)} s): ${show(join(fitDir, 'fit.json'))}`,
  );

  // 2. Sweep a concurrency grid with the fitted config.
  const grid = options.grid ?? [1, 2, 4, 8, 16, 32, 64, 128];
  const sweepFile = join(out, 'sweep.yaml');
  makeOutputDir(out);
  writeOutputFile(
    sweepFile,
    `# written by servesim quickstart\n${stringifyYaml({ name: 'quickstart-concurrency', base: 'fit/fitted-config.yaml', grid: { 'traffic.load.concurrency': grid } })}`,
  );
  // Started afresh: the points of an earlier fit are not this sweep's (and their timings would stay).
  const sweepDir = join(out, 'sweep');
  rmSync(sweepDir, { recursive: true, force: true });
  const sweep = await runSweep({ sweepFile, outDir: sweepDir, poolThreads: options.threads, note: () => {}, progress: undefined });
  if (sweep.failed.length > 0) throw new Error(`the sweep had failed points: ${sweep.failed.map((f) => f.error).join('; ')}`);
  lines.push(`2. swept concurrency ${grid.join(', ')} with the fitted model: ${show(join(sweepDir, 'summary.csv'))}`);

  // 3. Score the sweep against the held-back measured points; the training points are drawn on
  // the charts, marked apart, and left out of the MAPEs.
  const held = fit.calibration.holdout.map((p) => String(p.key.concurrency));
  const train = `concurrency=${fit.calibration.train.map((p) => String(p.key.concurrency)).join('|')}`;
  const reportDir = join(out, 'report');
  const score = await runScore({
    sim: sweepDir,
    measured: [measured],
    select: ['source=hardware'],
    train,
    metrics: ['time_to_first_token.avg', 'inter_token_latency.avg'],
    out: reportDir,
    simLabel: 'fitted model',
    print: () => {},
  });
  const reportHtml = join(reportDir, 'report.html');
  const mape = (id: string) => score.result.metrics[id]?.mape ?? null;
  const fmt = (v: number | null) => (v === null ? '-' : `${v.toFixed(1)} %`);
  lines.push(`3. scored against the held-back points (concurrency ${held.join(', ')}): ${show(join(reportDir, 'scores.csv'))}`);
  lines.push('');
  lines.push(`held-out MAPE: TTFT avg ${fmt(mape('time_to_first_token.avg'))}, ITL avg ${fmt(mape('inter_token_latency.avg'))}`);
  lines.push(`report: ${show(reportHtml)}`);
  return {
    text: `${lines.join('\n')}\n`,
    reportHtml,
    fitDir,
    sweepDir,
    holdoutMape: { 'time_to_first_token.avg': mape('time_to_first_token.avg'), 'inter_token_latency.avg': mape('inter_token_latency.avg') },
  };
}
