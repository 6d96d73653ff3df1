/**
 * The largest values servesim accepts (docs/config.md, "Limits"). Each is far beyond what a real
 * deployment or benchmark reaches, and small enough that the replay's typed arrays and float
 * arithmetic hold every value exactly: request ids and token counts live in Int32Array columns
 * (2^31 - 1 at most), virtual times in Float64Array columns (exact integers up to 2^53). A value
 * past a limit is refused with the field named, instead of wrapping, hanging or printing numbers
 * derived from Infinity.
 */
import { formatInteger } from '../io/format-number.js';

/** Prompt or output tokens of one request (and a session turn's whole prompt): 10x the longest context window offered today. */
export const MAX_TOKENS_PER_REQUEST = 100_000_000;
/** Requests of one run; ids are 32-bit. */
export const MAX_REQUESTS = 1_000_000_000;
/** Closed-loop slots. */
export const MAX_CONCURRENCY = 1_000_000;
/** Running requests per attention-DP rank (vLLM --max-num-seqs; 256 to 1024 in practice). */
export const MAX_SEQUENCES = 1_048_576;
/** Tokens in one pass (vLLM --max-num-batched-tokens), and context_length. */
export const MAX_BATCHED_TOKENS = MAX_TOKENS_PER_REQUEST;
/** Tokens per KV block, and per trace hash id. */
export const MAX_BLOCK_SIZE = 1_048_576;
/** KV blocks per attention-DP rank. */
export const MAX_KV_BLOCKS = 2 ** 31 - 1;
/** Engine workers (replicas) of one run. */
export const MAX_REPLICAS = 65_536;
/** Attention-DP ranks per worker. */
export const MAX_ATTENTION_DATA = 4_096;
/** Attention-DP ranks of the whole run (replicas x attention_data). */
export const MAX_RANKS = 65_536;
/** Tensor-parallel GPUs per rank. */
export const MAX_TENSOR = 4_096;
/** Expert-parallel groups per worker. */
export const MAX_EXPERT = 4_096;
/** Tokenizer servers per engine worker (the engine fit uses 65,536 to model a pure delay). */
export const MAX_TOKENIZATION_WORKERS = 1_048_576;
/** Detokenizer servers per engine worker. */
export const MAX_DETOKENIZATION_WORKERS = 4_096;
/** Any cost (ms, us or ns, in the field's own unit): 10^9 ms is 11.6 days for one pass. */
export const MAX_COST = 1e9;
/** Memory of one GPU, GiB. */
export const MAX_GPU_MEMORY_GIB = 1_048_576;
/** KV bytes per token of the whole model. */
export const MAX_KV_BYTES_PER_TOKEN = 1e9;
/** Bandwidth of a KV transfer link, GB/s. */
export const MAX_TRANSFER_GB_PER_S = 1e6;
/** Request rates, requests per second. */
export const MIN_REQUEST_RATE = 1e-6;
export const MAX_REQUEST_RATE = 1e7;
/** A virtual-time cap, s (about 116 days). */
export const MAX_VIRTUAL_TIME_SECONDS = 1e7;
/** Trace time scaling. */
export const MIN_SPEEDUP = 1e-6;
export const MAX_SPEEDUP = 1e6;
/** Seeds: the generators take 32 bits, so 2^32 would repeat seed 0. */
export const MAX_SEED = 2 ** 32 - 1;
/** A trace's timestamps and delays, ms (about 31,700 years). */
export const MAX_TRACE_MS = 1e15;

/**
 * YAML inputs (run configs, sweep files) are refused above this size before they are parsed: a
 * run config is about 1 KiB, and 256 KiB parse in well under a second.
 */
export const MAX_YAML_BYTES = 256 * 1024;
/** ... and above this nesting depth. */
export const MAX_YAML_DEPTH = 64;
/**
 * Any other text input read whole (AIPerf exports, CSV tables, a sweep's points.jsonl): the
 * longest text a JavaScript string holds is 512 MiB, and a file is refused at this size before
 * that limit is met.
 */
export const MAX_TEXT_FILE_BYTES = 500 * 1024 * 1024;
/** Points of one sweep (the grid x zip x repeats product). */
export const MAX_SWEEP_POINTS = 100_000;

/** `12345678` -> `12,345,678` for messages. */
export function formatCount(value: number): string {
  return Number.isInteger(value) ? formatInteger(value) : String(value);
}

/** A file size as `620 KiB` / `48.0 MiB` for messages about file limits. */
export function formatFileSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

/** Bytes as `1.5 GB` / `820 MB` / `12 kB` (decimal units) for messages. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${Math.round(bytes / 1e6)} MB`;
  return `${Math.max(1, Math.round(bytes / 1e3))} kB`;
}
