/**
 * Cross-field rules of a run config (docs/config.md) that a per-field schema cannot
 * express. They run on a config that already passed `schema.ts`, and return every broken
 * rule as a (dotted path, reason) pair.
 */
import { autoKvCapacity, deploymentOf, kvTransferOf } from './deployment.js';
import { kvBlocksPerRank, largestSyntheticPromptTokens } from './kv-capacity.js';
import { MAX_KV_BLOCKS, MAX_RANKS, MAX_REQUESTS, MAX_TOKENS_PER_REQUEST, formatCount } from './limits.js';
import { loadUnitOf, stopRequests } from './stop.js';
import type { RunConfig } from './types.js';
import { roleOf, rolePath, workerRoles, type WorkerRole, type WorkerRoleName } from './roles.js';

export interface RuleViolation {
  path: string;
  reason: string;
}

export function checkRunConfigRules(config: RunConfig): RuleViolation[] {
  const violations: RuleViolation[] = [];
  const { source, load, stop } = config.traffic;

  // One length distribution at a time: SGLang's uniform range or AIPerf's normal spread.
  if (source.type === 'synthetic' && source.random_range_ratio < 1) {
    for (const key of ['input_tokens_stddev', 'output_tokens_stddev'] as const) {
      if ((source[key] ?? 0) > 0) {
        violations.push({
          path: `traffic.source.${key}`,
          reason: `is ${source[key]} with random_range_ratio ${source.random_range_ratio}: draw lengths one way, a uniform range (random_range_ratio) or a normal spread (the stddev keys)`,
        });
      }
    }
  }

  // Sampling says how requests take a dataset's entries: without entries there is nothing to take.
  if (source.type === 'synthetic' && source.dataset_sampling !== undefined && source.dataset_entries === undefined) {
    violations.push({
      path: 'traffic.source.dataset_sampling',
      reason: `is ${source.dataset_sampling} without dataset_entries: sampling chooses among a dataset's entries; set dataset_entries (AIPerf's --num-dataset-entries) or remove dataset_sampling`,
    });
  }

  for (const role of workerRoles(config.engine)) violations.push(...roleRules(config, role));
  const transfer = kvTransferOf(config.engine).problem;
  if (transfer !== null) violations.push({ path: `engine.kv_transfer.${transfer.key}`, reason: transfer.reason });

  const largestPrompt = largestSyntheticPromptTokens(source);
  if (source.type === 'synthetic-session' && largestPrompt !== null && largestPrompt > MAX_TOKENS_PER_REQUEST) {
    violations.push({
      path: 'traffic.source.turns',
      reason:
        `turn ${source.turns} would resend ${formatCount(largestPrompt)} prompt tokens, more than the limit of` +
        ` ${formatCount(MAX_TOKENS_PER_REQUEST)} tokens per request; use fewer turns or shorter turns`,
    });
  }
  if (load.type === 'trace_timestamps' && source.type !== 'trace') {
    violations.push({
      path: 'traffic.load.type',
      reason: `trace_timestamps needs a trace source, got source type ${source.type}`,
    });
  }

  const stopKeys = Object.keys(stop);
  if (stopKeys.length !== 1) {
    violations.push({
      path: 'traffic.stop',
      reason:
        'must set exactly one of requests, requests_per_load_unit, max_virtual_time_seconds, ' +
        (stopKeys.length === 0 ? 'got none' : `got ${stopKeys.join(', ')}`),
    });
  }
  const unit = loadUnitOf(load);
  if ('requests_per_load_unit' in stop && unit !== null) {
    const requests = stopRequests({ load, stop }) as number;
    if (requests > MAX_REQUESTS) {
      violations.push({
        path: 'traffic.stop.requests_per_load_unit',
        reason: `${stop.requests_per_load_unit} x ${unit} makes ${formatCount(requests)} requests, more than the limit of ${formatCount(MAX_REQUESTS)}`,
      });
    }
  }
  if ('requests_per_load_unit' in stop && load.type === 'trace_timestamps') {
    violations.push({
      path: 'traffic.stop.requests_per_load_unit',
      reason: 'has no load unit with trace_timestamps; use requests or max_virtual_time_seconds',
    });
  }

  if ('requests' in stop && stopKeys.length === 1 && config.report.warmup_requests >= stop.requests) {
    violations.push({
      path: 'report.warmup_requests',
      reason: `is ${config.report.warmup_requests}, not less than traffic.stop.requests (${stop.requests}); every request would be warmup`,
    });
  }

  return violations;
}

/** Keys of `scheduler` that only one backend's scheduler reads (docs/config.md, "Schedulers"). */
function schedulerRules(config: RunConfig, name: WorkerRoleName): RuleViolation[] {
  const scheduler = roleOf(config.engine, name).scheduler;
  const ROLE = rolePath(name);
  const policy = scheduler.policy ?? config.engine.backend;
  const why = scheduler.policy === undefined ? `engine.backend is ${policy}` : `scheduler.policy is ${policy}`;
  const out: RuleViolation[] = [];
  const order = scheduler.schedule_policy;
  if (order === 'priority' && policy !== 'vllm') {
    out.push({ path: `${ROLE}.scheduler.schedule_policy`, reason: `priority is vLLM's (--scheduling-policy priority), but ${why}` });
  }
  if (order === 'lpm' && policy !== 'sglang') {
    out.push({ path: `${ROLE}.scheduler.schedule_policy`, reason: `lpm is SGLang's (--schedule-policy lpm), but ${why}` });
  }
  if (scheduler.capacity_policy !== undefined && policy !== 'trtllm') {
    out.push({ path: `${ROLE}.scheduler.capacity_policy`, reason: `is read by the trtllm scheduler only, but ${why}` });
  }
  if (scheduler.schedule_conservativeness !== undefined && policy !== 'sglang') {
    out.push({ path: `${ROLE}.scheduler.schedule_conservativeness`, reason: `is read by the sglang scheduler only, but ${why}` });
  }
  if (scheduler.priority_levels !== undefined && order !== 'priority') {
    out.push({ path: `${ROLE}.scheduler.priority_levels`, reason: 'is read with schedule_policy: priority only' });
  }
  return out;
}

/** The rules of one worker role's block (`engine.workers.<role>`). */
function roleRules(config: RunConfig, { name, path: ROLE, config: role }: WorkerRole): RuleViolation[] {
  const violations: RuleViolation[] = [];
  const timing = role.timing;
  if (timing.type === 'linear') {
    const { base_ms, prefill_token_us, prefill_pair_ns, decode_request_us, decode_kv_token_ns } = timing;
    if (base_ms + prefill_token_us + prefill_pair_ns + decode_request_us + decode_kv_token_ns === 0) {
      violations.push({
        path: `${ROLE}.timing`,
        reason: 'all linear coefficients are 0, so every pass would take 0 ms; set at least one above 0',
      });
    }
  } else if (timing.type === 'fixed' && timing.prefill_ms === 0 && timing.decode_ms === 0) {
    violations.push({
      path: `${ROLE}.timing`,
      reason: 'prefill_ms and decode_ms are both 0, so every pass would take 0 ms; set at least one above 0',
    });
  }

  violations.push(...schedulerRules(config, name));

  const parallelism = role.parallelism;
  const gpus = parallelism.tensor * parallelism.attention_data;
  if (gpus % parallelism.expert !== 0) {
    violations.push({
      path: `${ROLE}.parallelism.expert`,
      reason: `must divide the worker's GPUs (tensor ${parallelism.tensor} x attention_data ${parallelism.attention_data} = ${gpus}), got ${parallelism.expert}`,
    });
  }
  const { replicas, attention_data } = parallelism;
  if (replicas * attention_data > MAX_RANKS) {
    violations.push({
      path: `${ROLE}.parallelism.replicas`,
      reason: `${replicas} replicas x ${attention_data} attention-DP ranks make ${formatCount(replicas * attention_data)} ranks, more than the limit of ${formatCount(MAX_RANKS)}`,
    });
  }

  // Roofline timing and an auto KV pool (when written) need the catalog's model and GPU.
  const capacity = role.kv_cache.capacity;
  const needs = timing.type === 'roofline' ? 'timing type roofline' : capacity.type === 'auto' ? 'kv_cache.capacity type auto' : null;
  const found = deploymentOf(config.engine, role);
  if (needs !== null && found.deployment === null) {
    const name = found.missing === 'model' ? config.engine.model : config.engine.hardware;
    const list = found.missing === 'model' ? 'models' : 'hardware';
    violations.push({
      path: `engine.${found.missing}`,
      reason: `${JSON.stringify(name)} is not in the catalog, which ${needs} needs (servesim catalog ${list} lists it; docs/hardware-and-models.md says how to add one)`,
    });
  }
  const tooManyBlocks = (blocks: number, hint: string) =>
    violations.push({
      path: `${ROLE}.kv_cache.capacity`,
      reason: `gives ${formatCount(blocks)} KV blocks per rank, more than the limit of ${formatCount(MAX_KV_BLOCKS)}${hint}`,
    });
  if (capacity.type === 'auto' && found.deployment !== null) {
    const auto = autoKvCapacity(config.engine, role);
    const blocks = kvBlocksPerRank(config.engine, role) ?? 0;
    if (blocks > MAX_KV_BLOCKS) tooManyBlocks(blocks, '; raise kv_cache.block_size');
    if (auto !== null && blocks < 1) {
      const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(1);
      violations.push({
        path: `${ROLE}.kv_cache.capacity`,
        reason:
          `leaves no room for the KV cache: ${found.deployment.model.id} (${found.deployment.precision}) needs ${gib(auto.weightBytesPerGpu)} GiB of weights` +
          ` and ${gib(auto.reserveBytesPerGpu + auto.sequenceStateBytesPerGpu)} GiB of activations per GPU of ${gib(auto.usableBytesPerGpu)} GiB usable` +
          ` on ${found.deployment.hardware.id}; use more GPUs (parallelism.tensor) or a lower precision`,
      });
    }
  }
  if (capacity.type === 'memory') {
    const blocks = kvBlocksPerRank(config.engine, role) ?? 0;
    if (blocks > MAX_KV_BLOCKS) {
      tooManyBlocks(blocks, ` (is kv_bytes_per_token ${capacity.kv_bytes_per_token} bytes for all layers and KV heads?)`);
    }
    if (blocks < 1) {
      violations.push({
        path: `${ROLE}.kv_cache.capacity`,
        reason:
          `leaves no room for the KV cache: tensor ${role.parallelism.tensor} x ${capacity.gpu_memory_gib} GiB` +
          ` x ${capacity.memory_fraction} - ${capacity.weights_gib} GiB of weights gives ${blocks} blocks` +
          ` of ${role.kv_cache.block_size} tokens (need at least 1)`,
      });
    }
  }

  const largestPrompt = largestSyntheticPromptTokens(config.traffic.source);
  const source = config.traffic.source;
  const budget = role.scheduler.max_batched_tokens;
  if (!role.scheduler.chunked_prefill && largestPrompt !== null && largestPrompt > budget) {
    const what = source.type === 'synthetic-session' ? `the last session turn's prompt` : 'the prompt';
    violations.push({
      path: `${ROLE}.scheduler.max_batched_tokens`,
      reason:
        `is ${budget}, smaller than ${what} (${largestPrompt} tokens) with chunked_prefill: false;` +
        ' such a request could never be scheduled',
    });
  }

  return violations;
}
