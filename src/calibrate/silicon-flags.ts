/**
 * The engine flags the silicon sample's InferenceX rows were launched with
 * (`data/silicon/inferencex-flags.yaml`, read from InferenceX's benchmark scripts): the first row
 * of the file whose keys match a measured row gives its flags, and the parallelism that ran where
 * the sample's columns say otherwise. A value that depends on the point is a linear form in its
 * ISL, OSL and client concurrency.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { packageRoot } from '../catalog/load.js';
import { ConfigError, makeConfigIssue } from '../config/errors.js';
import { readYamlFile } from '../config/yaml.js';

const linear = z.union([
  z.number().min(0),
  z.strictObject({ isl: z.number().optional(), conc: z.number().optional(), osl: z.number().optional(), plus: z.number().optional() }),
]);
export type LinearValue = z.output<typeof linear>;

const rowSchema = z.strictObject({
  model: z.string(),
  system: z.string(),
  backend: z.string(),
  precision: z.string(),
  match: z
    .strictObject({
      measured_from: z.string().optional(),
      measured_to: z.string().optional(),
      image: z.string().optional(),
      tp_size: z.array(z.number()).optional(),
      moe_ep_size: z.array(z.number()).optional(),
      attention_dp_size: z.array(z.number()).optional(),
      isl: z.array(z.number()).optional(),
      osl: z.array(z.number()).optional(),
      concurrency: z.tuple([z.number(), z.number()]).optional(),
    })
    .optional(),
  parallelism: z.strictObject({ tensor: z.int().positive(), attention_dp: z.int().positive(), expert: z.int().positive() }).optional(),
  flags: z.strictObject({
    max_sequences: linear.optional(),
    max_batched_tokens: linear.optional(),
    memory_fraction: z.number().gt(0).max(1).optional(),
    kv_cache_dtype: z.enum(['fp8', 'bf16']).optional(),
    block_size: z.int().positive().optional(),
    prefix_caching: z.boolean().optional(),
    chunked_prefill: z.boolean().optional(),
    cuda_graph_max_batch: linear.optional(),
    cuda_graph_padding: z.boolean().optional(),
    speculative: z.enum(['none', 'mtp', 'eagle']),
    stream_interval: z.int().positive().optional(),
    max_prefill_tokens: linear.optional(),
    unusable: z.string().optional(),
  }),
  source: z.record(z.string(), z.string()),
});
export type FlagRow = z.output<typeof rowSchema>;

let cached: FlagRow[] | undefined;

export function flagsFile(): string {
  return join(packageRoot(), 'data', 'silicon', 'inferencex-flags.yaml');
}

export function loadFlagRows(file = flagsFile()): FlagRow[] {
  if (file === flagsFile() && cached !== undefined) return cached;
  let rows: FlagRow[] = [];
  if (existsSync(file)) {
    const parsed = z.strictObject({ rows: z.array(rowSchema) }).safeParse(readYamlFile(file, file, 'data file'), { reportInput: true });
    if (!parsed.success) {
      throw new ConfigError(parsed.error.issues.map((issue) => makeConfigIssue(file, issue.path.map(String).join('.'), issue.message)));
    }
    rows = parsed.data.rows;
  }
  if (file === flagsFile()) cached = rows;
  return rows;
}

/** A measured row as the flags file matches it. */
export interface FlagQuery {
  model: string;
  system: string;
  backend: string;
  precision: string;
  /** `measured=` (YYYY-MM-DD) or ''. */
  measured: string;
  image: string;
  tpSize: number;
  moeEpSize: number;
  attentionDpSize: number;
  isl: number;
  osl: number;
  concurrency: number;
}

/** The first row of the file matching a measured row, or undefined. */
export function flagsOf(q: FlagQuery, rows: readonly FlagRow[] = loadFlagRows()): FlagRow | undefined {
  return rows.find((r) => {
    if (r.model !== q.model || r.system !== q.system || r.backend !== q.backend || r.precision !== q.precision) return false;
    const m = r.match ?? {};
    if (m.measured_from !== undefined && (q.measured === '' || q.measured < m.measured_from)) return false;
    if (m.measured_to !== undefined && (q.measured === '' || q.measured > m.measured_to)) return false;
    if (m.image !== undefined && !q.image.includes(m.image)) return false;
    if (m.tp_size !== undefined && !m.tp_size.includes(q.tpSize)) return false;
    if (m.moe_ep_size !== undefined && !m.moe_ep_size.includes(q.moeEpSize)) return false;
    if (m.attention_dp_size !== undefined && !m.attention_dp_size.includes(q.attentionDpSize)) return false;
    if (m.isl !== undefined && !m.isl.includes(q.isl)) return false;
    if (m.osl !== undefined && !m.osl.includes(q.osl)) return false;
    if (m.concurrency !== undefined && (q.concurrency < m.concurrency[0] || q.concurrency > m.concurrency[1])) return false;
    return true;
  });
}

/** A flag's value at a point: a number, or a x isl + b x conc + c x osl + d. */
export function valueAt(value: LinearValue, point: { isl: number; osl: number; concurrency: number }): number {
  if (typeof value === 'number') return value;
  return (value.isl ?? 0) * point.isl + (value.conc ?? 0) * point.concurrency + (value.osl ?? 0) * point.osl + (value.plus ?? 0);
}
