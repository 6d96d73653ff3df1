import { describe, expect, it } from 'vitest';
import { runConfigJsonSchema } from '../src/config/json-schema.js';

/** The part of a JSON Schema node these tests walk. */
interface JsonSchemaNode {
  properties: Record<string, JsonSchemaNode>;
  oneOf: JsonSchemaNode[];
  const?: unknown;
}

describe('runConfigJsonSchema', () => {
  it('is plain JSON with a $schema, a title and a description', () => {
    const schema = runConfigJsonSchema();
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.title).toBe('servesim run config');
    expect(typeof schema.description).toBe('string');
    expect(Object.keys(schema).slice(0, 3)).toEqual(['$schema', 'title', 'description']);
  });

  it('has engine, traffic and report properties, none of them required', () => {
    const schema = runConfigJsonSchema() as {
      properties: Record<string, { properties?: Record<string, unknown> }>;
      required?: string[];
      additionalProperties: boolean;
    };
    expect(Object.keys(schema.properties)).toEqual(['engine', 'traffic', 'report']);
    expect(schema.required ?? []).toEqual([]);
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties.engine.properties ?? {})).toContain('detokenization');
    expect(Object.keys(schema.properties.traffic.properties ?? {})).toEqual(['source', 'load', 'stop']);
  });

  it('describes fields and gives their defaults', () => {
    const text = JSON.stringify(runConfigJsonSchema());
    expect(text).toContain('vLLM --max-num-seqs');
    const schema = runConfigJsonSchema() as unknown as JsonSchemaNode;
    const scheduler = schema.properties.engine.properties.workers.properties.aggregated.properties.scheduler;
    // The engine's defaults fill the scheduler's limits after parsing: the schema gives none, and says so.
    expect(scheduler.properties.max_batched_tokens).toMatchObject({ type: 'integer', minimum: 1 });
    expect(scheduler.properties.max_batched_tokens).not.toHaveProperty('default');
    expect(text).toContain('data/engine-defaults.yaml');
    const source = schema.properties.traffic.properties.source as unknown as { anyOf?: unknown[]; oneOf?: unknown[] };
    expect(JSON.stringify(source)).toContain('"default":1024');
  });

  it('lists every load type as one option of traffic.load', () => {
    const schema = runConfigJsonSchema() as unknown as JsonSchemaNode;
    const load = schema.properties.traffic.properties.load;
    const types = load.oneOf.map((option) => option.properties.type.const);
    expect(types).toEqual(['concurrency', 'poisson', 'constant_rate', 'trace_timestamps']);
  });

  it('says that traffic.stop takes exactly one condition, 100 requests when absent', () => {
    const schema = runConfigJsonSchema() as unknown as JsonSchemaNode;
    expect(schema.properties.traffic.properties.stop).toMatchObject({
      default: { requests: 100 },
      minProperties: 1,
      maxProperties: 1,
      description: 'Exactly one stop condition.',
    });
  });

  it('describes every field but the type keys, the blocks that only group others and the efficiency overrides', () => {
    const undescribed: string[] = [];
    const walk = (node: Partial<JsonSchemaNode> & { anyOf?: JsonSchemaNode[] }, path: string): void => {
      for (const [key, child] of Object.entries(node.properties ?? {})) {
        const at = path === '' ? key : `${path}.${key}`;
        if (!('description' in child)) undescribed.push(at);
        walk(child, at);
      }
      for (const option of [...(node.oneOf ?? []), ...(node.anyOf ?? [])]) walk(option, path);
    };
    walk(runConfigJsonSchema(), '');
    const unexpected = undescribed.filter(
      (path) =>
        !/(^|\.)type$/.test(path) &&
        !/\.efficiency\.[a-z0-9_]+$/.test(path) &&
        !/^(engine|traffic|report)$|\.(scheduler|kv_cache)$/.test(path),
    );
    expect(unexpected).toEqual([]);
    // The walk reached every role's efficiency overrides (15 factors x 3 roles) and type keys.
    expect(undescribed.filter((path) => path.includes('.efficiency.'))).toHaveLength(45);
    expect(undescribed.filter((path) => path.endsWith('.type')).length).toBeGreaterThan(20);
  });
});
