/**
 * The JSON Schema of a run config file (`servesim schema`), generated from `schema.ts`.
 * It describes the input side: keys with defaults are optional. Cross-field rules
 * (rules.ts) are not expressible here and are only checked by the loader.
 */
import * as z from 'zod';
import { runConfigSchema } from './schema.js';

export function runConfigJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(runConfigSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: 'servesim run config',
    description:
      'One replay run: the engine (the scheduler of vLLM, SGLang or TensorRT-LLM, KV cache, pass timing, tokenization, detokenization), ' +
      'the traffic (request source, load, stop condition) and the report. Unknown keys are errors.',
    ...rest,
  };
}
