/** `servesim schema`: prints the JSON Schema of run configs (for editor completion and checks). */
import type { CommandModule } from 'yargs';
import { runConfigJsonSchema } from '../../config/json-schema.js';

export const schemaCommand: CommandModule = {
  command: 'schema',
  describe: 'Print the JSON Schema of run configs',
  handler: () => {
    process.stdout.write(JSON.stringify(runConfigJsonSchema(), null, 2) + '\n');
  },
};
