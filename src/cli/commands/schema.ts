/** `servesim schema`: prints the JSON Schema of run configs (for editor completion and checks). */
import type { CommandModule } from 'yargs';

export const schemaCommand: CommandModule = {
  command: 'schema',
  describe: 'Print the JSON Schema of run configs',
  handler: async () => {
    const { runConfigJsonSchema } = await import('../../config/json-schema.js');
    process.stdout.write(JSON.stringify(runConfigJsonSchema(), null, 2) + '\n');
  },
};
