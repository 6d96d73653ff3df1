/**
 * The zod schema of one run config (docs/config.md): every key, its default and its
 * per-field rule. Objects are strict (unknown keys are errors); blocks with a `type` are
 * discriminated unions whose `type` defaults to the first option. Every field carries its
 * own error text (`must be a positive integer, got 0`). Cross-field rules live in
 * `rules.ts`; `load.ts` runs both and turns issues into `ConfigError`s.
 *
 * Built with `zod/mini`: every replay builds this schema at start-up, and mini builds it in
 * under half the time classic zod takes (its schemas carry few methods, and a description is
 * registered on the schema itself, not on a copy of it).
 */
import * as z from 'zod/mini';
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

/** `schema`, with its description (and any other JSON Schema keys) in `servesim schema`. */
function described<S extends z.core.$ZodType>(schema: S, description: string, more: Record<string, unknown> = {}): S {
  z.globalRegistry.add(schema, { ...more, description });
  return schema;
}

/** `schema`, taking `value` when the key is absent, described. */
function withDefault<S extends z.core.SomeType>(schema: S, value: z.core.util.NoUndefined<z.output<S>>, description?: string) {
  const out = z._default(schema, value);
  return description === undefined ? out : described(out, description);
}

/** `schema` or absent, described. */
function optional<S extends z.core.SomeType>(schema: S, description?: string) {
  const out = z.optional(schema);
  return description === undefined ? out : described(out, description);
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
  z.int({ error: says(POSITIVE_INT) }).check(z.minimum(1, { error: says(POSITIVE_INT) }), z.maximum(max, { error: atMost(max, what) }));
const nonNegativeInt = (max: number, what: string) =>
  z
    .int({ error: says(NON_NEGATIVE_INT) })
    .check(z.minimum(0, { error: says(NON_NEGATIVE_INT) }), z.maximum(max, { error: atMost(max, what) }));
/** Finite, >= 0 and at most MAX_COST. zod numbers already reject NaN and +-Infinity (YAML `.nan`, `.inf`). */
const cost = () =>
  z.number({ error: says(COST) }).check(z.minimum(0, { error: says(COST) }), z.maximum(L.MAX_COST, { error: atMost(L.MAX_COST, 'costs') }));
const positive = (max: number, what: string, whenMissing?: string) =>
  z
    .number({ error: says(POSITIVE, whenMissing) })
    .check(z.gt(0, { error: says(POSITIVE, whenMissing) }), z.maximum(max, { error: atMost(max, what) }));
/** A positive number in [min, max]. */
const inRange = (min: number, max: number, what: string, whenMissing?: string) =>
  positive(max, what, whenMissing).check(z.minimum(min, { error: atLeast(min, what) }));
const seed = () => nonNegativeInt(L.MAX_SEED, 'seeds (the generators take 32 bits)');
const tokens = () => positiveInt(L.MAX_TOKENS_PER_REQUEST, 'tokens per request');
const UNIT = 'must be a number in [0, 1]';
const unitInterval = () => z.number({ error: says(UNIT) }).check(z.minimum(0, { error: says(UNIT) }), z.maximum(1, { error: says(UNIT) }));
const fraction = () =>
  z.number({ error: says(FRACTION) }).check(z.gt(0, { error: says(FRACTION) }), z.maximum(1, { error: says(FRACTION) }));
const label = () => z.string({ error: says('must be a string') });
const flag = () => z.boolean({ error: says('must be true or false') });
const exactly = <T extends string>(value: T) => z.literal(value, { error: says(`must be ${value}`) });
const nonEmptyPath = () =>
  z.string({ error: says('must be a non-empty path') }).check(z.minLength(1, { error: says('must be a non-empty path') }));

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

const parallelismSchema = described(
  strict({
    replicas: withDefault(
      positiveInt(L.MAX_REPLICAS, 'replicas'),
      1,
      'Independent engine workers; requests are placed on them by engine.router (round-robin by default).',
    ),
    tensor: withDefault(positiveInt(L.MAX_TENSOR, 'tensor-parallel GPUs per rank'), 1, 'Tensor-parallel GPUs per attention-DP rank.'),
    attention_data: withDefault(
      positiveInt(L.MAX_ATTENTION_DATA, 'attention-DP ranks per worker'),
      1,
      'Attention data-parallel ranks per worker, each with its own queues, budget and KV pool.',
    ),
    expert: withDefault(
      positiveInt(L.MAX_EXPERT, 'expert-parallel groups per worker'),
      1,
      'Expert-parallel groups the routed experts of a mixture-of-experts model are split over (roofline timing and memory); must divide tensor x attention_data.',
    ),
  }),
  'GPUs per worker = tensor x attention_data.',
);

const schedulerSchema = strict({
  max_batched_tokens: optional(
    positiveInt(L.MAX_BATCHED_TOKENS, 'tokens per pass'),
    "Token budget of one pass (vLLM --max-num-batched-tokens, SGLang --chunked-prefill-size, TensorRT-LLM max_num_tokens); absent: the engine's default for its version and GPU (data/engine-defaults.yaml), 8192 when the GPU is not in the catalog.",
  ),
  max_sequences: optional(
    positiveInt(L.MAX_SEQUENCES, 'running requests per rank'),
    "Most running requests per rank (vLLM --max-num-seqs, SGLang --max-running-requests, TensorRT-LLM max_batch_size); absent: the engine's default (data/engine-defaults.yaml).",
  ),
  chunked_prefill: optional(
    flag(),
    "Split long prompts over passes (absent: the engine's default, on except under TensorRT-LLM). When false, a prompt larger than max_batched_tokens is a config error.",
  ),
  policy: optional(
    z.enum(BACKENDS, { error: says(`must be one of ${BACKENDS.join(', ')}`) }),
    "Whose scheduler the ranks run (docs/replay-model.md, 'Schedulers'); engine.backend's when absent.",
  ),
  schedule_policy: optional(
    z.enum(SCHEDULE_POLICIES, { error: says(`must be one of ${SCHEDULE_POLICIES.join(', ')}`) }),
    'Order of the waiting queue: fcfs (when absent), priority (vllm: --scheduling-policy priority), lpm (sglang: longest cached prefix first).',
  ),
  capacity_policy: optional(
    z.enum(CAPACITY_POLICIES, { error: says(`must be one of ${CAPACITY_POLICIES.join(', ')}`) }),
    "TensorRT-LLM's capacity scheduler: guaranteed_no_evict (when absent) or max_utilization.",
  ),
  schedule_conservativeness: optional(
    z.number({ error: says(POSITIVE) }).check(z.gt(0, { error: says(POSITIVE) }), z.maximum(100, { error: says('must be at most 100') })),
    "SGLang's --schedule-conservativeness: scales the initial new_token_ratio (0.7, capped at 1); 1 when absent.",
  ),
  cuda_graph_max_batch: optional(
    positiveInt(L.MAX_SEQUENCES, 'requests'),
    "Largest decode batch captured in a CUDA graph (vLLM --max-cudagraph-capture-size, SGLang --cuda-graph-max-bs, TensorRT-LLM cuda_graph_config.max_batch_size); absent: the engine's default. Roofline timing only.",
  ),
  cuda_graph_padding: optional(
    flag(),
    "Whether a decode batch is padded up to the next captured size (absent: the engine's default, on except under TensorRT-LLM); unpadded sizes run without a graph. Roofline timing only.",
  ),
  priority_levels: optional(
    positiveInt(1_000_000, 'priority levels'),
    'schedule_policy priority without a trace priority column: priorities 0 .. levels - 1 spread over the requests by a hash of their id (1 when absent: all equal).',
  ),
});

const capacitySchema = described(
  byType(
    ['auto', 'unlimited', 'fixed', 'memory'],
    [
      strict({
        type: z._default(exactly('auto'), 'auto'),
        gpu_memory_utilization: optional(
          fraction(),
          "Share of each GPU's memory the engine may use (vLLM --gpu-memory-utilization); default 0.9.",
        ),
        reserve_gib: optional(
          cost(),
          'Memory per GPU kept for activations, CUDA graphs and buffers, GiB; default: an estimate from the model and the token budget.',
        ),
      }),
      strict({ type: exactly('unlimited') }),
      strict({
        type: exactly('fixed'),
        blocks: described(positiveInt(L.MAX_KV_BLOCKS, 'KV blocks per rank'), 'KV blocks per attention-DP rank.'),
      }),
      strict({
        type: exactly('memory'),
        gpu_memory_gib: described(positive(L.MAX_GPU_MEMORY_GIB, 'GiB per GPU'), 'Memory of one GPU, GiB.'),
        memory_fraction: withDefault(fraction(), 0.9, 'Share of GPU memory the engine may use (vLLM --gpu-memory-utilization).'),
        weights_gib: described(cost(), 'Model weights held by one attention-DP rank (all its tensor-parallel GPUs together), GiB.'),
        kv_bytes_per_token: described(
          positive(L.MAX_KV_BYTES_PER_TOKEN, 'KV bytes per token'),
          'KV cache bytes per token for the whole model (all layers, all KV heads).',
        ),
      }),
    ],
  ),
  'KV pool per attention-DP rank. auto: from engine.model and engine.hardware in the catalog (unlimited when either is not in it and auto was not written); memory: floor((tensor x gpu_memory_gib x memory_fraction - weights_gib) x 2^30 / (kv_bytes_per_token x block_size)) blocks.',
);

const kvCacheSchema = strict({
  block_size: withDefault(positiveInt(L.MAX_BLOCK_SIZE, 'tokens per block'), 16, 'Tokens per KV block.'),
  dtype: withDefault(
    z.enum(['auto', ...PRECISIONS], { error: says(`must be one of auto, ${PRECISIONS.join(', ')}`) }),
    'auto',
    'KV cache element type (auto: what the engine starts with: FP8 under trtllm with FP8 or FP4 weights, and under vllm from 0.14 when the checkpoint asks for it, as NVFP4 exports do; BF16 otherwise); sizes the cache of capacity auto and the KV reads of roofline timing.',
  ),
  capacity: z.prefault(capacitySchema, {}),
  prefix_caching: optional(
    flag(),
    'Reuse the KV blocks of prompt prefixes shared with earlier requests (trace hash_ids, earlier session turns); true when absent, as in vLLM v1.',
  ),
});

type EfficiencyShape = ReturnType<typeof efficiencyShape>;
/** Built when a config first has `timing.efficiency` (or the JSON Schema is written): see efficiencyShape. */
const efficiencySchema = z.lazy(() =>
  described(
    strict(
      Object.fromEntries(Object.entries(efficiencyShape()).map(([name, schema]) => [name, z.optional(schema)])) as {
        [K in keyof EfficiencyShape]: z.ZodMiniOptional<EfficiencyShape[K]>;
      },
    ),
    'Overrides of the fitted efficiency factors of the catalog (data/efficiency.yaml).',
  ),
);

const timingSchema = described(
  byType(
    ['fixed', 'polynomial', 'linear', 'roofline', 'profile'],
    [
      strict({
        type: z._default(exactly('fixed'), 'fixed'),
        prefill_ms: withDefault(cost(), 10, 'Added to a pass that has any prefill work, ms.'),
        decode_ms: withDefault(cost(), 2, 'Added to a pass that emits any token, ms.'),
      }),
      strict({ type: exactly('polynomial') }),
      strict({
        type: exactly('linear'),
        base_ms: withDefault(cost(), 0, 'Fixed cost of every pass, ms.'),
        prefill_token_us: withDefault(cost(), 0, 'Per new prefill token, us.'),
        prefill_pair_ns: withDefault(cost(), 0, 'Per prefill attention pair, chunk x (already_computed + chunk/2), ns.'),
        decode_request_us: withDefault(cost(), 0, 'Per decoding request, us.'),
        decode_kv_token_ns: withDefault(cost(), 0, 'Per context token of the decoding requests, ns.'),
        decode_request_exponent: withDefault(
          fraction(),
          1,
          'Exponent p of the decoding-request term, decode_request_us x B^p, in (0, 1]. 1 (the default) is the plain linear model; below 1 models a per-request cost that grows sublinearly with the batch (the experts an MoE layer must read saturate).',
        ),
        prefill_overlap: withDefault(
          unitInterval(),
          0,
          'Roofline overlap h in [0, 1] of the prefill terms F = prefill_token_us P + prefill_pair_ns Q and the rest of the pass R (base and decode terms): pass time R + F - h min(R, F). 0 (the default) is the plain sum; 1 is max(R, F): prefill tokens that ride along with a memory-bound decode step cost nothing until their compute outgrows it.',
        ),
      }),
      described(
        strict({
          type: exactly('roofline'),
          efficiency: z.optional(efficiencySchema),
        }),
        'Pass time from engine.model and engine.hardware in the catalog: compute, memory and link time of each pass.',
      ),
      described(
        strict({
          type: exactly('profile'),
          path: described(
            nonEmptyPath(),
            'Pass-time model written by servesim calibrate pass-time --profile (pass-time.json); a relative path is relative to the config file.',
          ),
        }),
        'Pass time from per-layer profiles of the engine: layer times interpolated at the pass and summed over the layers.',
      ),
    ],
  ),
  'Pass time provider (docs/replay-model.md, "Timing providers").',
);

const workerRoleSchema = strict({
  parallelism: z.prefault(parallelismSchema, {}),
  scheduler: z.prefault(schedulerSchema, {}),
  kv_cache: z.prefault(kvCacheSchema, {}),
  timing: optional(
    timingSchema,
    'Pass time provider (docs/replay-model.md, "Timing providers"); absent: roofline when engine.model and engine.hardware are in the catalog, else fixed.',
  ),
});

/** The role block a config gets when engine.workers names none: aggregated workers with every default. */
export function defaultWorkerRole(): z.output<typeof workerRoleSchema> {
  return workerRoleSchema.parse({});
}

const kvTransferSchema = () =>
  described(
    strict({
      latency_ms: withDefault(cost(), 0, 'Fixed cost of one transfer (connection, handshake, first byte), ms.'),
      bandwidth_gb_per_s: optional(
        positive(L.MAX_TRANSFER_GB_PER_S, 'GB/s'),
        "Bandwidth of the link between a prefill and a decode worker, GB/s (1e9 bytes); absent: the catalog GPU's (NVLink when both pools fit in one NVLink domain, one direction; else its network link).",
      ),
      kv_bytes_per_token: optional(
        z
          .number({ error: says(COST) })
          .check(
            z.minimum(0, { error: says(COST) }),
            z.maximum(L.MAX_KV_BYTES_PER_TOKEN, { error: atMost(L.MAX_KV_BYTES_PER_TOKEN, 'KV bytes per token') }),
          ),
        "KV bytes of one prompt token the link carries (0: the transfer takes latency_ms alone); absent: the catalog model's KV per token on one GPU of the pool with fewer tensor-parallel GPUs.",
      ),
      max_local_prefill_tokens: withDefault(
        nonNegativeInt(L.MAX_TOKENS_PER_REQUEST, 'tokens per request'),
        0,
        'Prompts of at most this many tokens are prefilled on the decode worker itself, with no transfer (0: none).',
      ),
      first_token: withDefault(
        z.enum(FIRST_TOKEN_SOURCES, { error: says(`must be one of ${FIRST_TOKEN_SOURCES.join(', ')}`) }),
        'prefill',
        "Which worker's output is a request's first token: prefill (it leaves at the end of the prefill; the transfer and the wait for a decode slot fall between the first and second tokens) or decode (the client's stream comes from the decode worker, whose first pass with the request recomputes the last prompt token and samples the first token, as vLLM's KV connectors do; they fall in TTFT).",
      ),
    }),
    'Disaggregated serving: the KV transfer from a prefill worker to a decode worker, latency_ms + prompt tokens x kv_bytes_per_token / bandwidth, first in first out per pair of workers.',
  );

// ---- engine -----------------------------------------------------------------------------

const CONTEXT_LENGTH = 'must be a positive integer or max';
const contextLengthSchema = withDefault(
  z.union(
    [
      z
        .int({ error: says(CONTEXT_LENGTH) })
        .check(
          z.minimum(1, { error: says(CONTEXT_LENGTH) }),
          z.maximum(L.MAX_TOKENS_PER_REQUEST, { error: atMost(L.MAX_TOKENS_PER_REQUEST, 'tokens per request') }),
        ),
      z.literal('max'),
    ],
    {
      error: says(CONTEXT_LENGTH),
    },
  ),
  'max',
  'Most tokens (prompt + output) of one request, or max for no limit; a prompt of this many tokens or more is rejected.',
);

const costOrAuto = () => z.union([cost(), z.literal('auto')], { error: says('must be a finite non-negative number or auto') });
const autoCost = (what: string) =>
  withDefault(costOrAuto(), 'auto', `${what} auto: the catalog's fitted value under roofline timing, else 0.`);

const frontendSchema = described(
  strict({
    base_ms: autoCost('Per request, ms.'),
    per_input_us: autoCost('Per prompt token, us.'),
    // Left out of the effective config unless written (absent means auto), so that configs written
    // before the key existed keep their echo and their sweep point ids.
    per_inflight_us: optional(
      costOrAuto(),
      "Per other request in flight (sent, its response not all received) when the request is sent, us; absent or auto: the catalog's fitted value under roofline timing, else 0.",
    ),
  }),
  "Time from the client's send to the request reaching the server's tokenizer or queue (client, HTTP, API server): base_ms + per_input_us x prompt tokens + per_inflight_us x other requests in flight; a TTFT stage of its own, holding no engine resource.",
);

const tokenizationSchema = () =>
  described(
    strict({
      workers: withDefault(
        positiveInt(L.MAX_TOKENIZATION_WORKERS, 'tokenizer servers per worker'),
        1,
        'FIFO tokenizer servers per engine worker.',
      ),
      base_ms: withDefault(cost(), 0, 'Cost of one request, ms.'),
      per_input_us: withDefault(cost(), 0, 'Cost per prompt token, us.'),
    }),
    'Optional: tokenization before the scheduler queue (docs/client-path.md).',
  );

const detokenizationSchema = described(
  strict({
    workers: withDefault(
      positiveInt(L.MAX_DETOKENIZATION_WORKERS, 'detokenizer servers per worker'),
      1,
      'FIFO detokenizer servers per engine worker.',
    ),
    base_ms: withDefault(cost(), 0, 'Cost of one job (one server share of one pass), ms.'),
    per_output_us: withDefault(cost(), 0, 'Cost per output token in the job, us.'),
    chunk_outputs: optional(
      positiveInt(L.MAX_REQUESTS, 'outputs per job'),
      'Split a job into jobs of at most this many outputs, each paying base_ms.',
    ),
  }),
  'Optional: detokenization between a pass end and the client (docs/client-path.md).',
);

const routerSchema = () =>
  described(
    byType(
      ['round_robin', 'least_loaded', 'kv_aware'],
      [
        strict({ type: z._default(exactly('round_robin'), 'round_robin') }),
        strict({ type: exactly('least_loaded') }),
        strict({
          type: exactly('kv_aware'),
          overlap_score_weight: withDefault(
            cost(),
            1,
            "Weight of the prefill blocks in Dynamo's KV router cost (its --kv-overlap-score-weight); 0 balances load only.",
          ),
        }),
      ],
    ),
    'Optional: how requests are placed on ranks. round_robin (when absent), least_loaded (fewest waiting + running requests), kv_aware (Dynamo KV router cost).',
  );

const engineSchema = strict({
  model: withDefault(
    label(),
    'unknown',
    'Model: a catalog name (servesim catalog models) for roofline timing and KV capacity auto, else a label.',
  ),
  hardware: withDefault(label(), 'unknown', 'GPU: a catalog name (servesim catalog hardware), else a label.'),
  backend: withDefault(
    z.enum(BACKENDS, { error: says(`must be one of ${BACKENDS.join(', ')}`) }),
    'vllm',
    'Serving engine: picks the scheduler (unless scheduler.policy says otherwise) and the efficiency factors of roofline timing.',
  ),
  backend_version: optional(
    z
      .string({ error: says('must be a version such as 0.12.0 or 1.1.0rc2') })
      .check(z.refine((v) => isVersion(v), { error: says('must be a version such as 0.12.0 or 1.1.0rc2') })),
    "The backend's version (PEP 440, e.g. 0.12.0): picks the engine's defaults (data/engine-defaults.yaml); absent: the newest listed.",
  ),
  precision: optional(
    z.enum(PRECISIONS, { error: says(`must be one of ${PRECISIONS.join(', ')}`) }),
    "Weight precision of the matmuls (default: the catalog model's own).",
  ),
  context_length: contextLengthSchema,
  frontend: z.prefault(frontendSchema, {}),
  workers: described(
    z.prefault(
      strict({
        aggregated: optional(
          workerRoleSchema,
          'Workers that prefill and decode the requests they are given (the layout when engine.workers is empty).',
        ),
        prefill: optional(
          workerRoleSchema,
          'Disaggregated serving: workers that prefill each prompt and emit its first token, then hand its KV to a decode worker.',
        ),
        decode: optional(
          workerRoleSchema,
          'Disaggregated serving: workers that receive a prefilled request and its KV and generate the rest of its tokens.',
        ),
      }),
      {},
    ),
    'Engine workers: aggregated, or prefill and decode pools (docs/replay-model.md, "Disaggregated prefill and decode"); each block has parallelism, scheduler, kv_cache and timing.',
  ),
  // Built when a config first has the block (or the JSON Schema is written): most runs have none.
  kv_transfer: z.optional(z.lazy(kvTransferSchema)),
  router: z.optional(z.lazy(routerSchema)),
  tokenization: z.optional(z.lazy(tokenizationSchema)),
  detokenization: z.optional(detokenizationSchema),
});

// ---- traffic ----------------------------------------------------------------------------

const sourceSchema = described(
  byType(
    ['synthetic', 'synthetic-session', 'trace'],
    [
      strict({
        type: z._default(exactly('synthetic'), 'synthetic'),
        input_tokens: withDefault(
          tokens(),
          1024,
          'Prompt tokens: every prompt, the mean with input_tokens_stddev, the upper end when random_range_ratio < 1.',
        ),
        output_tokens: withDefault(
          nonNegativeInt(L.MAX_TOKENS_PER_REQUEST, 'tokens per request'),
          128,
          'Output tokens: every output, the mean with output_tokens_stddev, the upper end when random_range_ratio < 1.',
        ),
        random_range_ratio: withDefault(
          fraction(),
          1,
          "Lengths are drawn uniformly between ratio x value and value, as SGLang's bench_serving --random-range-ratio (and InferenceX's 0.8); 1 = fixed.",
        ),
        // Absent unless written (absent means 0), so that earlier configs keep their sweep point ids.
        input_tokens_stddev: optional(
          cost(),
          "Standard deviation of the prompt length, as AIPerf's --isl-stddev: lengths are drawn from a normal distribution of mean input_tokens, rounded, within [1, mean + 4 sd]; absent or 0: fixed (AIPerf's default).",
        ),
        output_tokens_stddev: optional(
          cost(),
          "Standard deviation of the output length, as AIPerf's --osl-stddev (same rule, at least 1 token); absent or 0: fixed.",
        ),
        dataset_entries: optional(
          positiveInt(L.MAX_REQUESTS, 'requests'),
          "Distinct prompts the requests repeat, as AIPerf's --num-dataset-entries (whose default is 100): each entry's lengths are drawn once, and a request that repeats an entry's prompt finds its blocks in the engine's prefix cache; absent: every request its own prompt (vLLM's and SGLang's benchmark clients).",
        ),
        dataset_sampling: optional(
          z.enum(['shuffle', 'sequential', 'random'], { error: says('must be shuffle, sequential or random') }),
          "How requests take the dataset's entries, as AIPerf's --dataset-sampling-strategy: shuffle (each pass over the entries in a fresh random order; the default), sequential (entry order) or random (independent draws). Needs dataset_entries.",
        ),
        seed: withDefault(seed(), 0, 'Seed of the length draws.'),
      }),
      strict({
        type: exactly('synthetic-session'),
        turns: described(positiveInt(L.MAX_REQUESTS, 'requests'), 'Turns per session.'),
        new_input_tokens_per_turn: described(tokens(), 'New prompt tokens per turn; each turn resends the conversation so far.'),
        output_tokens_per_turn: described(nonNegativeInt(L.MAX_TOKENS_PER_REQUEST, 'tokens per request'), 'Output tokens per turn.'),
        inter_turn_delay_ms: withDefault(cost(), 0, 'Wait after the client acted on a turn before sending the next, ms.'),
      }),
      strict({
        type: exactly('trace'),
        path: described(nonEmptyPath(), 'Trace file; a relative path is relative to the config file.'),
        format: withDefault(
          z.enum(['mooncake', 'vllm-log'], { error: says('must be mooncake or vllm-log') }),
          'mooncake',
          'Trace format: mooncake (JSONL with timestamp, input_length, output_length, hash_ids) or vllm-log (a vLLM per-request log: its folder or its requests.jsonl; docs/request-logs.md).',
        ),
        block_size: withDefault(
          positiveInt(L.MAX_BLOCK_SIZE, 'tokens per block'),
          512,
          'Tokens per hash_ids entry of the trace (vllm-log: of the prompt blocks each request keeps to itself).',
        ),
      }),
    ],
  ),
  'Where requests come from.',
);

const responseOverheadSchema = optional(
  strict({
    base_ms: withDefault(cost(), 0, 'Per response, ms.'),
    per_output_token_us: withDefault(cost(), 0, 'Per output token of the response, us.'),
    // Absent unless written (absent means 0), so that earlier configs keep their sweep point ids.
    per_inflight_us: optional(
      cost(),
      'Per other request in flight when the response ends, us (absent: 0): a client busier with more streams turns around later.',
    ),
  }),
  'Optional: client-side cost before acting on a finished response (docs/client-path.md).',
);

const loadSchema = described(
  byType(
    ['concurrency', 'poisson', 'constant_rate', 'trace_timestamps'],
    [
      strict({
        type: z._default(exactly('concurrency'), 'concurrency'),
        concurrency: withDefault(positiveInt(L.MAX_CONCURRENCY, 'closed-loop slots'), 10, 'Closed-loop slots.'),
        ramp_up_ms: withDefault(
          cost(),
          0,
          'Slot k (0-based) sends its first request at k x ramp_up_ms / concurrency; 0 = every slot at t = 0.',
        ),
        response_overhead: responseOverheadSchema,
      }),
      strict({
        type: exactly('poisson'),
        requests_per_second: described(
          inRange(L.MIN_REQUEST_RATE, L.MAX_REQUEST_RATE, 'requests per second', 'is required with type poisson'),
          'Mean arrival rate.',
        ),
        seed: withDefault(seed(), 42, 'Seed of the arrival gaps.'),
        response_overhead: responseOverheadSchema,
      }),
      strict({
        type: exactly('constant_rate'),
        requests_per_second: described(
          inRange(L.MIN_REQUEST_RATE, L.MAX_REQUEST_RATE, 'requests per second', 'is required with type constant_rate'),
          'Arrival rate; gaps are exactly 1000 / rate ms.',
        ),
        response_overhead: responseOverheadSchema,
      }),
      strict({
        type: exactly('trace_timestamps'),
        speedup: withDefault(inRange(L.MIN_SPEEDUP, L.MAX_SPEEDUP, 'speedup'), 1, 'Divides the trace timestamps.'),
        response_overhead: responseOverheadSchema,
      }),
    ],
  ),
  'How requests are sent.',
);

const stopFields = described(
  strict({
    requests: optional(positiveInt(L.MAX_REQUESTS, 'requests'), 'Total requests sent (for a trace, its first N rows).'),
    requests_per_load_unit: optional(
      positive(L.MAX_REQUESTS, 'requests'),
      'Requests = round(this x concurrency, or x requests_per_second), at least 1.',
    ),
    max_virtual_time_seconds: optional(
      positive(L.MAX_VIRTUAL_TIME_SECONDS, 'virtual time'),
      'Nothing after this virtual time is recorded.',
    ),
  }),
  'Exactly one stop condition.',
  { minProperties: 1, maxProperties: 1 },
);
const stopSchema = z.pipe(
  z.prefault(stopFields, { requests: 100 }),
  // The exactly-one rule is checked in rules.ts; this only narrows the type.
  z.transform((stop: z.output<typeof stopFields>) => stop as StopConfig),
);

const trafficSchema = strict({
  source: z.prefault(sourceSchema, {}),
  load: z.prefault(loadSchema, {}),
  stop: stopSchema,
});

const reportSchema = strict({
  warmup_requests: withDefault(nonNegativeInt(L.MAX_REQUESTS, 'requests'), 0, 'The first N requests sent are left out of every metric.'),
});

/** The whole run config. Parse with `parseRunConfig` (load.ts), which adds the cross-field rules. */
export const runConfigSchema = strict({
  engine: z.prefault(engineSchema, {}),
  traffic: z.prefault(trafficSchema, {}),
  report: z.prefault(reportSchema, {}),
});

// Compile-time check: the schema's output is exactly the RunConfig the core consumes.
// The keys left optional here (the scheduler's limits, the timing block) get the engine's and the
// catalog's defaults after parsing (load.ts), so the schema's output is a RunConfig with those
// keys possibly absent.
type SchemaOutput = z.output<typeof runConfigSchema>;
const runConfigIsOutput = (config: RunConfig): SchemaOutput => config;
void runConfigIsOutput;
