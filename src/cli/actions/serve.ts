/**
 * What `servesim serve RUN.yaml ...` does (docs/serving.md; its options are in
 * `commands/serve.ts`): checks the options, loads the config and the tokenizer, starts the live
 * server and runs until SIGINT or SIGTERM: the first drains (no new requests, those in flight
 * are answered, the record closed), a second stops at once.
 */
import { loadRunConfig } from '../../config/load.js';
import { INPUT_ERROR_EXIT_CODE } from '../../config/errors.js';
import { charsPerTokenCounter, loadTokenizerCounter } from '../../serve/prompt-length.js';
import { startServer } from '../../serve/server.js';
import { predictionAccuracy } from '../../replay.js';

export interface ServeArgs {
  config: string;
  set: string[];
  host: string;
  port: number;
  speed: number;
  record?: string;
  tokenizer?: string;
  servedModelName?: string;
  maxWaiting: number;
}

/** The largest --speed taken: faster, a timer's millisecond is more than a pass. */
const MAX_SPEED = 1000;

function optionProblem(args: ServeArgs): string | null {
  if (!(Number.isInteger(args.port) && args.port >= 0 && args.port <= 65535))
    return `--port: must be an integer from 0 to 65535, got ${args.port}`;
  if (!(Number.isFinite(args.speed) && args.speed > 0 && args.speed <= MAX_SPEED))
    return `--speed: must be a number above 0 and at most ${MAX_SPEED}, got ${args.speed}`;
  if (!(Number.isInteger(args.maxWaiting) && args.maxWaiting >= 1))
    return `--max-waiting: must be a positive integer, got ${args.maxWaiting}`;
  if (args.servedModelName !== undefined && args.servedModelName.trim() === '') return '--served-model-name: must not be empty';
  return null;
}

export async function runServeCommand(args: ServeArgs): Promise<number> {
  const problem = optionProblem(args);
  if (problem !== null) {
    process.stderr.write(`error: ${problem}\n`);
    return INPUT_ERROR_EXIT_CODE;
  }
  const loaded = loadRunConfig(args.config, args.set);
  const counter = args.tokenizer === undefined ? charsPerTokenCounter : await loadTokenizerCounter(args.tokenizer);
  const modelName = args.servedModelName ?? loaded.config.engine.model;
  const server = await startServer(loaded.config, {
    host: args.host,
    port: args.port,
    speed: args.speed,
    modelName,
    maxWaiting: args.maxWaiting,
    counter,
    record: args.record ?? null,
  }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE' || err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL') {
      throw Object.assign(new Error(`cannot listen on ${args.host}:${args.port}: ${err.code}`), { exitCode: 1 });
    }
    throw err;
  });
  const context = Number.isFinite(server.maxModelLen) ? `context ${server.maxModelLen} tokens` : 'no context limit';
  process.stdout.write(
    `serving ${modelName} at ${server.url}/v1 (speed ${args.speed}, ${context}, prompt tokens: ${counter.rule})\n` +
      `Ctrl-C drains (requests in flight are answered), a second Ctrl-C stops at once\n`,
  );
  const accuracy = predictionAccuracy(loaded.config);
  if (accuracy?.basis === 'placeholder') process.stdout.write(`not a prediction: ${accuracy.stratum}\n`);
  await new Promise<void>((resolve) => {
    let signals = 0;
    const onSignal = (): void => {
      signals++;
      if (signals === 1) {
        process.stdout.write(`draining: ${server.engine.inFlight} requests in flight\n`);
        void server.drain().then(resolve);
      } else {
        void server.stop().then(resolve);
      }
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  process.stdout.write(args.record !== undefined ? `stopped; wrote ${args.record}\n` : 'stopped\n');
  return 0;
}
