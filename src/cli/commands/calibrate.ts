/**
 * `servesim calibrate <target>` (docs/calibration.md): turn measurements into run-config
 * constants. Direct fits (`detokenization`, `response-overhead`, `pass-time`) regress measured
 * rows; `engine` runs the replay core inside an optimizer to fit the pass time (the catalog's
 * efficiency factors under roofline timing, or the `linear` coefficients) to a few measured load
 * points and scores the rest. `servesim quickstart` runs the
 * out-of-the-box workflow. Parsing only; the work is in src/calibrate/ and src/workflow/, loaded
 * when a command runs.
 */
import type { Argv, CommandModule } from 'yargs';
import type { DirectFitOutcome } from '../../calibrate/direct-fits.js';
import { calibrateCatalogCommand } from './calibrate-catalog.js';

interface CommonArgs {
  out?: string;
  holdout?: number;
  map?: string[];
  json?: boolean;
  force?: boolean;
}

const JSON_OPTION = { type: 'boolean', default: false, describe: 'print the fit.json object instead of the text' } as const;

/** `servesim calibrate` without a target: the targets, what each fits from what, and an example of each. */
export const CALIBRATE_TARGETS_TEXT = [
  'servesim calibrate needs a target:',
  '  detokenization      engine.detokenization costs, from one row per detokenizer job',
  "  response-overhead   the load generator's turnaround, from AIPerf runs (profile_export.jsonl; runs at several concurrencies fit its growth with load)",
  '  pass-time           the linear pass-time coefficients, from per-pass measurements; or the profile timing, from per-layer profiles',
  "  engine              the pass time (the catalog's efficiency factors, or linear coefficients) and the client path, from measured load points, by replaying them",
  "  catalog             the catalog's efficiency factors (roofline timing), from measured points of many deployments",
  '',
  'for example, on the inputs shipped in calibration/ and data/:',
  '  npx servesim calibrate detokenization --input calibration/detokenization-jobs.csv',
  '  npx servesim calibrate response-overhead --aiperf calibration/aiperf-mlx-qwen3-0.6b-c1',
  '  npx servesim calibrate pass-time --input calibration/splitwise-perf-model.csv --layout prefill-decode \\',
  '    --select model=llama2-70b --select hardware=h100-80gb --select tensor_parallel=4',
  '  npx servesim calibrate pass-time --profile data/engine-runs/vllm-rtx4090-llama-3.1-8b/profiler --out out/pass-time',
  '  npx servesim calibrate engine --config calibration/minimax-m25-b200-tp4.base.yaml \\',
  '    --measured data/silicon/dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv --select source=hardware --train lowest:3',
  '',
  'servesim calibrate <target> --help lists its options; docs/calibration.md describes each fit.',
  '',
].join('\n');

const FORCE_OPTION = {
  type: 'boolean',
  default: false,
  describe:
    'write a fit that cannot be trusted (fewer measured values than constants, columns that cannot be told apart, mixed deployments, an open-loop run, gaps all at one point); refused otherwise',
} as const;

function commonOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('out', { type: 'string', describe: 'folder for fit.json, snippet.yaml, residuals.csv and fit.svg' })
    .option('holdout', { type: 'number', describe: 'share of the rows held out of the fit and scored, e.g. 0.2' })
    .option('map', {
      type: 'string',
      array: true,
      describe: 'ROLE=COLUMN: read a role from a differently named column; repeatable',
    })
    .option('json', JSON_OPTION)
    .option('force', FORCE_OPTION);
}

async function print(outcome: DirectFitOutcome, json: boolean | undefined): Promise<void> {
  const { fitJson } = await import('../../calibrate/fit-output.js');
  process.stdout.write(json === true ? `${JSON.stringify(fitJson(outcome.report), null, 2)}\n` : outcome.text);
}

/** The fits and the parsers of their arguments, loaded when a fit runs. */
async function fits() {
  const [direct, args] = await Promise.all([import('../../calibrate/direct-fits.js'), import('../../calibrate/arguments.js')]);
  return { ...direct, ...args };
}

const detokenizationCommand: CommandModule<object, CommonArgs & { input: string; model: 'two-term' | 'four-term' }> = {
  command: 'detokenization',
  describe: 'Fit engine.detokenization from one row per detokenizer job (pass_end_ms, server, outputs, received_ms)',
  builder: (y) =>
    commonOptions(y)
      .option('input', { type: 'string', demandOption: true, describe: 'CSV of detokenizer jobs' })
      .option('model', {
        choices: ['two-term', 'four-term'] as const,
        default: 'two-term' as const,
        describe: 'four-term adds first-output and final-output costs (needs first_outputs, final_outputs columns)',
      }),
  handler: async (argv) => {
    const { parseRoleMapping, runDetokenizationFit } = await fits();
    await print(
      await runDetokenizationFit({
        input: argv.input,
        model: argv.model,
        out: argv.out,
        holdout: argv.holdout,
        mapping: parseRoleMapping(argv.map),
        force: argv.force,
      }),
      argv.json,
    );
  },
};

const responseOverheadCommand: CommandModule<object, CommonArgs & { aiperf?: string[]; input?: string }> = {
  command: 'response-overhead',
  describe:
    "Fit traffic.load.response_overhead from AIPerf's per-request JSONL (response end to the next request on the slot) or a CSV output_tokens,gap_ms",
  builder: (y) =>
    commonOptions(y)
      .option('aiperf', {
        type: 'string',
        array: true,
        describe: 'AIPerf run folders, folders of runs, or profile_export.jsonl files (runs at several concurrencies fit per_inflight_us)',
      })
      .option('input', { type: 'string', describe: 'CSV with output_tokens,gap_ms and optionally inflight' }),
  handler: async (argv) => {
    const { parseRoleMapping, runResponseOverheadFit } = await fits();
    await print(
      await runResponseOverheadFit({
        aiperf: argv.aiperf,
        input: argv.input,
        out: argv.out,
        holdout: argv.holdout,
        mapping: parseRoleMapping(argv.map),
        force: argv.force,
      }),
      argv.json,
    );
  },
};

interface PassTimeArgs extends CommonArgs {
  input?: string;
  layout: 'passes' | 'prefill-decode';
  select?: string[];
  profile?: string;
  tp?: number;
  layers?: number;
  model?: string;
  experts?: number;
  expertsPerToken?: number;
  log?: string;
}

/** Options that belong to one of the two inputs of `calibrate pass-time`, for the error that names a mix. */
const ROWS_ONLY = ['holdout', 'map', 'select'] as const;
const PROFILE_ONLY = ['tp', 'layers', 'model', 'experts', 'expertsPerToken', 'log'] as const;

function flagName(option: string): string {
  return `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

const passTimeCommand: CommandModule<object, PassTimeArgs> = {
  command: 'pass-time',
  describe: 'Fit the linear timing coefficients from measured per-pass rows, or build the profile timing from per-layer profiles',
  builder: (y) =>
    commonOptions(y)
      .option('input', { type: 'string', describe: 'CSV of passes' })
      .option('layout', {
        choices: ['passes', 'prefill-decode'] as const,
        default: 'passes' as const,
        describe:
          'passes: duration_ms, prefill_tokens, prefill_pairs, decode_requests, decode_kv_tokens per pass; prefill-decode: prefill and mean decode-step times per (prompt, batch, output) row, Splitwise perf_model.csv names by default',
      })
      .option('select', {
        type: 'string',
        array: true,
        describe:
          'COLUMN=VALUE, COLUMN=V1|V2, COLUMN!=V or COLUMN<=N (<, >, >=): keep only the rows that meet it (e.g. model=llama2-70b); repeatable',
      })
      .option('profile', {
        type: 'string',
        describe:
          'a layer-wise profile folder (meta.yaml, tp<N>/dense.csv, per_sequence.csv, attention.csv): build the pass-time model of timing type profile instead of fitting --input',
      })
      .option('tp', {
        type: 'number',
        describe: "with --profile: the tensor-parallel size whose tables to use [default: the log's with --log, else the only one]",
      })
      .option('layers', { type: 'number', describe: "with --profile: the model's transformer layers [default: the catalog's]" })
      .option('model', { type: 'string', describe: "with --profile: the catalog model to take the layers from [default: the profile's]" })
      .option('experts', { type: 'number', describe: "with --profile of a mixture of experts: routed experts [default: the catalog's]" })
      .option('experts-per-token', {
        type: 'number',
        describe: "with --profile of a mixture of experts: experts per token [default: the catalog's]",
      })
      .option('log', {
        type: 'string',
        describe: 'with --profile: a vLLM request log (its folder) to replay with the built model, measured against replayed',
      }),
  handler: async (argv) => {
    if ((argv.input === undefined) === (argv.profile === undefined)) {
      const { CalibrateUsageError } = await import('../../calibrate/arguments.js');
      throw new CalibrateUsageError(
        argv.input === undefined
          ? 'give the measurements: --input PASSES.csv (one row per pass) or --profile DIR (a layer-wise profile)'
          : 'give one of --input and --profile, not both',
      );
    }
    if (argv.profile !== undefined) {
      const [{ CalibrateUsageError }, { runProfilePassTime }] = await Promise.all([
        import('../../calibrate/arguments.js'),
        import('../../calibrate/profile-command.js'),
      ]);
      const stray = [...ROWS_ONLY, 'force'].filter((name) => {
        const value = (argv as unknown as Record<string, unknown>)[name];
        return value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0);
      });
      if (stray.length > 0) throw new CalibrateUsageError(`${flagName(stray[0])} applies to --input; a profile is not fitted`);
      const outcome = runProfilePassTime({
        profile: argv.profile,
        tp: argv.tp,
        layers: argv.layers,
        model: argv.model,
        experts: argv.experts,
        expertsPerToken: argv.expertsPerToken,
        log: argv.log,
        out: argv.out,
      });
      process.stdout.write(
        argv.json === true
          ? `${JSON.stringify(outcome.fitJson, null, 2)}
`
          : outcome.text,
      );
      return;
    }
    const { CalibrateUsageError, parseRoleMapping, parseSelectionArgs, runPassTimeFit } = await fits();
    const stray = PROFILE_ONLY.filter((name) => (argv as unknown as Record<string, unknown>)[name] !== undefined);
    if (stray.length > 0) throw new CalibrateUsageError(`${flagName(stray[0])} applies to --profile`);
    await print(
      await runPassTimeFit({
        input: argv.input as string,
        layout: argv.layout,
        select: parseSelectionArgs(argv.select),
        out: argv.out,
        holdout: argv.holdout,
        mapping: parseRoleMapping(argv.map),
        force: argv.force,
      }),
      argv.json,
    );
  },
};

export interface EngineArgs {
  config: string;
  measured: string[];
  select?: string[];
  map?: string[];
  train: string;
  metrics?: string[];
  out?: string;
  fitClient: boolean;
  requestsPerSlot?: number;
  rangeRatio?: number;
  warmup?: 'none' | 'first-wave';
  threads?: number;
  set?: string[];
  refine?: number;
  pointWeights: 'load-rank' | 'uniform';
  form: 'auto' | 'roofline' | 'linear';
  json?: boolean;
  force?: boolean;
}

const engineCommand: CommandModule<object, EngineArgs> = {
  command: 'engine',
  describe:
    "Fit the pass time to measured load points by replaying them in an optimizer (--form: the catalog's efficiency factors, or free linear coefficients); score the held-out points",
  builder: (y) =>
    y
      .option('config', {
        type: 'string',
        demandOption: true,
        describe: 'base run config (engine, scheduler, parallelism); its timing is replaced by the fit',
      })
      .option('measured', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: 'AIPerf run folders or a CSV of measured points (e.g. data/silicon/*.csv)',
      })
      .option('select', {
        type: 'string',
        array: true,
        describe:
          'COLUMN=VALUE, COLUMN=V1|V2, COLUMN!=V or COLUMN<=N (<, >, >=): keep only the measured rows/points that meet it; repeatable',
      })
      .option('map', { type: 'string', array: true, describe: 'COLUMN=TARGET for CSV tables (as servesim score)' })
      .option('train', {
        type: 'string',
        default: 'lowest:3',
        describe: 'which points to fit on: lowest:N, highest:N, or KEY<=V, KEY=V1|V2 ... joined by "and"',
      })
      .option('metrics', {
        type: 'string',
        array: true,
        describe: 'metrics to fit and score [default: time_to_first_token.avg,inter_token_latency.avg]',
      })
      .option('fit-client', {
        type: 'boolean',
        default: true,
        describe:
          'linear form: also fit a client-path delay before the scheduler (engine.tokenization.base_ms); --no-fit-client puts all of TTFT on the engine',
      })
      .option('requests-per-slot', { type: 'number', describe: 'simulated requests per concurrency slot [default: 10]' })
      .option('range-ratio', { type: 'number', describe: 'random_range_ratio of simulated lengths [default: 0.8]' })
      .option('warmup', {
        choices: ['none', 'first-wave'] as const,
        describe: 'leave the first wave of requests out of the metrics [default: none]',
      })
      .option('threads', { type: 'number', describe: 'pool threads [default: cores]' })
      .option('refine', {
        type: 'number',
        describe:
          'linear form: iterations of two refining searches (3 % and 1 % steps) after the coarse one; for long simulated runs (--requests-per-slot 64) [default: 0]',
      })
      .option('point-weights', {
        choices: ['load-rank', 'uniform'] as const,
        default: 'load-rank' as const,
        describe: "linear form: weights of the training points' residuals: by rank of load (0.5, 1, 1.5 for three points), or 1 each",
      })
      .option('form', {
        choices: ['auto', 'roofline', 'linear'] as const,
        default: 'auto' as const,
        describe:
          "roofline: fit the catalog's efficiency factors, each held near the catalog's value; linear: fit free pass-time coefficients; auto: linear when the model or GPU is not in the catalog, else the form that did no worse on the engine-fit benchmark and its check set for the backend and model family (fit.json's form_choice says which and why)",
      })
      .option('set', { type: 'string', array: true, describe: 'KEY=VALUE override of the base config (dotted path); repeatable' })
      .option('force', FORCE_OPTION)
      .option('out', { type: 'string', describe: 'output folder [default: calibration-engine]' })
      .option('json', JSON_OPTION) as unknown as Argv<EngineArgs>,
  handler: async (argv) => {
    const { runEngineCalibration } = await import('../../calibrate/engine-command.js');
    const outcome = await runEngineCalibration({
      config: argv.config,
      measured: argv.measured,
      select: argv.select,
      map: argv.map,
      train: argv.train,
      metrics: argv.metrics,
      out: argv.out ?? 'calibration-engine',
      fitClient: argv.fitClient,
      simLoad: { requestsPerSlot: argv.requestsPerSlot, rangeRatio: argv.rangeRatio, warmup: argv.warmup },
      threads: argv.threads,
      sets: argv.set,
      refineIterations: argv.refine,
      uniformPointWeights: argv.pointWeights === 'uniform',
      form: argv.form,
      force: argv.force,
    });
    process.stdout.write(argv.json === true ? `${JSON.stringify(outcome.fitJson, null, 2)}\n` : outcome.text);
  },
};

export const calibrateCommand: CommandModule = {
  command: 'calibrate [target]',
  describe: 'Fit run-config constants from measurements: detokenization, response-overhead, pass-time, engine, catalog',
  builder: (y: Argv) =>
    y
      .command(detokenizationCommand as CommandModule)
      .command(responseOverheadCommand as CommandModule)
      .command(passTimeCommand as CommandModule)
      .command(engineCommand as CommandModule)
      .command(calibrateCatalogCommand as CommandModule),
  // Reached only without a known target (each target has its own handler).
  handler: (argv) => {
    const target = (argv as { target?: string | number }).target;
    process.stderr.write(`${target === undefined ? '' : `error: unknown target ${target}\n`}${CALIBRATE_TARGETS_TEXT}`);
    process.exitCode = 2;
  },
};

export const quickstartCommand: CommandModule<object, { out: string; threads?: number }> = {
  command: 'quickstart',
  describe:
    'Run the whole workflow on the shipped data: fit the engine on the lowest measured points, sweep a concurrency grid, score the held-back points, write the HTML report',
  builder: (y) =>
    y
      .option('out', { type: 'string', default: 'quickstart-output', describe: 'output folder' })
      .option('threads', { type: 'number', describe: 'pool threads [default: cores]' }),
  handler: async (argv) => {
    const { runQuickstart } = await import('../../workflow/quickstart.js');
    const outcome = await runQuickstart({ out: argv.out, threads: argv.threads });
    process.stdout.write(outcome.text);
  },
};

/** Both commands, for one registration line in main.ts. */
export const calibrateCommands: CommandModule[] = [calibrateCommand, quickstartCommand as CommandModule];
