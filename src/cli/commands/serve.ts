/**
 * `servesim serve RUN.yaml [--host H] [--port P] [--speed X] [--record FILE] [--tokenizer FILE]`:
 * the options. What it does is in `actions/serve.ts`, loaded when the command runs.
 */
import type { Argv, CommandModule } from 'yargs';
import type { ServeArgs } from '../actions/serve.js';

export const serveCommand: CommandModule<object, ServeArgs> = {
  command: 'serve <config>',
  describe: "Serve a run config's engine live: an OpenAI-compatible endpoint driven by the replay core in real time",
  builder: (yargs: Argv) =>
    yargs
      .positional('config', { type: 'string', demandOption: true, describe: 'run config (YAML); its engine is served, its traffic unused' })
      .option('set', {
        type: 'string',
        array: true,
        default: [],
        describe: 'override a key of the config: --set engine.context_length=4096',
      })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on' })
      .option('port', { type: 'number', default: 8000, describe: 'port to listen on (0: any free port)' })
      .option('speed', {
        type: 'number',
        default: 1,
        describe: 'simulated time per wall time (2: the engine runs twice as fast as the clock)',
      })
      .option('record', { type: 'string', describe: 'write every request served to FILE (replay --per-request lines, also a trace)' })
      .option('tokenizer', {
        type: 'string',
        describe: 'count prompt tokens with this tokenizer.json [default: characters / 4, rounded up]',
      })
      .option('served-model-name', { type: 'string', describe: 'model name clients send [default: engine.model]' })
      .option('max-waiting', {
        type: 'number',
        default: 4096,
        describe: 'requests waiting (received, not yet running) beyond which new ones are answered 503',
      }) as unknown as Argv<ServeArgs>,
  handler: async (args) => {
    const { runServeCommand } = await import('../actions/serve.js');
    process.exitCode = await runServeCommand(args);
  },
};
