/**
 * The catalog's file formats: one YAML file per model (`data/models/<id>.yaml`, the
 * architecture fields of the checkpoint's own `config.json`) and one per GPU
 * (`data/hardware/<id>.yaml`, datasheet figures). Objects are strict: an unknown key is an
 * error naming the file and the dotted path, like a run config's. docs/hardware-and-models.md
 * explains every field and how to add an entry.
 *
 * Built with `zod/mini`, like the run-config schema: the replay's bundle then holds no classic zod.
 */
import * as z from 'zod/mini';
import { formatValue } from '../config/errors.js';

type RawIssue = z.core.$ZodRawIssue;

function says(rule: string) {
  return (issue: RawIssue): string => (issue.input === undefined ? `is required (${rule})` : `${rule}, got ${formatValue(issue.input)}`);
}

const POSITIVE_INT = 'must be a positive integer';
const NON_NEGATIVE_INT = 'must be a non-negative integer';
const POSITIVE = 'must be a positive finite number';

const positiveInt = () => z.int({ error: says(POSITIVE_INT) }).check(z.minimum(1, { error: says(POSITIVE_INT) }));
const nonNegativeInt = () => z.int({ error: says(NON_NEGATIVE_INT) }).check(z.minimum(0, { error: says(NON_NEGATIVE_INT) }));
const positive = () => z.number({ error: says(POSITIVE) }).check(z.gt(0, { error: says(POSITIVE) }));
const SHARE = 'must be a number in (0, 1]';
const share = () => z.number({ error: says(SHARE) }).check(z.gt(0, { error: says(SHARE) }), z.maximum(1, { error: says(SHARE) }));
const text = () => z.string({ error: says('must be a string') }).check(z.minLength(1, { error: says('must be a non-empty string') }));
const flag = () => z.boolean({ error: says('must be true or false') });

/** Weight and cache precisions the catalog and run configs name. */
export const PRECISIONS = ['bf16', 'fp8', 'fp4', 'int4'] as const;
export type Precision = (typeof PRECISIONS)[number];
const precision = () => z.enum(PRECISIONS, { error: says(`must be one of ${PRECISIONS.join(', ')}`) });

function strict<S extends z.core.$ZodLooseShape>(shape: S) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue: RawIssue) =>
      issue.code === 'unrecognized_keys' ? `unknown key (allowed: ${allowed})` : says('must be a mapping')(issue),
  });
}

function modelEntry() {
  const attentionSchema = strict({
    type: z.enum(['gqa', 'mla'], { error: says('must be gqa or mla') }),
    heads: positiveInt(),
    kv_heads: positiveInt(),
    head_dim: positiveInt(),
    bias: z._default(flag(), false),
    q_lora_rank: z.optional(z.nullable(positiveInt())),
    kv_lora_rank: z.optional(positiveInt()),
    qk_nope_head_dim: z.optional(positiveInt()),
    qk_rope_head_dim: z.optional(positiveInt()),
    v_head_dim: z.optional(positiveInt()),
    sliding_window: z.optional(positiveInt()),
    sliding_window_layers: z.optional(nonNegativeInt()),
    linear_attention_layers: z.optional(nonNegativeInt()),
    linear_attention: z.optional(
      strict({
        key_heads: positiveInt(),
        value_heads: positiveInt(),
        key_head_dim: positiveInt(),
        value_head_dim: positiveInt(),
        conv_kernel: positiveInt(),
      }),
    ),
    indexer: z.optional(strict({ heads: positiveInt(), head_dim: positiveInt(), topk: positiveInt() })),
    output_gate: z._default(flag(), false),
  });

  const moeSchema = strict({
    experts: positiveInt(),
    experts_per_token: positiveInt(),
    expert_intermediate_size: positiveInt(),
    shared_experts: z._default(nonNegativeInt(), 0),
    shared_expert_intermediate_size: z.optional(positiveInt()),
    dense_layers: z._default(nonNegativeInt(), 0),
  });

  return strict({
    id: text(),
    name: text(),
    aliases: z._default(z.array(text(), { error: says('must be a list of names') }), []),
    model_type: text(),
    precision: precision(),
    /** Which weights `precision` covers: all matmuls, or only the routed experts (the rest BF16). */
    quantized: z._default(z.enum(['all', 'experts'], { error: says('must be all or experts') }), 'all'),
    /**
     * The KV cache type the checkpoint's quantization config asks for (`kv_cache_quant_algo`, or an
     * 8-bit float `kv_cache_scheme`); absent: none. Engines that honour it use it when launched
     * without a KV cache type (`kvPrecisionOf` in config/deployment.ts).
     */
    kv_cache_dtype: z.optional(z.enum(['fp8'], { error: says('must be fp8 (the only type checkpoints ask for here)') })),
    parameters: strict({ total: positive(), active: positive(), note: z.optional(text()) }),
    architecture: strict({
      layers: positiveInt(),
      hidden_size: positiveInt(),
      vocab_size: positiveInt(),
      tie_word_embeddings: z._default(flag(), false),
      intermediate_size: z.optional(positiveInt()),
      attention: attentionSchema,
      moe: z.optional(moeSchema),
      mtp_layers: z._default(nonNegativeInt(), 0),
    }),
    max_context: positiveInt(),
    sources: z.record(z.string(), text(), { error: says('must be a mapping of source names to citations') }),
  });
}

/** A model file's schema, built when a model file is first read (building it costs every command's start-up). */
export const modelEntrySchema = z.lazy(modelEntry);

export type ModelEntry = z.output<typeof modelEntrySchema>;

function hardwareEntry() {
  return strict({
    id: text(),
    name: text(),
    vendor: text(),
    architecture: text(),
    aliases: z._default(z.array(text(), { error: says('must be a list of names') }), []),
    memory: strict({
      capacity_gb: positive(),
      reported_mib: z.optional(positive()),
      bandwidth_gb_per_s: positive(),
    }),
    compute: strict({
      bf16: positive(),
      fp8: z.nullable(positive()),
      fp4: z.nullable(positive()),
      int8: z.optional(z.nullable(positive())),
    }),
    interconnect: strict({
      scale_up: z.enum(['nvlink', 'infinity_fabric', 'pcie'], { error: says('must be nvlink, infinity_fabric or pcie') }),
      scale_up_gb_per_s: positive(),
      scale_up_domain_gpus: positiveInt(),
      pcie_gb_per_s: positive(),
      network_gb_per_s: z.optional(positive()),
      /**
       * Share of scale_up_gb_per_s / 2 that the engines' all-reduce reaches as bus bandwidth on
       * prefill-sized messages, measured (docs/hardware-and-models.md): with `--measured-link`,
       * the accuracy benchmark's catalog fit holds `link` there on this GPU.
       */
      all_reduce_share: z.optional(share()),
    }),
    tdp_w: positive(),
    /** An on-demand list price (USD per GPU-hour), where one can be cited: the default of a replay's cost. */
    price: z.optional(
      strict({
        per_gpu_hour: positive(),
        date: z
          .string({ error: says('must be a date, YYYY-MM-DD') })
          .check(z.regex(/^\d{4}-\d{2}-\d{2}$/, { error: says('must be a date, YYYY-MM-DD') })),
        source: text(),
      }),
    ),
    sources: strict({ datasheet: text(), other: z.optional(z.array(text())) }),
    notes: z.optional(text()),
  });
}

/** A GPU file's schema, built when a GPU file is first read. */
export const hardwareEntrySchema = z.lazy(hardwareEntry);

export type HardwareEntry = z.output<typeof hardwareEntrySchema>;
