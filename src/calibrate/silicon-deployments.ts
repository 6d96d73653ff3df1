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
 *
 * How each row was measured (docs/hardware-and-models.md, "How the sample was measured"):
 * - the client concurrency is `silicon_concurrency=` of the source text, not `batch_size`, which
 *   the sample divides by the replicas and attention-DP ranks;
 * - InferenceX rows (a database dump, or an export with `measured=`) were driven by vLLM's
 *   benchmark client with `--random-range-ratio 0.8` (lengths uniform in [0.8 L, L]), 10 x C
 *   requests, all C sent at once; from 2026-01-21 a warm-up of 2 x C requests ran first and was
 *   drained, before that none (the first burst met a cold engine);
 * - the gap-analysis campaign's rows (source files under `aic-auto-gap-analysis/`) name no
 *   protocol; they are read as AIPerf's defaults (`--isl-stddev 0`: fixed lengths) with 10 x C
 *   requests after a drained warm-up, every prompt its own (`--gap-entries N` of the accuracy
 *   benchmark replays AIPerf's dataset of N repeated prompts instead), on deployments
 *   aiconfigurator generated (`measuredCaps`; TensorRT-LLM without block reuse), an assumption
 *   the docs state. Other files named `*-gap-analysis.csv` hold InferenceX rows
 *   (most of their values equal InferenceX's to two decimals) and are read as InferenceX's.
 */
import { PRECISIONS } from '../catalog/schema.js';
import { isVersion } from '../catalog/engine-defaults.js';
import { InputError } from '../config/errors.js';
import type { EfficiencyFactors } from '../catalog/efficiency.js';
import type { Precision, RunConfig } from '../config/types.js';
import { parseRunConfig } from '../config/load.js';
import type { ScorePoint } from '../score/points.js';
import { loadDisaggWorkers, workersFromConfig, type ConfigWorkers } from './disagg-workers.js';
import { flagsFromRecipe, loadDisaggDbFlags, loadDisaggFlags, type FlagFileRow, type PoolFlags } from './disagg-flags.js';
import { isMixtureOfExperts } from './model-family.js';
import { readTable } from './read-table.js';

/** How a deployment's points were measured, as far as its source says (docs/hardware-and-models.md). */
export interface SiliconProtocol {
  /** Where the rows come from. */
  source: 'inferencex' | 'gap-analysis' | 'unknown';
  /** The load generator: vLLM's benchmark client (InferenceX) or AIPerf (assumed for the others). */
  generator: 'bench_serving' | 'aiperf';
  /** Lengths drawn in [ratio x L, L]; 1 = fixed. */
  rangeRatio: number;
  /** Requests measured per client. */
  requestsPerClient: number;
  /** Distinct prompts the requests repeated (AIPerf's dataset entries); null: every request its own. */
  datasetEntries: number | null;
  /** Output lengths' standard deviation as a share of the OSL (an experiment of the accuracy bench); absent: none. */
  outputSpread?: number;
  /** Output lengths' standard deviation in tokens, whatever the OSL (an experiment of the accuracy bench); absent: none. */
  outputSpreadTokens?: number;
  /** The container image the source names ('' when none). */
  image: string;
}

/** One measured point's own facts: its client count and when it was measured. */
export interface SiliconPointInfo {
  /** Clients of the closed loop (`silicon_concurrency`, else batch_size x replicas x attention DP). */
  clients: number;
  /** `batch_size` of the row (clients per replica and attention-DP rank). */
  batchSize: number;
  /** `measured=` date (YYYY-MM-DD), or '' when the source does not say. */
  measured: string;
  /** Whether a drained warm-up ran before the measured requests: by the measured date; null when unknown. */
  warmedUp: boolean | null;
  line: number;
  /** A disaggregated row without worker counts: those InferenceX's master config gives it (data/silicon/disagg-workers.csv). */
  configWorkers?: ConfigWorkers;
  /**
   * A disaggregated row's pools' launch flags, from the recipe its config entry names, that recipe's
   * name or the entry's settings (an export row: data/silicon/disagg-flags.csv; a database-dump row:
   * data/silicon/disagg-db-flags.csv).
   */
  recipe?: FlagFileRow;
}

export interface SiliconDeployment {
  /** Short stable label: `vllm 0.19.0 MiniMax-M2.5 b200_sxm fp8 1024/1024 tp2 cfg633`. */
  label: string;
  backend: string;
  /** The sample's backend_version ('' when not given). */
  version: string;
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
  /** Engine replicas the clients were spread over (clients / (batch_size x attention DP) where the sample divides). */
  replicas: number;
  /** The sample's parallelism columns as written (some sources write tp_size as tp x ep). */
  columns: { tpSize: number; moeEpSize: number; attentionDpSize: number };
  moe: boolean;
  series: string;
  protocol: SiliconProtocol;
  /**
   * A disaggregated deployment's prefill and decode pools (`mode: disagg` rows); absent for an
   * aggregated one. The deployment's own tp, attentionDp, expert and replicas are then the decode
   * pool's.
   */
  pools?: { prefill: SiliconPool; decode: SiliconPool };
  /**
   * Disaggregated series only: why its points are more than one run's curve (two values at one
   * concurrency, or an ITL that falls as the concurrency rises), null when they are one curve.
   * Such a series is kept: each point is still a measured deployment.
   */
  mixed?: string | null;
  /** Points by ascending client concurrency (`key.concurrency` is the client count). */
  points: ScorePoint[];
  /** Per point, in the same order: its client count, batch size and measurement date. */
  info: SiliconPointInfo[];
}

/** One pool of a disaggregated deployment, from the sample's `prefill_*` or `decode_*` columns. */
export interface SiliconPool {
  /**
   * Workers of the pool (`*_num_workers`; where the rows leave it empty, the count
   * data/silicon/disagg-workers.csv gives them, else 1).
   */
  workers: number;
  /** Whether the rows themselves give the worker counts. */
  workersGiven: boolean;
  /** Where the worker counts come from: the rows, InferenceX's master config, or nowhere (1 assumed). */
  workersFrom: WorkersFrom;
  tp: number;
  attentionDp: number;
  expert: number;
}

/** Where a disaggregated deployment's worker counts come from (`SiliconPool.workersFrom`). */
export type WorkersFrom = 'row' | 'inferencex-config' | 'unknown';

/** A series the reader leaves out, with its rows and the reason (`readSiliconDeployments`'s `leftOut`). */
export interface LeftOutSeries {
  label: string;
  lines: number[];
  reason: string;
}

/** The day InferenceX's benchmark runs started with a warm-up of 2 x C requests (InferenceX d053ae24). */
export const WARMUP_FROM = '2026-01-21';

/**
 * The fields of a source text (`key=value` parts separated by `;`); the last part without `=`
 * other than the `db-dump/...` marker is kept under `''` (the image of a database dump).
 */
export function sourceFields(source: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const part of source.split(';')) {
    const text = part.trim();
    const equals = text.indexOf('=');
    if (equals > 0) fields.set(text.slice(0, equals).trim(), text.slice(equals + 1).trim());
    else if (text !== '' && !text.startsWith('db-dump/')) fields.set('', text);
  }
  return fields;
}

/** The measuring protocol of a row's source text (docs/hardware-and-models.md, "How the sample was measured"). */
export function protocolOf(source: string): SiliconProtocol {
  const fields = sourceFields(source);
  const file = fields.get('source_file') ?? '';
  const dump = source.trimStart().startsWith('db-dump/');
  const image = fields.get('image') ?? (dump ? (fields.get('') ?? '') : '');
  if (/aic-auto-gap-analysis\//.test(file)) {
    return { source: 'gap-analysis', generator: 'aiperf', rangeRatio: 1, requestsPerClient: 10, datasetEntries: null, image };
  }
  if (dump || /^\d{4}-\d{2}-\d{2}\.csv$/.test(file) || /^[^/]*-gap-analysis\.csv$/.test(file)) {
    return { source: 'inferencex', generator: 'bench_serving', rangeRatio: 0.8, requestsPerClient: 10, datasetEntries: null, image };
  }
  return { source: 'unknown', generator: 'aiperf', rangeRatio: 1, requestsPerClient: 10, datasetEntries: null, image };
}

/** A row's measurement date and warm-up regime. */
export function measuredOf(source: string): { measured: string; warmedUp: boolean | null } {
  const value = sourceFields(source).get('measured') ?? '';
  const day = /^(\d{4}-\d{2}-\d{2})/.exec(value)?.[1] ?? '';
  return { measured: day, warmedUp: day === '' ? null : day >= WARMUP_FROM };
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

/** The pools' columns a disaggregated row is grouped by as well. */
const POOL_COLUMNS = ['num_workers', 'tp_size', 'pp_size', 'attention_dp_size', 'moe_tp_size', 'moe_ep_size'] as const;
const DISAGG_GROUP_COLUMNS = (['prefill', 'decode'] as const).flatMap((role) => POOL_COLUMNS.map((c) => `${role}_${c}`));

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

/**
 * The deployments of the silicon sample. `mode` picks the aggregated rows (the default) or the
 * disaggregated ones (`mode: disagg`: a prefill and a decode pool, `SiliconDeployment.pools`;
 * the client concurrency is `silicon_concurrency=` as for aggregated rows, else decode_batch_size
 * x decode workers x decode attention DP). `leftOut`, when given, receives every series left out
 * and why (fewer than `minPoints` points, two values at one concurrency, a zero or missing value,
 * a mixed series). A disaggregated series without worker counts is split, once series repeating
 * others are left out, by the counts InferenceX's master config gives its rows
 * (`workersFile`, data/silicon/disagg-workers.csv by default; `splitByConfigWorkers`).
 */
export function readSiliconDeployments(
  file: string,
  minPoints = 5,
  options: { mode?: 'agg' | 'disagg'; leftOut?: LeftOutSeries[]; workersFile?: string; flagsFile?: string; dbFlagsFile?: string } = {},
): SiliconDeployment[] {
  const mode = options.mode ?? 'agg';
  const disagg = mode === 'disagg';
  const table = readTable(file);
  const absent = REQUIRED_COLUMNS.filter((column) => !table.columns.includes(column));
  if (absent.length > 0) {
    throw new InputError(
      file,
      1,
      `has no column ${absent.map((c) => `"${c}"`).join(', ')}: measured points are read in the silicon sample's columns (${REQUIRED_COLUMNS.join(', ')})`,
    );
  }
  interface Row {
    c: number;
    batch: number;
    ttft: number;
    itl: number;
    line: number;
    cells: Record<string, string>;
    workers?: ConfigWorkers;
    recipe?: FlagFileRow;
  }
  const groups = new Map<string, Row[]>();
  const workerRows = disagg ? loadDisaggWorkers(options.workersFile) : undefined;
  const flagRows = disagg ? loadDisaggFlags(options.flagsFile) : undefined;
  const dbFlagRows = disagg ? loadDisaggDbFlags(options.dbFlagsFile) : undefined;
  for (const row of table.rows) {
    if (row.cells.mode !== mode) continue;
    const cells = row.cells;
    const source = cells.silicon_data_source ?? '';
    const key = [
      ...GROUP_COLUMNS.map((c) => cells[c]),
      ...(disagg ? DISAGG_GROUP_COLUMNS.map((c) => cells[c]) : []),
      seriesOf(source),
    ].join('|');
    // A disaggregated row's batch is its decode worker's (its batch_size column is empty).
    const batch = Number(disagg ? cells.decode_batch_size : cells.batch_size);
    const clients = Number(sourceFields(source).get('silicon_concurrency'));
    const list = groups.get(key) ?? [];
    list.push({
      // The client count; where the source does not say, batch_size x attention DP (one replica;
      // disaggregated: the decode pool's batch x workers x attention DP).
      c:
        clients > 0
          ? clients
          : disagg
            ? batch * (Number(cells.decode_num_workers) || 1) * attentionDpOf(cells, 'decode_')
            : batch * attentionDpOf(cells),
      batch,
      ttft: Number(cells.silicon_ttft_ms),
      itl: Number(cells.silicon_tpot_ms),
      line: row.line,
      cells,
      workers: workerRows === undefined ? undefined : workersFromConfig(cells, sourceFields(source), workerRows),
      recipe:
        flagRows === undefined ? undefined : (flagsFromRecipe(cells, sourceFields(source), flagRows) ?? dbFlagRows?.get(cells.id ?? '')),
    });
    groups.set(key, list);
  }
  const out: SiliconDeployment[] = [];
  for (const [, rows] of groups) {
    // The columns grouped on are the same in every row of a group; the rest are taken from the
    // lowest concurrency's row once the rows are sorted.
    let cells = rows[0].cells;
    const isl = Number(cells.isl);
    const osl = Number(cells.osl);
    const model = cells.model_path.split('/').pop() ?? cells.model_path;
    const series = seriesOf(cells.silicon_data_source ?? '');
    const pools = disagg ? { prefill: poolOf(cells, 'prefill_'), decode: poolOf(cells, 'decode_') } : undefined;
    const leave = (reason: string) => options.leftOut?.push({ label: `${labelHead()} ${series}`, lines: rows.map((r) => r.line), reason });
    const labelHead = () =>
      pools === undefined
        ? `${cells.backend} ${cells.backend_version || '-'} ${model} ${cells.system} ${cells.precision || '-'} ${isl}/${osl} tp${Number(cells.tp_size) || 1}`
        : `${cells.backend} ${cells.backend_version || '-'} ${model} ${cells.system} ${cells.precision || '-'} ${isl}/${osl} ${poolLabel('P', pools.prefill)} ${poolLabel('D', pools.decode)}`;
    const byC = new Map<number, Row>();
    let conflict = false;
    for (const row of rows) {
      const earlier = byC.get(row.c);
      if (earlier && (earlier.ttft !== row.ttft || earlier.itl !== row.itl)) conflict = true;
      if (!earlier) byC.set(row.c, row);
    }
    // An aggregated series that is two runs under one set of columns is left out; a
    // disaggregated one is kept whole and marked (`mixed`): most disaggregated rows do not give
    // their worker counts, so configurations that differ only there share one set of columns,
    // and every point is still one measured deployment to predict.
    const twoRuns = 'two different values at one concurrency (two runs, not one curve)';
    const mixedDrop = `mixed series: ITL falls by more than ${MIXED_SERIES_ITL_DROP * 100} % from one concurrency to the next`;
    if (conflict && !disagg) {
      leave(twoRuns);
      continue;
    }
    if (byC.size < minPoints) {
      leave(`fewer than ${minPoints} concurrency points`);
      continue;
    }
    const sorted = (conflict ? [...rows] : [...byC.values()]).sort((a, b) => a.c - b.c || a.line - b.line);
    // A disaggregated row has no batch of its own where its source leaves the decode batch empty.
    if (sorted.some((r) => !(r.ttft > 0 && r.itl > 0 && r.c > 0 && (disagg || r.batch > 0)))) {
      leave('a zero or missing TTFT, ITL or concurrency');
      continue;
    }
    const dropping = sorted.some((r, i) => i > 0 && r.c > sorted[i - 1].c && r.itl < sorted[i - 1].itl * (1 - MIXED_SERIES_ITL_DROP));
    if (dropping && !disagg) {
      leave(mixedDrop);
      continue;
    }
    const mixed = conflict ? twoRuns : dropping ? mixedDrop : null;
    cells = sorted[0].cells;
    const source = cells.silicon_data_source ?? '';
    const tp = pools?.decode.tp ?? (Number(cells.tp_size) || 1);
    const attentionDp = pools?.decode.attentionDp ?? attentionDpOf(cells);
    // Replicas: where the sample divided the clients by more than the attention-DP ranks.
    const ratio = sorted[0].c / (sorted[0].batch * attentionDp);
    const replicas =
      pools !== undefined
        ? pools.decode.workers
        : Number.isInteger(ratio) && ratio > 1 && sorted.every((r) => r.c === r.batch * attentionDp * ratio)
          ? ratio
          : 1;
    const label =
      pools !== undefined
        ? `${labelHead()} ${series}`
        : `${cells.backend} ${cells.backend_version || '-'} ${model} ${cells.system} ${cells.precision || '-'} ${isl}/${osl} tp${tp}${attentionDp > 1 ? ` adp${attentionDp}` : ''}${Number(cells.moe_ep_size) > 1 ? ` ep${cells.moe_ep_size}` : ''}${replicas > 1 ? ` x${replicas}` : ''} ${series}`;
    out.push({
      label,
      backend: cells.backend,
      version: cells.backend_version ?? '',
      model,
      modelPath: cells.model_path,
      system: cells.system,
      precision: cells.precision,
      expert: pools?.decode.expert ?? (Number(cells.moe_ep_size) || 1),
      isl,
      osl,
      tp,
      attentionDp,
      replicas,
      columns: {
        tpSize: Number(cells.tp_size) || 1,
        moeEpSize: Number(cells.moe_ep_size) || 1,
        attentionDpSize: Number(cells.attention_dp_size) || 1,
      },
      moe: isMixtureOfExperts(cells.model_path),
      series,
      protocol: protocolOf(source),
      ...(pools !== undefined ? { pools, mixed } : {}),
      points: sorted.map((r) => ({
        source: `${file}:${r.line}`,
        key: { concurrency: r.c, isl, osl },
        metrics: { time_to_first_token: { avg: r.ttft }, inter_token_latency: { avg: r.itl } },
      })),
      info: sorted.map((r) => ({
        clients: r.c,
        batchSize: r.batch,
        line: r.line,
        ...measuredOf(r.cells.silicon_data_source ?? ''),
        ...(r.workers !== undefined ? { configWorkers: r.workers } : {}),
        ...(r.recipe !== undefined ? { recipe: r.recipe } : {}),
      })),
    });
  }
  out.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  const kept = withoutDuplicates(out, options.leftOut);
  return disagg ? splitByConfigWorkers(withoutRepeatedPoints(kept, options.leftOut)) : kept;
}

/** Why a disaggregated series is more than one run's curve (`SiliconDeployment.mixed`), null when it is one. */
function mixedOf(points: readonly ScorePoint[]): string | null {
  const rows = points.map((p) => ({
    c: Number(p.key.concurrency),
    ttft: p.metrics.time_to_first_token.avg,
    itl: Number(p.metrics.inter_token_latency.avg),
  }));
  if (rows.some((r, i) => i > 0 && r.c === rows[i - 1].c && (r.ttft !== rows[i - 1].ttft || r.itl !== rows[i - 1].itl))) {
    return 'two different values at one concurrency (two runs, not one curve)';
  }
  if (rows.some((r, i) => i > 0 && r.c > rows[i - 1].c && r.itl < rows[i - 1].itl * (1 - MIXED_SERIES_ITL_DROP))) {
    return `mixed series: ITL falls by more than ${MIXED_SERIES_ITL_DROP * 100} % from one concurrency to the next`;
  }
  return null;
}

/**
 * A pool whose config entry ran attention data parallelism: SGLang's and TensorRT-LLM's
 * DP attention puts one attention rank on each GPU of the worker (attention TP 1, attention DP =
 * the worker's GPUs), as aiconfigurator's InferenceX adapter reads it; vLLM's keeps the row's
 * tensor-parallel size per rank. Without it, the pool as the row gives it.
 */
function withDpAttention(pool: SiliconPool, dpAttention: boolean, backend: string): SiliconPool {
  if (!dpAttention || backend === 'vllm' || pool.attentionDp > 1) return pool;
  return { ...pool, tp: 1, attentionDp: pool.tp * pool.attentionDp };
}

/**
 * A disaggregated series without worker counts, split by the counts InferenceX's master config
 * gives its points (`SiliconPointInfo.configWorkers`): one deployment per pair of counts and
 * attention-DP settings, its pools marked `inferencex-config` (with the entry's attention DP), and one of the points it gives none (`unknown`, as before).
 * The parts keep the series' order of points; whether each is still mixed is decided again.
 * Done after the series repeating others are left out, so that what is left out does not depend
 * on the counts.
 */
function splitByConfigWorkers(deployments: SiliconDeployment[]): SiliconDeployment[] {
  const out: SiliconDeployment[] = [];
  for (const d of deployments) {
    if (d.pools === undefined || d.pools.decode.workersFrom !== 'unknown' || d.info.every((i) => i.configWorkers === undefined)) {
      out.push(d);
      continue;
    }
    const parts = new Map<string, number[]>();
    d.info.forEach((info, i) => {
      const w = info.configWorkers;
      const key = w === undefined ? '' : `${w.prefill}/${w.decode}/${w.prefillDpAttention}/${w.decodeDpAttention}`;
      parts.set(key, [...(parts.get(key) ?? []), i]);
    });
    for (const [key, indices] of parts) {
      const points = indices.map((i) => d.points[i]);
      const info = indices.map((i) => d.info[i]);
      const w = info[0].configWorkers;
      const pools =
        key === '' || w === undefined || d.pools === undefined
          ? d.pools
          : {
              prefill: {
                ...withDpAttention(d.pools.prefill, w.prefillDpAttention, d.backend),
                workers: w.prefill,
                workersFrom: 'inferencex-config' as const,
              },
              decode: {
                ...withDpAttention(d.pools.decode, w.decodeDpAttention, d.backend),
                workers: w.decode,
                workersFrom: 'inferencex-config' as const,
              },
            };
      if (pools === undefined) continue;
      const label = `${d.backend} ${d.version || '-'} ${d.model} ${d.system} ${d.precision || '-'} ${d.isl}/${d.osl} ${poolLabel('P', pools.prefill)} ${poolLabel('D', pools.decode)} ${d.series}`;
      out.push({ ...d, label, replicas: pools.decode.workers, pools, mixed: mixedOf(points), points, info });
    }
  }
  return out.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/**
 * The same measurements listed twice under two names (the sample's database dump names some
 * DeepSeek-R1 runs of its exports DeepSeek-V3; files named `*-gap-analysis.csv` repeat InferenceX
 * rows rounded to two decimals): a deployment whose engine, GPU, precision, lengths and
 * parallelism equal an earlier one's (in label order) and that shares two or more points with it
 * at TTFT and ITL equal to two decimals is left out.
 */
function withoutDuplicates(deployments: SiliconDeployment[], leftOut?: LeftOutSeries[]): SiliconDeployment[] {
  const seen = new Map<string, SiliconDeployment[]>();
  const kept: SiliconDeployment[] = [];
  for (const d of deployments) {
    const key = [d.backend, d.system, d.precision, d.isl, d.osl, d.tp, d.attentionDp, d.replicas, JSON.stringify(d.pools ?? null)].join(
      '|',
    );
    const earlier = seen.get(key) ?? [];
    // Equal to two decimals: some files round what others keep in full.
    const same = (a: number, b: number) => Math.abs(a - b) <= 0.006;
    const shared = (e: SiliconDeployment) =>
      e.points.filter((p) =>
        d.points.some(
          (q) =>
            q.key.concurrency === p.key.concurrency &&
            same(Number(q.metrics.time_to_first_token.avg), Number(p.metrics.time_to_first_token.avg)) &&
            same(Number(q.metrics.inter_token_latency.avg), Number(p.metrics.inter_token_latency.avg)),
        ),
      ).length;
    const twin = earlier.find((e) => shared(e) >= 2);
    if (twin !== undefined) {
      leftOut?.push({ label: d.label, lines: d.info.map((i) => i.line), reason: `the same measurements as ${twin.label}` });
      continue;
    }
    earlier.push(d);
    seen.set(key, earlier);
    kept.push(d);
  }
  return kept;
}

/**
 * Disaggregated points that repeat a point of a series giving its worker counts: the exports
 * list again, without worker counts (and some under DeepSeek-R1 where the database dump says
 * DeepSeek-V3), points of the database dump. A point of a series without worker counts whose
 * concurrency, TTFT and ITL (to two decimals) equal a point of a series with them, of the same
 * engine, GPU, precision and lengths, is left out (said in `leftOut`), and the series with it
 * when none of its points remain. A point left out that has a launch recipe
 * (`SiliconPointInfo.recipe`) passes it to the point it repeats when the recipe's config entry has
 * that point's worker counts (and no other point repeating it has a recipe of other flags).
 */
function withoutRepeatedPoints(deployments: SiliconDeployment[], leftOut?: LeftOutSeries[]): SiliconDeployment[] {
  const same = (a: number, b: number) => Math.abs(a - b) <= 0.006;
  const shape = (d: SiliconDeployment) => [d.backend, d.system, d.precision, d.isl, d.osl].join('|');
  const given = deployments.filter((d) => d.pools?.decode.workersGiven === true);
  // Recipes the left-out points pass to the points they repeat (null: two that differ, none passed).
  const passed = new Map<SiliconDeployment, Map<number, FlagFileRow | null>>();
  const kept: SiliconDeployment[] = [];
  for (const d of deployments) {
    if (d.pools?.decode.workersGiven !== false) {
      kept.push(d);
      continue;
    }
    const keep: number[] = [];
    const repeats = new Map<string, number[]>();
    d.points.forEach((p, i) => {
      let at = -1;
      const twin = given.find(
        (e) =>
          shape(e) === shape(d) &&
          (at = e.points.findIndex(
            (q) =>
              q.key.concurrency === p.key.concurrency &&
              same(Number(q.metrics.time_to_first_token.avg), Number(p.metrics.time_to_first_token.avg)) &&
              same(Number(q.metrics.inter_token_latency.avg), Number(p.metrics.inter_token_latency.avg)),
          )) >= 0,
      );
      if (twin === undefined) {
        keep.push(i);
        return;
      }
      repeats.set(twin.label, [...(repeats.get(twin.label) ?? []), d.info[i].line]);
      // The repeated point ran the recipe of this one when the recipe's entry has its worker counts.
      const { recipe, configWorkers: w } = d.info[i];
      if (recipe === undefined || w === undefined || w.prefill !== twin.pools?.prefill.workers || w.decode !== twin.pools.decode.workers)
        return;
      const byPoint = passed.get(twin) ?? new Map<number, FlagFileRow | null>();
      const earlier = byPoint.get(at);
      byPoint.set(
        at,
        earlier === undefined || (earlier !== null && JSON.stringify(earlier.flags) === JSON.stringify(recipe.flags)) ? recipe : null,
      );
      passed.set(twin, byPoint);
    });
    for (const [label, lines] of repeats) leftOut?.push({ label: d.label, lines, reason: `the same measurements as ${label}` });
    if (keep.length === d.points.length) kept.push(d);
    else if (keep.length > 0) kept.push({ ...d, points: keep.map((i) => d.points[i]), info: keep.map((i) => d.info[i]) });
  }
  return kept.map((d) => {
    const byPoint = passed.get(d);
    if (byPoint === undefined) return d;
    return {
      ...d,
      info: d.info.map((info, j) => {
        const recipe = byPoint.get(j);
        return recipe == null || info.recipe !== undefined ? info : { ...info, recipe };
      }),
    };
  });
}

/** TTFT above which a flat-while-ITL-rises pair marks a cold-start stall, ms. */
export const COLD_STALL_MIN_TTFT_MS = 2000;

/**
 * Points no engine model can explain, reported apart by the accuracy benchmark: cold-start
 * stalls. A row measured without a warm-up (before WARMUP_FROM) met a cold engine, and a one-off
 * stall S (compilation, autotuning) spread over 10 x C requests adds about S / 10 to the mean
 * TTFT whatever C is. Rule, on measured values only: two cold points of a series at
 * concurrencies c and c' >= 2c where the TTFT at c' is at most 1.25 x the TTFT at c (flat or
 * falling) while the ITL at c' is at least 1.2 x the ITL at c (the batch grew): each of the two
 * whose TTFT is at least 2 s is stall-dominated. Returns their concurrencies.
 */
export function coldStallConcurrencies(d: Pick<SiliconDeployment, 'points' | 'info'>): number[] {
  const rows = d.points.map((p, i) => ({
    c: Number(p.key.concurrency),
    ttft: Number(p.metrics.time_to_first_token.avg),
    itl: Number(p.metrics.inter_token_latency.avg),
    cold: d.info[i]?.warmedUp === false,
  }));
  const flagged = new Set<number>();
  for (const low of rows) {
    for (const high of rows) {
      if (!low.cold || !high.cold || high.c < 2 * low.c) continue;
      if (high.ttft > 1.25 * low.ttft || high.itl < 1.2 * low.itl) continue;
      for (const r of [low, high]) if (r.ttft >= COLD_STALL_MIN_TTFT_MS) flagged.add(r.c);
    }
  }
  return rows.filter((r) => flagged.has(r.c)).map((r) => r.c);
}

/**
 * A worker's attention-DP ranks: the sample's attention_dp_size or, where it leaves attention DP
 * out, the MoE layers' GPUs (moe_tp x moe_ep) over the tensor-parallel size, whichever is larger.
 */
function attentionDpOf(cells: Record<string, string>, prefix = ''): number {
  const tp = Number(cells[`${prefix}tp_size`]) || 1;
  const moeGpus = (Number(cells[`${prefix}moe_tp_size`]) || 1) * (Number(cells[`${prefix}moe_ep_size`]) || 1);
  return Math.max(Number(cells[`${prefix}attention_dp_size`]) || 1, Math.floor(moeGpus / tp));
}

/**
 * A disaggregated row's pool (`prefix` `prefill_` or `decode_`): its workers, tensor-parallel
 * size, attention-DP ranks (as for an aggregated worker, `attentionDpOf`) and expert-parallel size.
 */
function poolOf(cells: Record<string, string>, prefix: string): SiliconPool {
  const workers = Number(cells[`${prefix}num_workers`]);
  return {
    workers: workers > 0 ? workers : 1,
    workersGiven: workers > 0,
    workersFrom: workers > 0 ? 'row' : 'unknown',
    tp: Number(cells[`${prefix}tp_size`]) || 1,
    attentionDp: attentionDpOf(cells, prefix),
    expert: Number(cells[`${prefix}moe_ep_size`]) || 1,
  };
}

/**
 * A pool in a label: `P1xtp4` (one prefill worker of TP 4), `D4xtp1adp8ep8`; `(4)x` when the
 * workers come from InferenceX's master config, `?x` when they are not known.
 */
function poolLabel(role: string, p: SiliconPool): string {
  const workers = p.workersFrom === 'row' ? `${p.workers}` : p.workersFrom === 'inferencex-config' ? `(${p.workers})` : '?';
  return `${role}${workers}xtp${p.tp}${p.attentionDp > 1 ? `adp${p.attentionDp}` : ''}${p.expert > 1 ? `ep${p.expert}` : ''}`;
}

/**
 * A base run config for a deployment: its parallelism, its KV capacity, and the scheduler limits
 * its engine starts with (data/engine-defaults.yaml: by backend, the row's backend version when it
 * states one, and the GPU), as the sample's engines were launched without flags that change them;
 * `backend`: the engine whose scheduler and defaults to use (docs/replay-model.md, "Schedulers"),
 * vLLM's when absent. KV is unlimited unless `kv` is `auto`: then the config names the catalog's
 * model (`modelPath`), its precision and expert split, and leaves the capacity to its default, sized
 * from the GPU's memory (unlimited where the model or GPU is not in the catalog).
 */
export function deploymentBaseConfig(
  d: Pick<SiliconDeployment, 'model' | 'system' | 'tp' | 'attentionDp' | 'isl' | 'osl'> &
    Partial<Pick<SiliconDeployment, 'backend' | 'version' | 'modelPath' | 'precision' | 'expert'>>,
  scheduler: {
    maxBatchedTokens?: number;
    backend?: string;
    kv?: 'unlimited' | 'auto';
    /** With `kv: 'auto'`: the parallelism that ran and the KV flags it was launched with (`measuredSetup`). */
    launch?: { tp: number; attentionDp: number; expert: number; kvCache?: LaunchSettings['kvCache'] };
  } = {},
): RunConfig {
  const version =
    scheduler.backend !== undefined && scheduler.backend === d.backend && d.version && isVersion(d.version) ? d.version : undefined;
  // KV from memory needs the catalog's model (by its path), its precision and the expert split.
  const auto = scheduler.kv === 'auto' && d.modelPath !== undefined;
  const precision = auto && d.precision !== undefined ? siliconPrecision(d.precision) : undefined;
  const ran = auto && scheduler.launch !== undefined ? scheduler.launch : { tp: d.tp, attentionDp: d.attentionDp, expert: d.expert ?? 1 };
  const expert = auto && (ran.tp * ran.attentionDp) % ran.expert === 0 ? ran.expert : 1;
  const kvFlags = auto ? (scheduler.launch?.kvCache ?? {}) : {};
  return parseRunConfig(
    {
      engine: {
        model: auto ? d.modelPath : d.model,
        hardware: d.system,
        ...(precision !== undefined ? { precision } : {}),
        ...(scheduler.backend !== undefined ? { backend: scheduler.backend } : {}),
        ...(version !== undefined ? { backend_version: version } : {}),
        workers: {
          aggregated: {
            parallelism: { tensor: ran.tp, attention_data: ran.attentionDp, ...(expert > 1 ? { expert } : {}) },
            scheduler: { max_batched_tokens: scheduler.maxBatchedTokens ?? 8192, chunked_prefill: true },
            // Left out, capacity is auto: from the catalog, unlimited where the model or GPU is not in it.
            kv_cache: auto ? launchKvCache(kvFlags, false) : { capacity: { type: 'unlimited' } },
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
 * A launch's KV flags as a worker's `kv_cache` block, its capacity `auto` (from the catalog):
 * written when `writeCapacity` (refused without catalog entries) or when a memory share is given,
 * else left to the default (which falls back to unlimited without catalog entries).
 */
function launchKvCache(kv: NonNullable<LaunchSettings['kvCache']>, writeCapacity: boolean): Record<string, unknown> {
  const share = kv.gpu_memory_utilization !== undefined ? { gpu_memory_utilization: kv.gpu_memory_utilization } : {};
  return {
    ...(kv.dtype !== undefined ? { dtype: kv.dtype } : {}),
    ...(kv.prefix_caching !== undefined ? { prefix_caching: kv.prefix_caching } : {}),
    ...(kv.block_size !== undefined ? { block_size: kv.block_size } : {}),
    ...(writeCapacity || kv.gpu_memory_utilization !== undefined ? { capacity: { type: 'auto', ...share } } : {}),
  };
}

/** What a measured point's launch set beyond the engine's defaults (`measuredSetup`). */
export interface LaunchSettings {
  scheduler?: {
    max_batched_tokens?: number;
    max_sequences?: number;
    chunked_prefill?: boolean;
    cuda_graph_max_batch?: number;
    cuda_graph_padding?: boolean;
  };
  kvCache?: { dtype?: 'fp8' | 'bf16'; block_size?: number; gpu_memory_utilization?: number; prefix_caching?: boolean };
  /** A disaggregated deployment: each pool's own settings, in place of the two above. */
  pools?: { prefill: Omit<LaunchSettings, 'pools'>; decode: Omit<LaunchSettings, 'pools'> };
}

/**
 * The launch settings of a disaggregated point whose recipe is known (`SiliconPointInfo.recipe`):
 * each pool its own flags; without a recipe none (the engines' defaults). A decode worker receives
 * its prompts' KV and prefills none, so a decode token budget below the prompt (`isl`; TensorRT-LLM
 * decode workers of max_num_tokens 4 .. 512) is kept, with chunked prefill on whatever the recipe
 * says: the replay refuses a pool that could not prefill its prompt unchunked, which its decode
 * pool does only to recompute a preempted request.
 */
export function recipeLaunch(recipe: FlagFileRow | undefined, isl = 0): LaunchSettings {
  if (recipe === undefined) return {};
  const pool = (f: PoolFlags, role: 'prefill' | 'decode'): Omit<LaunchSettings, 'pools'> => ({
    scheduler: {
      ...(f.maxBatchedTokens !== undefined ? { max_batched_tokens: f.maxBatchedTokens } : {}),
      ...(f.maxSequences !== undefined ? { max_sequences: f.maxSequences } : {}),
      ...(role === 'decode' && f.maxBatchedTokens !== undefined && f.maxBatchedTokens < isl
        ? { chunked_prefill: true }
        : f.chunkedPrefill !== undefined
          ? { chunked_prefill: f.chunkedPrefill }
          : {}),
      ...(f.cudaGraphMaxBatch !== undefined ? { cuda_graph_max_batch: f.cudaGraphMaxBatch } : {}),
      ...(f.cudaGraphPadding !== undefined ? { cuda_graph_padding: f.cudaGraphPadding } : {}),
    },
    kvCache: {
      ...(f.kvCacheDtype !== undefined ? { dtype: f.kvCacheDtype } : {}),
      ...(f.memoryFraction !== undefined ? { gpu_memory_utilization: f.memoryFraction } : {}),
      ...(f.prefixCaching !== undefined ? { prefix_caching: f.prefixCaching } : {}),
    },
  });
  return { pools: { prefill: pool(recipe.flags.prefill, 'prefill'), decode: pool(recipe.flags.decode, 'decode') } };
}

/**
 * A base run config predicting a deployment from the catalog alone: its model, GPU, backend,
 * precision and parallelism, roofline timing (the catalog's efficiency factors, or `efficiency`),
 * KV capacity from memory, and a scheduler that admits the whole concurrency. With `pools` (a
 * disaggregated deployment): a prefill and a decode pool of their workers and parallelism, each
 * with its own launch settings where `launch.pools` gives them (else both the same) and the same
 * timing (the KV transfer's bandwidth and bytes from the catalog).
 */
export function catalogBaseConfig(
  d: Pick<SiliconDeployment, 'modelPath' | 'system' | 'backend' | 'precision' | 'tp' | 'attentionDp' | 'expert' | 'isl' | 'osl'> &
    Partial<Pick<SiliconDeployment, 'replicas' | 'version' | 'protocol' | 'pools'>>,
  efficiency?: Partial<EfficiencyFactors>,
  launch: LaunchSettings = {},
): RunConfig {
  const precision = siliconPrecision(d.precision);
  const version = engineVersionOf(d);
  // One pool's block: an aggregated worker, or (with `pools`) a prefill or decode pool.
  const worker = (
    p: { replicas: number; tp: number; attentionDp: number; expert: number },
    own: Omit<LaunchSettings, 'pools'> = launch,
  ) => {
    const kv = own.kvCache ?? {};
    const gpus = p.tp * p.attentionDp;
    return {
      parallelism: {
        replicas: p.replicas,
        tensor: p.tp,
        attention_data: p.attentionDp,
        expert: gpus % p.expert === 0 ? p.expert : 1,
      },
      scheduler: own.scheduler ?? {},
      kv_cache: launchKvCache(kv, true),
      timing: { type: 'roofline', ...(efficiency !== undefined ? { efficiency } : {}) },
    };
  };
  const pool = (p: SiliconPool, role: 'prefill' | 'decode') =>
    worker({ replicas: p.workers, tp: p.tp, attentionDp: p.attentionDp, expert: p.expert }, launch.pools?.[role] ?? launch);
  return parseRunConfig(
    {
      engine: {
        model: d.modelPath,
        hardware: d.system,
        backend: d.backend,
        ...(version !== undefined ? { backend_version: version } : {}),
        ...(precision !== undefined ? { precision } : {}),
        workers:
          d.pools !== undefined
            ? { prefill: pool(d.pools.prefill, 'prefill'), decode: pool(d.pools.decode, 'decode') }
            : { aggregated: worker({ replicas: d.replicas ?? 1, tp: d.tp, attentionDp: d.attentionDp, expert: d.expert }) },
        // The sample's disaggregated rows were served behind Dynamo's frontend, SGLang's PD router
        // or vLLM's proxy, each of which streams the client's response from the decode worker:
        // the first token reaches the client once the KV has moved and the decode worker has
        // taken the request (docs/replay-model.md, "Disaggregated prefill and decode").
        ...(d.pools !== undefined ? { kv_transfer: { first_token: 'decode' } } : {}),
      },
      traffic: {
        source: {
          type: 'synthetic',
          input_tokens: d.isl,
          output_tokens: d.osl,
          ...(d.protocol?.datasetEntries ? { dataset_entries: d.protocol.datasetEntries } : {}),
        },
      },
    },
    `${d.modelPath} on ${d.system} (catalog)`,
  );
}

/**
 * The engine's version of a deployment: the sample's backend_version, else the tag of an engine
 * image (`vllm/vllm-openai:v0.19.0-cu130` -> 0.19.0, `lmsysorg/sglang:v0.5.9-cu130`,
 * `tensorrt-llm/release:1.2.0rc6.post2`); undefined when neither says (a Dynamo runtime image
 * names Dynamo's version, not the engine's): the newest of data/engine-defaults.yaml.
 */
export function engineVersionOf(d: Partial<Pick<SiliconDeployment, 'version' | 'protocol'>>): string | undefined {
  if (d.version !== undefined && d.version !== '' && isVersion(d.version)) return d.version;
  const image = d.protocol?.image ?? '';
  const match = /(?:vllm-openai|lmsysorg\/sglang|tensorrt-llm\/release):v?([0-9][0-9A-Za-z.]*?)(?:-[a-z].*)?$/.exec(image);
  return match !== null && isVersion(match[1]) ? match[1] : undefined;
}

/**
 * The engine caps a point was measured with, where its source says how they were set: the
 * gap-analysis campaign's deployments were generated by aiconfigurator, whose rules
 * (ai-dynamo/aiconfigurator src/aiconfigurator/generator/rule_plugin/{vllm,trtllm,sglang}.rule,
 * from 95ddf241 of 2025-12-04) give an aggregated worker max_batch_size = the batch it was sized
 * for and a token budget of that batch + ISL + 1500 (TensorRT-LLM: rounded up to its 32-token
 * blocks). The batch is the row's batch_size (clients per replica and attention-DP rank).
 * SGLang's rule sets max_prefill_tokens = ISL + 1500 only where the generator also enabled a
 * chunked prefill, which the rows do not say: its rows, and other sources, keep the engine's
 * defaults (data/engine-defaults.yaml), nothing set here.
 */
export function measuredCaps(
  d: Pick<SiliconDeployment, 'backend' | 'isl'> & { protocol: Pick<SiliconProtocol, 'source'> },
  batchSize: number,
): NonNullable<LaunchSettings['scheduler']> {
  // SGLang's generated launch maps no token budget onto a flag it is known to have run with:
  // its rows keep the engine's defaults.
  if (d.protocol.source !== 'gap-analysis' || d.backend === 'sglang') return {};
  const tokens = batchSize + d.isl + 1500;
  return { max_batched_tokens: d.backend === 'trtllm' ? Math.ceil(tokens / 32) * 32 : tokens, max_sequences: Math.max(1, batchSize) };
}
