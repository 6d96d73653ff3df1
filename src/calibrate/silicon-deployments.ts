/**
 * Deployments of the silicon sample (`data/silicon/aic-silicon-sample.csv`): rows of one
 * aggregated deployment measured in one campaign, one row per concurrency. A deployment is the
 * rows that agree on backend, version, model, system, precision, quantization, ISL, OSL and
 * parallelism, and come from the same measurement series (the `config_id` of a database dump,
 * else the source file and image named in `silicon_data_source`). Series with two different
 * values at one concurrency are left out (they are two runs, not one curve), and so are series
 * whose ITL falls by more than 15 % from one concurrency to the next: at fixed ISL/OSL a decode
 * step does not get cheaper with a larger batch, so such a series mixes runs of different
 * configurations under one set of columns (3 of the 311 series with 5+ points and OSL <= 1024,
 * e.g. the GB200 DeepSeek-R1 rows whose ITL goes 11.9, 7.7, 14.8, 9.6 ms at concurrency 128..512).
 */
import { PRECISIONS } from '../catalog/schema.js';
import { InputError } from '../config/errors.js';
import type { EfficiencyFactors } from '../catalog/efficiency.js';
import type { Precision, RunConfig } from '../config/types.js';
import { parseRunConfig } from '../config/load.js';
import type { ScorePoint } from '../score/points.js';
import { isMixtureOfExperts } from './model-family.js';
import { readTable } from './read-table.js';

export interface SiliconDeployment {
  /** Short stable label: `vllm 0.19.0 MiniMax-M2.5 b200_sxm fp8 1024/1024 tp2 cfg633`. */
  label: string;
  backend: string;
  /** Short model name (`DeepSeek-R1`) and the sample's full `model_path`. */
  model: string;
  modelPath: string;
  system: string;
  /** The sample's precision column (bf16, fp8, fp4, int4; '' when not given). */
  precision: string;
  /** Expert-parallel size of the MoE layers (moe_ep_size; 1 when not given). */
  expert: number;
  isl: number;
  osl: number;
  tp: number;
  attentionDp: number;
  moe: boolean;
  series: string;
  /** Points by ascending concurrency. */
  points: ScorePoint[];
}

const GROUP_COLUMNS = [
  'backend',
  'backend_version',
  'model_path',
  'system',
  'precision',
  'mode',
  'isl',
  'osl',
  'gemm_quant_mode',
  'moe_quant_mode',
  'tp_size',
  'pp_size',
  'attention_dp_size',
  'moe_tp_size',
  'moe_ep_size',
] as const;

/** A drop of ITL larger than this share from one concurrency to the next marks a mixed series. */
export const MIXED_SERIES_ITL_DROP = 0.15;

function seriesOf(source: string): string {
  const fields = new Map<string, string>();
  for (const part of source.split(';')) {
    const equals = part.indexOf('=');
    if (equals > 0) fields.set(part.slice(0, equals).trim(), part.slice(equals + 1).trim());
  }
  if (fields.has('config_id')) return `cfg${fields.get('config_id')}`;
  const file = (fields.get('source_file') ?? '').split('/').pop() ?? '';
  const image = (fields.get('image') ?? '').split(':').pop() ?? '';
  return [file, image].filter((s) => s !== '').join(' ');
}

/** Columns every row needs (the others default: parallelism 1, no series). */
const REQUIRED_COLUMNS = [
  'backend',
  'model_path',
  'system',
  'mode',
  'isl',
  'osl',
  'batch_size',
  'silicon_ttft_ms',
  'silicon_tpot_ms',
] as const;

export function readSiliconDeployments(file: string, minPoints = 5): SiliconDeployment[] {
  const table = readTable(file);
  const absent = REQUIRED_COLUMNS.filter((column) => !table.columns.includes(column));
  if (absent.length > 0) {
    throw new InputError(
      file,
      1,
      `has no column ${absent.map((c) => `"${c}"`).join(', ')}: measured points are read in the silicon sample's columns (${REQUIRED_COLUMNS.join(', ')})`,
    );
  }
  const groups = new Map<string, Array<{ c: number; ttft: number; itl: number; line: number; cells: Record<string, string> }>>();
  for (const row of table.rows) {
    if (row.cells.mode !== 'agg') continue;
    const key = [...GROUP_COLUMNS.map((c) => row.cells[c]), seriesOf(row.cells.silicon_data_source ?? '')].join('|');
    const list = groups.get(key) ?? [];
    list.push({
      c: Number(row.cells.batch_size),
      ttft: Number(row.cells.silicon_ttft_ms),
      itl: Number(row.cells.silicon_tpot_ms),
      line: row.line,
      cells: row.cells,
    });
    groups.set(key, list);
  }
  const out: SiliconDeployment[] = [];
  for (const [, rows] of groups) {
    const byC = new Map<number, (typeof rows)[number]>();
    let conflict = false;
    for (const row of rows) {
      const earlier = byC.get(row.c);
      if (earlier && (earlier.ttft !== row.ttft || earlier.itl !== row.itl)) conflict = true;
      if (!earlier) byC.set(row.c, row);
    }
    if (conflict || byC.size < minPoints) continue;
    const sorted = [...byC.values()].sort((a, b) => a.c - b.c);
    if (sorted.some((r) => !(r.ttft > 0 && r.itl > 0 && r.c > 0))) continue;
    if (sorted.some((r, i) => i > 0 && r.itl < sorted[i - 1].itl * (1 - MIXED_SERIES_ITL_DROP))) continue;
    const cells = sorted[0].cells;
    const isl = Number(cells.isl);
    const osl = Number(cells.osl);
    const tp = Number(cells.tp_size) || 1;
    // The worker's GPUs are the attention ranks' (tp x attention DP) or, where the sample leaves
    // attention DP out, the MoE layers' (moe_tp x moe_ep), whichever is larger.
    const moeGpus = (Number(cells.moe_tp_size) || 1) * (Number(cells.moe_ep_size) || 1);
    const attentionDp = Math.max(Number(cells.attention_dp_size) || 1, Math.floor(moeGpus / tp));
    const model = cells.model_path.split('/').pop() ?? cells.model_path;
    const series = seriesOf(cells.silicon_data_source ?? '');
    const label = `${cells.backend} ${cells.backend_version || '-'} ${model} ${cells.system} ${cells.precision || '-'} ${isl}/${osl} tp${tp}${attentionDp > 1 ? ` adp${attentionDp}` : ''}${Number(cells.moe_ep_size) > 1 ? ` ep${cells.moe_ep_size}` : ''} ${series}`;
    out.push({
      label,
      backend: cells.backend,
      model,
      modelPath: cells.model_path,
      system: cells.system,
      precision: cells.precision,
      expert: Number(cells.moe_ep_size) || 1,
      isl,
      osl,
      tp,
      attentionDp,
      moe: isMixtureOfExperts(cells.model_path),
      series,
      points: sorted.map((r) => ({
        source: `${file}:${r.line}`,
        key: { concurrency: r.c, isl, osl },
        metrics: { time_to_first_token: { avg: r.ttft }, inter_token_latency: { avg: r.itl } },
      })),
    });
  }
  return out.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/**
 * A base run config for a deployment: its parallelism, vLLM-like scheduler limits, unlimited KV;
 * with `backend`, the scheduler of that engine (docs/replay-model.md, "Schedulers").
 */
export function deploymentBaseConfig(
  d: Pick<SiliconDeployment, 'model' | 'system' | 'tp' | 'attentionDp' | 'isl' | 'osl'>,
  scheduler: { maxBatchedTokens?: number; backend?: string } = {},
): RunConfig {
  return parseRunConfig(
    {
      engine: {
        model: d.model,
        hardware: d.system,
        ...(scheduler.backend !== undefined ? { backend: scheduler.backend } : {}),
        workers: {
          aggregated: {
            parallelism: { tensor: d.tp, attention_data: d.attentionDp },
            scheduler: { max_batched_tokens: scheduler.maxBatchedTokens ?? 8192, max_sequences: 256, chunked_prefill: true },
            kv_cache: { capacity: { type: 'unlimited' } },
          },
        },
      },
      traffic: { source: { type: 'synthetic', input_tokens: d.isl, output_tokens: d.osl } },
    },
    `${d.model} base`,
  );
}

/**
 * A measured TTFT that grows more than this many times as fast as the concurrency from the next
 * lower point (3x for a doubling) marks where a closed-loop sweep saturates: requests wait for
 * admission (KV cache exhausted, or a running-request limit below the concurrency), so the
 * engine no longer runs a batch of C. Unsaturated, TTFT grows at most about as fast as C.
 */
export const SATURATION_TTFT_JUMP = 1.5;

/**
 * Concurrencies from which a series is saturated (measured values only: the first point whose
 * TTFT ratio to its predecessor's exceeds SATURATION_TTFT_JUMP x their concurrency ratio, and
 * every point above it).
 */
export function saturatedConcurrencies(points: readonly ScorePoint[]): number[] {
  const rows = points
    .map((p) => ({
      c: Number(p.key.concurrency),
      ttft: Number((p.metrics.time_to_first_token as Record<string, number> | undefined)?.avg),
    }))
    .filter((r) => Number.isFinite(r.c) && r.ttft > 0)
    .sort((a, b) => a.c - b.c);
  const from = rows.findIndex((r, i) => i > 0 && r.ttft / rows[i - 1].ttft > SATURATION_TTFT_JUMP * (r.c / rows[i - 1].c));
  return from < 0 ? [] : rows.slice(from).map((r) => r.c);
}

/** The silicon sample's precision column as a run config's `engine.precision` (absent: the checkpoint's own). */
export function siliconPrecision(precision: string): Precision | undefined {
  return (PRECISIONS as readonly string[]).includes(precision) ? (precision as Precision) : undefined;
}

/**
 * A base run config predicting a deployment from the catalog alone: its model, GPU, backend,
 * precision and parallelism, roofline timing (the catalog's efficiency factors, or `efficiency`),
 * KV capacity from memory, and a scheduler that admits the whole concurrency.
 */
export function catalogBaseConfig(
  d: Pick<SiliconDeployment, 'modelPath' | 'system' | 'backend' | 'precision' | 'tp' | 'attentionDp' | 'expert' | 'isl' | 'osl'>,
  efficiency?: Partial<EfficiencyFactors>,
): RunConfig {
  const precision = siliconPrecision(d.precision);
  const gpus = d.tp * d.attentionDp;
  return parseRunConfig(
    {
      engine: {
        model: d.modelPath,
        hardware: d.system,
        backend: d.backend,
        ...(precision !== undefined ? { precision } : {}),
        workers: {
          aggregated: {
            parallelism: { tensor: d.tp, attention_data: d.attentionDp, expert: gpus % d.expert === 0 ? d.expert : 1 },
            scheduler: { max_batched_tokens: 8192, max_sequences: 256, chunked_prefill: true },
            kv_cache: { capacity: { type: 'auto' } },
            timing: { type: 'roofline', ...(efficiency !== undefined ? { efficiency } : {}) },
          },
        },
      },
      traffic: { source: { type: 'synthetic', input_tokens: d.isl, output_tokens: d.osl } },
    },
    `${d.modelPath} on ${d.system} (catalog)`,
  );
}
