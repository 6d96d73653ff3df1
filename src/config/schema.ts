/**
 * The zod schema of one run config (docs/config.md): every key, its default and its
 * per-field rule. Objects are strict (unknown keys are errors); blocks with a `type` are
 * discriminated unions whose `type` defaults to the first option. Every field carries its
 * own error text (`must be a positive integer, got 0`). Cross-field rules live in
 * `rules.ts`; `load.ts` runs both and turns issues into `ConfigError`s.
 */
import * as z from 'zod';
import { isVersion } from '../catalog/engine-defaults.js';
import { formatValue } from './errors.js';
import { efficiencyShape } from '../catalog/efficiency.js';
import { PRECISIONS } from '../catalog/schema.js';
import * as L from './limits.js';
import { BACKENDS, CAPACITY_POLICIES, FIRST_TOKEN_SOURCES, SCHEDULE_POLICIES, type RunConfig, type StopConfig } from './types.js';

export { kvBlocksPerRank, largestSyntheticPromptTokens, sessionTurnPromptTokens } from './kv-capacity.js';

type RawIssue = z.core.$ZodRawIssue;

/** An error text for a field: `<rule>, got <value>`, or `is required (<rule>)` when absent. */
function says(rule: string, whenMissing = 'is required') {
  return (issue: RawIssue): string => (issue.input === undefined ? `${whenMissing} (${rule})` : `${rule}, got ${formatValue(issue.input)}`);
}

const POSITIVE_INT = 'must be a positive integer';
const NON_NEGATIVE_INT = 'must be a non-negative integer';
const COST = 'must be a finite non-negative number';
const POSITIVE = 'must be a positive finite number';
const FRACTION = 'must be a number in (0, 1]';

/** The error text past a limit (docs/config.md, "Limits"): `must be at most 100,000,000 (the limit on ...), got ...`. */
function atMost(max: number, what: string) {
  return (issue: RawIssue): string => `must be at most ${L.formatCount(max)} (the limit on ${what}), got ${formatValue(issue.input)}`;
}
function atLeast(min: number, what: string) {
  return (issue: RawIssue): string => `must be at least ${min} (the limit on ${what}), got ${formatValue(issue.input)}`;
}

/** An integer in [1, max]; `what` names the limit in its error text. */
const positiveInt = (max: number, what: string) =>
  z
    .int({ error: says(POSITIVE_INT) })
    .min(1, { error: says(POSITIVE_INT) })
    .max(max, { error: atMost(max, what) });
const nonNegativeInt = (max: number, what: string) =>
  z
    .int({ error: says(NON_NEGATIVE_INT) })
    .min(0, { error: says(NON_NEGATIVE_INT) })
    .max(max, { error: atMost(max, what) });
/** Finite, >= 0 and at most MAX_COST. zod numbers already reject NaN and +-Infinity (YAML `.nan`, `.inf`). */
const cost = () =>
  z
    .number({ error: says(COST) })
    .min(0, { error: says(COST) })
    .max(L.MAX_COST, { error: atMost(L.MAX_COST, 'costs') });
const positive = (max: number, what: string, whenMissing?: string) =>
  z
    .number({ error: says(POSITIVE, whenMissing) })
    .gt(0, { error: says(POSITIVE, whenMissing) })
    .max(max, { error: atMost(max, what) });
/** A positive number in [min, max]. */
const inRange = (min: number, max: number, what: string, whenMissing?: string) =>
  positive(max, what, whenMissing).min(min, { error: atLeast(min, what) });
const seed = () => nonNegativeInt(L.MAX_SEED, 'seeds (the generators take 32 bits)');
const tokens = () => positiveInt(L.MAX_TOKENS_PER_REQUEST, 'tokens per request');
const UNIT = 'must be a number in [0, 1]';
const unitInterval = () =>
  z
    .number({ error: says(UNIT) })
    .min(0, { error: says(UNIT) })
    .max(1, { error: says(UNIT) });
const fraction = () =>
  z
    .number({ error: says(FRACTION) })
    .gt(0, { error: says(FRACTION) })
    .max(1, { error: says(FRACTION) });
const label = () => z.string({ error: says('must be a string') });
const flag = () => z.boolean({ error: says('must be true or false') });
const exactly = <T extends string>(value: T) => z.literal(value, { error: says(`must be ${value}`) });

/**
 * A strict object whose errors say `must be a mapping` and, for unknown keys, which keys
 * are allowed (and for which `type`, inside a discriminated union).
 */
function strict<S extends z.core.$ZodLooseShape>(shape: S) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue: RawIssue) => {
      if (issue.code !== 'unrecognized_keys') return says('must be a mapping')(issue);
      const input = issue.input;
      if (!('type' in shape)) return `unknown key (allowed: ${allowed})`;
      const type = input !== undefined && 'type' in input ? String(input.type) : undefined;
      return type === undefined
        ? `unknown key for the default type, which applies when type is omitted (allowed: ${allowed})`
        : `unknown key for type ${type} (allowed: ${allowed})`;
    },
  });
}

/** A union on `type`; a missing `type` selects the first option (its literal has a default). */
function byType<const O extends readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]]>(
  types: readonly string[],
  options: O,
) {
  return z.discriminatedUnion('type', options, {
    error: (issue: RawIssue) => {
      if (issue.code !== 'invalid_union') return says('must be a mapping')(issue);
      const input = issue.input as Record<string, unknown>;
      return `must be one of ${types.join(', ')}, got ${formatValue(input.type)}`;
    },
  });
}

// ---- engine.workers.aggregated --------------------------------------------------------

const parallelismSchema = strict({
  replicas: positiveInt(L.MAX_REPLICAS, 'replicas')
    .default(1)
    .describe('Independent engine workers; requests are placed on them by engine.router (round-robin by default).'),
  tensor: positiveInt(L.MAX_TENSOR, 'tensor-parallel GPUs per rank').default(1).describe('Tensor-parallel GPUs per attention-DP rank.'),
  attention_data: positiveInt(L.MAX_ATTENTION_DATA, 'attention-DP ranks per worker')
    .default(1)
    .describe('Attention data-parallel ranks per worker, each with its own queues, budget and KV pool.'),
  expert: positiveInt(L.MAX_EXPERT, 'expert-parallel groups per worker')
    .default(1)
    .describe(
      'Expert-parallel groups the routed experts of a mixture-of-experts model are split over (roofline timing and memory); must divide tensor x attention_data.',
    ),
}).describe('GPUs per worker = tensor x attention_data.');

const schedulerSchema = strict({
  max_batched_tokens: positiveInt(L.MAX_BATCHED_TOKENS, 'tokens per pass')
    .optional()
    .describe(
      "Token budget of one pass (vLLM --max-num-batched-tokens, SGLang --chunked-prefill-size, TensorRT-LLM max_num_tokens); absent: the engine's default for its version and GPU (data/engine-defaults.yaml), 8192 when the GPU is not in the catalog.",
    ),
  max_sequences: positiveInt(L.MAX_SEQUENCES, 'running requests per rank')
    .optional()
    .describe(
      "Most running requests per rank (vLLM --max-num-seqs, SGLang --max-running-requests, TensorRT-LLM max_batch_size); absent: the engine's default (data/engine-defaults.yaml).",
    ),
  chunked_prefill: flag()
    .optional()
    .describe(
      "Split long prompts over passes (absent: the engine's default, on except under TensorRT-LLM). When false, a prompt larger than max_batched_tokens is a config error.",
    ),
  policy: z
    .enum(BACKENDS, { error: says(`must be one of ${BACKENDS.join(', ')}`) })
    .optional()
    .describe("Whose scheduler the ranks run (docs/replay-model.md, 'Schedulers'); engine.backend's when absent."),
  schedule_policy: z
    .enum(SCHEDULE_POLICIES, { error: says(`must be one of ${SCHEDULE_POLICIES.join(', ')}`) })
    .optional()
    .describe(
      'Order of the waiting queue: fcfs (when absent), priority (vllm: --scheduling-policy priority), lpm (sglang: longest cached prefix first).',
    ),
  capacity_policy: z
    .enum(CAPACITY_POLICIES, { error: says(`must be one of ${CAPACITY_POLICIES.join(', ')}`) })
    .optional()
    .describe("TensorRT-LLM's capacity scheduler: guaranteed_no_evict (when absent) or max_utilization."),
  schedule_conservativeness: z
    .number({ error: says(POSITIVE) })
    .gt(0, { error: says(POSITIVE) })
    .max(100, { error: says('must be at most 100') })
    .optional()
    .describe("SGLang's --schedule-conservativeness: scales the initial new_token_ratio (0.7, capped at 1); 1 when absent."),
  cuda_graph_max_batch: positiveInt(L.MAX_SEQUENCES, 'requests')
    .optional()
    .describe(
      "Largest decode batch captured in a CUDA graph (vLLM --max-cudagraph-capture-size, SGLang --cuda-graph-max-bs, TensorRT-LLM cuda_graph_config.max_batch_size); absent: the engine's default. Roofline timing only.",
    ),
  cuda_graph_padding: flag()
    .optional()
    .describe(
      "Whether a decode batch is padded up to the next captured size (absent: the engine's default, on except under TensorRT-LLM); unpadded sizes run without a graph. Roofline timing only.",
    ),
  priority_levels: positiveInt(1_000_000, 'priority levels')
    .optional()
    .describe(
      'schedule_policy priority without a trace priority column: priorities 0 .. levels - 1 spread over the requests by a hash of their id (1 when absent: all equal).',
    ),
});

const capacitySchema = byType(
  ['auto', 'unlimited', 'fixed', 'memory'],
  [
    strict({
      type: exactly('auto').default('auto'),
      gpu_memory_utilization: fraction()
        .optional()
        .describe("Share of each GPU's memory the engine may use (vLLM --gpu-memory-utilization); default 0.9."),
      reserve_gib: cost()
        .optional()
        .describe(
          'Memory per GPU kept for activations, CUDA graphs and buffers, GiB; default: an estimate from the model and the token budget.',
        ),
    }),
    strict({ type: exactly('unlimited') }),
    strict({
      type: exactly('fixed'),
      blocks: positiveInt(L.MAX_KV_BLOCKS, 'KV blocks per rank').describe('KV blocks per attention-DP rank.'),
    }),
    strict({
      type: exactly('memory'),
      gpu_memory_gib: positive(L.MAX_GPU_MEMORY_GIB, 'GiB per GPU').describe('Memory of one GPU, GiB.'),
      memory_fraction: fraction().default(0.9).describe('Share of GPU memory the engine may use (vLLM --gpu-memory-utilization).'),
      weights_gib: cost().describe('Model weights held by one attention-DP rank (all its tensor-parallel GPUs together), GiB.'),
      kv_bytes_per_token: positive(L.MAX_KV_BYTES_PER_TOKEN, 'KV bytes per token').describe(
        'KV cache bytes per token for the whole model (all layers, all KV heads).',
      ),
    }),
  ],
).describe(
  'KV pool per attention-DP rank. auto: from engine.model and engine.hardware in the catalog (unlimited when either is not in it and auto was not written); memory: floor((tensor x gpu_memory_gib x memory_fraction - weights_gib) x 2^30 / (kv_bytes_per_token x block_size)) blocks.',
);

const kvCacheSchema = strict({
  block_size: positiveInt(L.MAX_BLOCK_SIZE, 'tokens per block').default(16).describe('Tokens per KV block.'),
  dtype: z
    .enum(['auto', ...PRECISIONS], { error: says(`must be one of auto, ${PRECISIONS.join(', ')}`) })
    .default('auto')
    .describe(
      'KV cache element type (auto: BF16, FP8 under trtllm with FP8 or FP4 weights); sizes the cache of capacity auto and the KV reads of roofline timing.',
    ),
  capacity: capacitySchema.prefault({}),
  prefix_caching: flag()
    .optional()
    .describe(
      'Reuse the KV blocks of prompt prefixes shared with earlier requests (trace hash_ids, earlier session turns); true when absent, as in vLLM v1.',
    ),
});

const efficiencySchema = strict(
  Object.fromEntries(Object.entries(efficiencyShape).map(([name, schema]) => [name, schema.optional()])) as {
    [K in keyof typeof efficiencyShape]: z.ZodOptional<(typeof efficiencyShape)[K]>;
  },
).describe('Overrides of the fitted efficiency factors of the catalog (data/efficiency.yaml).');

const timingSchema = byType(
  ['fixed', 'polynomial', 'linear', 'roofline', 'profile'],
  [
    strict({
      type: exactly('fixed').default('fixed'),
      prefill_ms: cost().default(10).describe('Added to a pass that has any prefill work, ms.'),
      decode_ms: cost().default(2).describe('Added to a pass that emits any token, ms.'),
    }),
    strict({ type: exactly('polynomial') }),
    strict({
      type: exactly('linear'),
      base_ms: cost().default(0).describe('Fixed cost of every pass, ms.'),
      prefill_token_us: cost().default(0).describe('Per new prefill token, us.'),
      prefill_pair_ns: cost().default(0).describe('Per prefill attention pair, chunk x (already_computed + chunk/2), ns.'),
      decode_request_us: cost().default(0).describe('Per decoding request, us.'),
      decode_kv_token_ns: cost().default(0).describe('Per context token of the decoding requests, ns.'),
      decode_request_exponent: fraction()
        .default(1)
        .describe(
          'Exponent p of the decoding-request term, decode_request_us x B^p, in (0, 1]. 1 (the default) is the plain linear model; below 1 models a per-request cost that grows sublinearly with the batch (the experts an MoE layer must read saturate).',
        ),
      prefill_overlap: unitInterval()
        .default(0)
        .describe(
          'Roofline overlap h in [0, 1] of the prefill terms F = prefill_token_us P + prefill_pair_ns Q and the rest of the pass R (base and decode terms): pass time R + F - h min(R, F). 0 (the default) is the plain sum; 1 is max(R, F): prefill tokens that ride along with a memory-bound decode step cost nothing until their compute outgrows it.',
        ),
    }),
    strict({
      type: exactly('roofline'),
      efficiency: efficiencySchema.optional(),
    }).describe('Pass time from engine.model and engine.hardware in the catalog: compute, memory and link time of each pass.'),
    strict({
      type: exactly('profile'),
      path: z
        .string({ error: says('must be a non-empty path') })
        .min(1, { error: says('must be a non-empty path') })
        .describe(
          'Pass-time model written by servesim calibrate pass-time --profile (pass-time.json); a relative path is relative to the config file.',
        ),
    }).describe('Pass time from per-layer profiles of the engine: layer times interpolated at the pass and summed over the layers.'),
  ],
).describe('Pass time provider (docs/replay-model.md, "Timing providers").');

const workerRoleSchema = strict({
  parallelism: parallelismSchema.prefault({}),
  scheduler: schedulerSchema.prefault({}),
  kv_cache: kvCacheSchema.prefault({}),
  timing: timingSchema
    .optional()
    .describe(
      'Pass time provider (docs/replay-model.md, "Timing providers"); absent: roofline when engine.model and engine.hardware are in the catalog, else fixed.',
    ),
});

/** The role block a config gets when engine.workers names none: aggregated workers with every default. */
export function defaultWorkerRole(): z.output<typeof workerRoleSchema> {
  return workerRoleSchema.parse({});
}

const kvTransferSchema = strict({
  latency_ms: cost().default(0).describe('Fixed cost of one transfer (connection, handshake, first byte), ms.'),
  bandwidth_gb_per_s: positive(L.MAX_TRANSFER_GB_PER_S, 'GB/s')
    .optional()
    .describe(
      "Bandwidth of the link between a prefill and a decode worker, GB/s (1e9 bytes); absent: the catalog GPU's (NVLink when both pools fit in one NVLink domain, one direction; else its network link).",
    ),
  kv_bytes_per_token: z
    .number({ error: says(COST) })
    .min(0, { error: says(COST) })
    .max(L.MAX_KV_BYTES_PER_TOKEN, { error: atMost(L.MAX_KV_BYTES_PER_TOKEN, 'KV bytes per token') })
    .optional()
    .describe(
      "KV bytes of one prompt token the link carries (0: the transfer takes latency_ms alone); absent: the catalog model's KV per token on one GPU of the pool with fewer tensor-parallel GPUs.",
    ),
  max_local_prefill_tokens: nonNegativeInt(L.MAX_TOKENS_PER_REQUEST, 'tokens per request')
    .default(0)
    .describe('Prompts of at most this many tokens are prefilled on the decode worker itself, with no transfer (0: none).'),
  first_token: z
    .enum(FIRST_TOKEN_SOURCES, { error: says(`must be one of ${FIRST_TOKEN_SOURCES.join(', ')}`) })
    .default('prefill')
    .describe(
      "Which worker's output is a request's first token: prefill (it leaves at the end of the prefill; the transfer and the wait for a decode slot fall between the first and second tokens) or decode (the client's stream comes from the decode worker, whose first pass with the request recomputes the last prompt token and samples the first token, as vLLM's KV connectors do; they fall in TTFT).",
    ),
}).describe(
  'Disaggregated serving: the KV transfer from a prefill worker to a decode worker, latency_ms + prompt tokens x kv_bytes_per_token / bandwidth, first in first out per pair of workers.',
);

// ---- engine -----------------------------------------------------------------------------

const CONTEXT_LENGTH = 'must be a positive integer or max';
const contextLengthSchema = z
  .union(
    [
      z
        .int({ error: says(CONTEXT_LENGTH) })
        .min(1, { error: says(CONTEXT_LENGTH) })
        .max(L.MAX_TOKENS_PER_REQUEST, { error: atMost(L.MAX_TOKENS_PER_REQUEST, 'tokens per request') }),
      z.literal('max'),
    ],
    {
      error: says(CONTEXT_LENGTH),
    },
  )
  .default('max')
  .describe('Most tokens (prompt + output) of one request, or max for no limit; a prompt of this many tokens or more is rejected.');

const autoCost = (what: string) =>
  z
    .union([cost(), z.literal('auto')], { error: says('must be a finite non-negative number or auto') })
    .default('auto')
    .describe(`${what} auto: the catalog's fitted value under roofline timing, else 0.`);

const frontendSchema = strict({
  base_ms: autoCost('Per request, ms.'),
  per_input_us: autoCost('Per prompt token, us.'),
  // Left out of the effective config unless written (absent means auto), so that configs written
  // before the key existed keep their echo and their sweep point ids.
  per_inflight_us: z
    .union([cost(), z.literal('auto')], { error: says('must be a finite non-negative number or auto') })
    .optional()
    .describe(
      "Per other request in flight (sent, its response not all received) when the request is sent, us; absent or auto: the catalog's fitted value under roofline timing, else 0.",
    ),
}).describe(
  "Time from the client's send to the request reaching the server's tokenizer or queue (client, HTTP, API server): base_ms + per_input_us x prompt tokens + per_inflight_us x other requests in flight; a TTFT stage of its own, holding no engine resource.",
);

const tokenizationSchema = strict({
  workers: positiveInt(L.MAX_TOKENIZATION_WORKERS, 'tokenizer servers per worker')
    .default(1)
    .describe('FIFO tokenizer servers per engine worker.'),
  base_ms: cost().default(0).describe('Cost of one request, ms.'),
  per_input_us: cost().default(0).describe('Cost per prompt token, us.'),
}).describe('Optional: tokenization before the scheduler queue (docs/client-path.md).');

const detokenizationSchema = strict({
  workers: positiveInt(L.MAX_DETOKENIZATION_WORKERS, 'detokenizer servers per worker')
    .default(1)
    .describe('FIFO detokenizer servers per engine worker.'),
  base_ms: cost().default(0).describe('Cost of one job (one server share of one pass), ms.'),
  per_output_us: cost().default(0).describe('Cost per output token in the job, us.'),
  chunk_outputs: positiveInt(L.MAX_REQUESTS, 'outputs per job')
    .optional()
    .describe('Split a job into jobs of at most this many outputs, each paying base_ms.'),
}).describe('Optional: detokenization between a pass end and the client (docs/client-path.md).');

const routerSchema = byType(
  ['round_robin', 'least_loaded', 'kv_aware'],
  [
    strict({ type: exactly('round_robin').default('round_robin') }),
    strict({ type: exactly('least_loaded') }),
    strict({
      type: exactly('kv_aware'),
      overlap_score_weight: cost()
        .default(1)
        .describe("Weight of the prefill blocks in Dynamo's KV router cost (its --kv-overlap-score-weight); 0 balances load only."),
    }),
  ],
).describe(
  'Optional: how requests are placed on ranks. round_robin (when absent), least_loaded (fewest waiting + running requests), kv_aware (Dynamo KV router cost).',
);

const engineSchema = strict({
  model: label()
    .default('unknown')
    .describe('Model: a catalog name (servesim catalog models) for roofline timing and KV capacity auto, else a label.'),
  hardware: label().default('unknown').describe('GPU: a catalog name (servesim catalog hardware), else a label.'),
  backend: z
    .enum(BACKENDS, { error: says(`must be one of ${BACKENDS.join(', ')}`) })
    .default('vllm')
    .describe(
      'Serving engine: picks the scheduler (unless scheduler.policy says otherwise) and the efficiency factors of roofline timing.',
    ),
  backend_version: z
    .string({ error: says('must be a version such as 0.12.0 or 1.1.0rc2') })
    .refine((v) => isVersion(v), { error: says('must be a version such as 0.12.0 or 1.1.0rc2') })
    .optional()
    .describe(
      "The backend's version (PEP 440, e.g. 0.12.0): picks the engine's defaults (data/engine-defaults.yaml); absent: the newest listed.",
    ),
  precision: z
    .enum(PRECISIONS, { error: says(`must be one of ${PRECISIONS.join(', ')}`) })
    .optional()
    .describe("Weight precision of the matmuls (default: the catalog model's own)."),
  context_length: contextLengthSchema,
  frontend: frontendSchema.prefault({}),
  workers: strict({
    aggregated: workerRoleSchema
      .optional()
      .describe('Workers that prefill and decode the requests they are given (the layout when engine.workers is empty).'),
    prefill: workerRoleSchema
      .optional()
      .describe('Disaggregated serving: workers that prefill each prompt and emit its first token, then hand its KV to a decode worker.'),
    decode: workerRoleSchema
      .optional()
      .describe('Disaggregated serving: workers that receive a prefilled request and its KV and generate the rest of its tokens.'),
  })
    .prefault({})
    .describe(
      'Engine workers: aggregated, or prefill and decode pools (docs/replay-model.md, "Disaggregated prefill and decode"); each block has parallelism, scheduler, kv_cache and timing.',
    ),
  kv_transfer: kvTransferSchema.optional(),
  router: routerSchema.optional(),
  tokenization: tokenizationSchema.optional(),
  detokenization: detokenizationSchema.optional(),
});

// ---- traffic ----------------------------------------------------------------------------

const sourceSchema = byType(
  ['synthetic', 'synthetic-session', 'trace'],
  [
    strict({
      type: exactly('synthetic').default('synthetic'),
      input_tokens: tokens()
        .default(1024)
        .describe('Prompt tokens: every prompt, the mean with input_tokens_stddev, the upper end when random_range_ratio < 1.'),
      output_tokens: nonNegativeInt(L.MAX_TOKENS_PER_REQUEST, 'tokens per request')
        .default(128)
        .describe('Output tokens: every output, the mean with output_tokens_stddev, the upper end when random_range_ratio < 1.'),
      random_range_ratio: fraction()
        .default(1)
        .describe(
          "Lengths are drawn uniformly between ratio x value and value, as SGLang's bench_serving --random-range-ratio (and InferenceX's 0.8); 1 = fixed.",
        ),
      // Absent unless written (absent means 0), so that earlier configs keep their sweep point ids.
      input_tokens_stddev: cost()
        .optional()
        .describe(
          "Standard deviation of the prompt length, as AIPerf's --isl-stddev: lengths are drawn from a normal distribution of mean input_tokens, rounded, within [1, mean + 4 sd]; absent or 0: fixed (AIPerf's default).",
        ),
      output_tokens_stddev: cost()
        .optional()
        .describe("Standard deviation of the output length, as AIPerf's --osl-stddev (same rule, at least 1 token); absent or 0: fixed."),
      seed: seed().default(0).describe('Seed of the length draws.'),
    }),
    strict({
      type: exactly('synthetic-session'),
      turns: positiveInt(L.MAX_REQUESTS, 'requests').describe('Turns per session.'),
      new_input_tokens_per_turn: tokens().describe('New prompt tokens per turn; each turn resends the conversation so far.'),
      output_tokens_per_turn: nonNegativeInt(L.MAX_TOKENS_PER_REQUEST, 'tokens per request').describe('Output tokens per turn.'),
      inter_turn_delay_ms: cost().default(0).describe('Wait after the client acted on a turn before sending the next, ms.'),
    }),
    strict({
      type: exactly('trace'),
      path: z
        .string({ error: says('must be a non-empty path') })
        .min(1, { error: says('must be a non-empty path') })
        .describe('Trace file; a relative path is relative to the config file.'),
      format: z
        .enum(['mooncake', 'vllm-log'], { error: says('must be mooncake or vllm-log') })
        .default('mooncake')
        .describe(
          'Trace format: mooncake (JSONL with timestamp, input_length, output_length, hash_ids) or vllm-log (a vLLM per-request log: its folder or its requests.jsonl; docs/request-logs.md).',
        ),
      block_size: positiveInt(L.MAX_BLOCK_SIZE, 'tokens per block')
        .default(512)
        .describe('Tokens per hash_ids entry of the trace (vllm-log: of the prompt blocks each request keeps to itself).'),
    }),
  ],
).describe('Where requests come from.');

const responseOverheadSchema = strict({
  base_ms: cost().default(0).describe('Per response, ms.'),
  per_output_token_us: cost().default(0).describe('Per output token of the response, us.'),
  // Absent unless written (absent means 0), so that earlier configs keep their sweep point ids.
  per_inflight_us: cost()
    .optional()
    .describe('Per other request in flight when the response ends, us (absent: 0): a client busier with more streams turns around later.'),
})
  .optional()
  .describe('Optional: client-side cost before acting on a finished response (docs/client-path.md).');

const loadSchema = byType(
  ['concurrency', 'poisson', 'constant_rate', 'trace_timestamps'],
  [
    strict({
      type: exactly('concurrency').default('concurrency'),
      concurrency: positiveInt(L.MAX_CONCURRENCY, 'closed-loop slots').default(10).describe('Closed-loop slots.'),
      ramp_up_ms: cost()
        .default(0)
        .describe('Slot k (0-based) sends its first request at k x ramp_up_ms / concurrency; 0 = every slot at t = 0.'),
      response_overhead: responseOverheadSchema,
    }),
    strict({
      type: exactly('poisson'),
      requests_per_second: inRange(L.MIN_REQUEST_RATE, L.MAX_REQUEST_RATE, 'requests per second', 'is required with type poisson').describe(
        'Mean arrival rate.',
      ),
      seed: seed().default(42).describe('Seed of the arrival gaps.'),
      response_overhead: responseOverheadSchema,
    }),
    strict({
      type: exactly('constant_rate'),
      requests_per_second: inRange(
        L.MIN_REQUEST_RATE,
        L.MAX_REQUEST_RATE,
        'requests per second',
        'is required with type constant_rate',
      ).describe('Arrival rate; gaps are exactly 1000 / rate ms.'),
      response_overhead: responseOverheadSchema,
    }),
    strict({
      type: exactly('trace_timestamps'),
      speedup: inRange(L.MIN_SPEEDUP, L.MAX_SPEEDUP, 'speedup').default(1).describe('Divides the trace timestamps.'),
      response_overhead: responseOverheadSchema,
    }),
  ],
).describe('How requests are sent.');

const stopSchema = strict({
  requests: positiveInt(L.MAX_REQUESTS, 'requests').optional().describe('Total requests sent (for a trace, its first N rows).'),
  requests_per_load_unit: positive(L.MAX_REQUESTS, 'requests')
    .optional()
    .describe('Requests = round(this x concurrency, or x requests_per_second), at least 1.'),
  max_virtual_time_seconds: positive(L.MAX_VIRTUAL_TIME_SECONDS, 'virtual time')
    .optional()
    .describe('Nothing after this virtual time is recorded.'),
})
  .meta({ minProperties: 1, maxProperties: 1 })
  .describe('Exactly one stop condition.')
  .prefault({ requests: 100 })
  // The exactly-one rule is checked in rules.ts; this only narrows the type.
  .transform((stop) => stop as StopConfig);

const trafficSchema = strict({
  source: sourceSchema.prefault({}),
  load: loadSchema.prefault({}),
  stop: stopSchema,
});

const reportSchema = strict({
  warmup_requests: nonNegativeInt(L.MAX_REQUESTS, 'requests')
    .default(0)
    .describe('The first N requests sent are left out of every metric.'),
});

/** The whole run config. Parse with `parseRunConfig` (load.ts), which adds the cross-field rules. */
export const runConfigSchema = strict({
  engine: engineSchema.prefault({}),
  traffic: trafficSchema.prefault({}),
  report: reportSchema.prefault({}),
});

// Compile-time check: the schema's output is exactly the RunConfig the core consumes.
// The keys left optional here (the scheduler's limits, the timing block) get the engine's and the
// catalog's defaults after parsing (load.ts), so the schema's output is a RunConfig with those
// keys possibly absent.
type SchemaOutput = z.output<typeof runConfigSchema>;
const runConfigIsOutput = (config: RunConfig): SchemaOutput => config;
void runConfigIsOutput;
