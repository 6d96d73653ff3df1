/**
 * The replay benchmark's workloads: closed loops of ISL 512 / OSL 128 at 1k, 4k and 16k
 * concurrency with 4 requests per slot, the 1k loop under each scheduler and with the whole
 * client path on, a Poisson
 * overload with a KV pool small enough to preempt, a million requests (all with `linear` timing,
 * max_sequences 256 and max_batched_tokens 8192), the 1k loop with roofline timing, a
 * disaggregated 1k loop (2 prefill and 4 decode workers, ISL 4096 / OSL 512), and the bundled Mooncake conversation trace at
 * its timestamps as a user replays it: prefix caching from its hash ids and kv_aware routing over
 * four replicas. Paths are relative to the repository root (where `npm run bench` runs).
 */
import { roleOf } from '../src/config/roles.js';

const LINEAR = {
  type: 'linear',
  base_ms: 5,
  prefill_token_us: 60,
  prefill_pair_ns: 0.5,
  decode_request_us: 40,
  decode_kv_token_ns: 30,
};

const SCHEDULER = { max_batched_tokens: 8192, max_sequences: 256, chunked_prefill: true };

function closed(concurrency: number, requests: number, scheduler: Record<string, unknown> = {}) {
  return {
    engine: { workers: { aggregated: { scheduler: { ...SCHEDULER, ...scheduler }, timing: LINEAR } } },
    traffic: {
      source: { type: 'synthetic', input_tokens: 512, output_tokens: 128 },
      load: { type: 'concurrency', concurrency },
      stop: { requests },
    },
  };
}

const CLIENT_PATH = {
  tokenization: { workers: 4, base_ms: 0.3, per_input_us: 1 },
  detokenization: { workers: 4, base_ms: 0.2, per_output_us: 20 },
};

export const WORKLOADS: Record<string, () => unknown> = {
  'closed-1k': () => closed(1024, 1024 * 4),
  // The same loop under each other scheduler (docs/replay-model.md, "Schedulers").
  'closed-1k-vllm-priority': () => closed(1024, 1024 * 4, { schedule_policy: 'priority', priority_levels: 4 }),
  'closed-1k-sglang': () => closed(1024, 1024 * 4, { policy: 'sglang' }),
  'closed-1k-sglang-lpm': () => closed(1024, 1024 * 4, { policy: 'sglang', schedule_policy: 'lpm' }),
  'closed-1k-trtllm': () => closed(1024, 1024 * 4, { policy: 'trtllm' }),
  'closed-1k-trtllm-max-utilization': () => closed(1024, 1024 * 4, { policy: 'trtllm', capacity_policy: 'max_utilization' }),
  'closed-1k-client-path': () => {
    const cfg = closed(1024, 1024 * 4) as { engine: Record<string, unknown>; traffic: { load: Record<string, unknown> } };
    Object.assign(cfg.engine, CLIENT_PATH);
    cfg.traffic.load.response_overhead = { base_ms: 1.4, per_output_token_us: 3.65 };
    return cfg;
  },
  // The 1k loop with roofline timing (Llama-3.1-8B on one H100, the catalog's factors); the KV
  // pool stays unlimited and the frontend off, so that the loop schedules as closed-1k's does and
  // only the pass-time function differs.
  'closed-1k-roofline': () => {
    const cfg = closed(1024, 1024 * 4) as { engine: Record<string, unknown> & { workers: { aggregated: Record<string, unknown> } } };
    Object.assign(cfg.engine, {
      model: 'meta-llama/Llama-3.1-8B',
      hardware: 'h100_sxm',
      frontend: { base_ms: 0, per_input_us: 0, per_inflight_us: 0 },
    });
    roleOf(cfg.engine, 'aggregated').timing = { type: 'roofline' };
    roleOf(cfg.engine, 'aggregated').kv_cache = { capacity: { type: 'unlimited' } };
    return cfg;
  },
  'closed-4k': () => closed(4096, 4096 * 4),
  'closed-16k': () => closed(16384, 16384 * 4),
  'poisson-overload': () => ({
    engine: {
      workers: {
        aggregated: {
          scheduler: SCHEDULER,
          // 4,000 blocks of 16 tokens: about 100 requests of 640 tokens, far below 256 sequences.
          kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 4000 } },
          timing: LINEAR,
        },
      },
    },
    traffic: {
      source: { type: 'synthetic', input_tokens: 512, output_tokens: 128 },
      load: { type: 'poisson', requests_per_second: 400, seed: 42 },
      stop: { requests: 400 * 60 },
    },
  }),
  million: () => closed(256, 1_000_000),
  // Disaggregated: 2 prefill and 4 decode workers, a closed loop of 1,024 slots of ISL 4096 /
  // OSL 512 (2 requests per slot), the KV transfer at 1 ms + 64 KiB per token over 50 GB/s.
  'closed-1k-disagg': () => ({
    engine: {
      workers: {
        prefill: { parallelism: { replicas: 2 }, scheduler: SCHEDULER, timing: LINEAR },
        decode: { parallelism: { replicas: 4 }, scheduler: SCHEDULER, timing: LINEAR },
      },
      kv_transfer: { latency_ms: 1, kv_bytes_per_token: 65536, bandwidth_gb_per_s: 50 },
    },
    traffic: {
      source: { type: 'synthetic', input_tokens: 4096, output_tokens: 512 },
      load: { type: 'concurrency', concurrency: 1024 },
      stop: { requests: 1024 * 2 },
    },
  }),
  // The 12,031 requests of the trace over its hour, on four replicas of the Qwen3-32B TP2
  // deployment of sweeps/configs/mooncake-conversation.yaml (its KV pool, timing and client path).
  'mooncake-conversation': () => ({
    engine: {
      model: 'Qwen/Qwen3-32B',
      context_length: 40960,
      workers: {
        aggregated: {
          parallelism: { replicas: 4, tensor: 2 },
          scheduler: SCHEDULER,
          kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 20000 }, prefix_caching: true },
          timing: {
            type: 'linear',
            base_ms: 12,
            prefill_token_us: 55,
            prefill_pair_ns: 1.3,
            decode_request_us: 30,
            decode_kv_token_ns: 48,
          },
        },
      },
      router: { type: 'kv_aware' },
      tokenization: { workers: 1, base_ms: 0.3, per_input_us: 0.5 },
      detokenization: { workers: 1, base_ms: 0.3, per_output_us: 4 },
    },
    traffic: {
      source: { type: 'trace', path: 'data/traces/mooncake_fast25_conversation_trace.jsonl' },
      load: { type: 'trace_timestamps', response_overhead: { base_ms: 1.4, per_output_token_us: 3.65 } },
      stop: { requests: 12_031 },
    },
  }),
};
