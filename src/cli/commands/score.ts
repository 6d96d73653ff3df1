/**
 * `servesim score --sim SWEEP_DIR --measured PATH... [--select col=value]... [--map col=target]...
 * [--metrics LIST] [--group-by LIST] [--out DIR] [--max-mape METRIC=X]... [--baseline DIR]`
 * (docs/scoring.md). Parsing and exit codes only; the work is in src/score/, loaded when the
 * command runs.
 */
import type { Argv, CommandModule } from 'yargs';

export interface ScoreArgs {
  sim: string;
  measured: string[];
  select?: string[];
  map?: string[];
  metrics?: string[];
  groupBy?: string[];
  out?: string;
  maxMape?: string[];
  baseline?: string;
  label?: string;
  baselineLabel?: string;
  train?: string;
  simSelect?: string[];
  baselineSelect?: string[];
  json?: boolean;
}

export const scoreCommand: CommandModule<object, ScoreArgs> = {
  command: 'score',
  describe: 'Score simulated points against measured AIPerf runs or a table of measured points (MAPE per metric)',
  builder: (y: Argv) =>
    y
      .option('sim', {
        type: 'string',
        demandOption: true,
        describe:
          "simulated side: a sweep folder (points.jsonl), replay results (summary.json), AIPerf artifact folders, or a CSV table of another simulator's predicted points (with --sim-select)",
      })
      .option('measured', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: 'measured side: AIPerf artifact folders (or a folder of them), or CSV tables of points (e.g. data/silicon/*.csv)',
      })
      .option('select', {
        type: 'string',
        array: true,
        describe:
          'COLUMN=VALUE, COLUMN=V1|V2, COLUMN!=V or COLUMN<=N (<, >, >=): keep only measured rows (CSV columns) and points (keys) that meet it; repeatable',
      })
      .option('train', {
        type: 'string',
        describe:
          'measured points the simulated side was fitted on (lowest:N, highest:N, KEY=V1|V2, KEY<=V ... joined by "and"): marked train, left out of every MAPE; default: the training points of the fit.json beside a sweep\'s base config; none: score every point (the fit\'s still marked)',
      })
      .option('sim-select', {
        type: 'string',
        array: true,
        describe: "when --sim is a CSV table of another simulator's predicted points: the rows to read (e.g. source=mocker); repeatable",
      })
      .option('map', {
        type: 'string',
        array: true,
        describe:
          'COLUMN=TARGET for CSV tables: a key (concurrency, request_rate, isl, osl, any name) or a metric (time_to_first_token.avg); repeatable',
      })
      .option('metrics', {
        type: 'string',
        array: true,
        describe:
          'metrics to score, TAG.STAT or TAG, comma-separated [default: time_to_first_token.avg,time_to_first_token.p50,time_to_first_token.p90,inter_token_latency.avg,output_token_throughput]',
      })
      .option('group-by', { type: 'string', array: true, describe: 'keys to compute group MAPEs by, comma-separated (e.g. isl,osl)' })
      .option('out', { type: 'string', describe: 'folder for scores.csv, scores.json, report.md and report.html [default: <sim>/score]' })
      .option('max-mape', {
        type: 'string',
        array: true,
        describe: 'METRIC=PERCENT: exit 1 when the MAPE of METRIC is above PERCENT; repeatable',
      })
      .option('baseline', {
        type: 'string',
        describe: 'a second simulated side scored against the same measured points, shown beside the first',
      })
      .option('label', { type: 'string', describe: 'name of the simulated side in tables and charts [default: its folder name]' })
      .option('baseline-label', {
        type: 'string',
        describe: 'name of the baseline side [default: its folder name]',
      })
      .option('baseline-select', {
        type: 'string',
        array: true,
        describe: 'when --baseline is a CSV table of predicted points: the rows to read; repeatable',
      })
      .option('json', { type: 'boolean', default: false, describe: 'print the scores.json object instead of the table' }),
  handler: async (argv) => {
    const { runScore } = await import('../../score/run-score.js');
    const outcome = await runScore({
      sim: argv.sim,
      measured: argv.measured,
      select: argv.select,
      map: argv.map,
      metrics: argv.metrics,
      groupBy: argv.groupBy,
      out: argv.out,
      maxMape: argv.maxMape,
      baseline: argv.baseline,
      simLabel: argv.label,
      baselineLabel: argv.baselineLabel,
      train: argv.train,
      simSelect: argv.simSelect,
      baselineSelect: argv.baselineSelect,
      json: argv.json,
    });
    for (const failure of outcome.failures) process.stderr.write(`score: ${failure}\n`);
    process.exitCode = outcome.exitCode;
  },
};
