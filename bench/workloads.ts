/**
 * The replay benchmark's workloads (the replay and client-path issues): closed loops of ISL 512 /
 * OSL 128 at 1k, 4k and 16k concurrency with 4 requests per slot, the 1k loop with the whole
 * client path on, a Poisson overload with a KV pool small enough to preempt, and a million
 * requests. All with `linear` timing, max_sequences 256 and max_batched_tokens 8192, except
 * the 1k loop with roofline timing.
 */

const LINEAR = {
  type: 'linear',
  base_ms: 5,
  prefill_token_us: 60,
  prefill_pair_ns: 0.5,
  decode_request_us: 40,
  decode_kv_token_ns: 30,
};

const SCHEDULER = { max_batched_tokens: 8192, max_sequences: 256, chunked_prefill: true };

function closed(concurrency: number, requests: number) {
  return {
    engine: { workers: { aggregated: { scheduler: SCHEDULER, timing: LINEAR } } },
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
    cfg.engine.workers.aggregated.timing = { type: 'roofline' };
    cfg.engine.workers.aggregated.kv_cache = { capacity: { type: 'unlimited' } };
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
};
