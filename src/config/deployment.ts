/**
 * The catalog side of a run config: which catalog model and GPU `engine.model` and
 * `engine.hardware` name, the deployment they make with the config's precision and parallelism,
 * its KV capacity (`kv_cache.capacity: auto`) and its roofline coefficients (`timing: roofline`).
 */
import { findHardware, findModel } from '../catalog/load.js';
import { efficiencyFor, type EfficiencyFactors } from '../catalog/efficiency.js';
import { captureTable, engineMemory, versionAtLeast, type EngineMemory } from '../catalog/engine-defaults.js';
import { kvCapacity, rooflineCoefficients, weightBytesPerGpu, type Deployment, type KvCapacity } from '../catalog/deployment.js';
import type { RooflineCoefficients } from '../core/roofline.js';
import type { ModelEntry } from '../catalog/schema.js';
import type { Price } from './cost.js';
import type { EngineConfig, Precision, WorkerRoleConfig } from './types.js';
import { entryRole, isDisaggregated, roleOf } from './roles.js';
import { BYTES_PER_ELEMENT, kvBytesPerToken } from '../catalog/architecture.js';
import type { KvTransfer } from '../core/run.js';

/**
 * How the engine that schedules sizes its KV cache when the config does not say
 * (data/engine-defaults.yaml): vLLM's --gpu-memory-utilization of the whole GPU, SGLang's
 * mem_fraction_static (by GPU memory and tensor-parallel size), TensorRT-LLM's
 * free_gpu_memory_fraction of the memory left after weights and activations. Without a catalog
 * GPU: vLLM's 0.9 of the whole GPU.
 */
export function defaultMemory(engine: EngineConfig, role: WorkerRoleConfig): EngineMemory {
  const hardware = findHardware(engine.hardware);
  const policy = role.scheduler.policy ?? engine.backend;
  if (hardware === undefined) return { fraction: 0.9, kvOf: 'total' };
  return engineMemory({
    backend: policy,
    version: policy === engine.backend ? engine.backend_version : undefined,
    hardware,
    tensor: role.parallelism.tensor,
  });
}

/** The default memory share of a config (`defaultMemory`'s fraction). */
export function defaultMemoryFraction(engine: EngineConfig, role: WorkerRoleConfig): number {
  return defaultMemory(engine, role).fraction;
}

/** The weights' precision (`engine.precision`, else the checkpoint's) and whether it covers the routed experts only. */
function weightsOf(engine: EngineConfig, model: ModelEntry): { precision: Precision; expertsOnly: boolean } {
  return { precision: engine.precision ?? model.precision, expertsOnly: engine.precision === undefined && model.quantized === 'experts' };
}

/**
 * vLLM releases that give a launch without `--kv-cache-dtype` the checkpoint's KV cache type
 * (`resolve_kv_cache_dtype_string`, vllm/utils/torch_utils.py): the change (vllm-project/vllm
 * PR #30785) was merged on 2025-12-16, so 0.14.0 is the first minor release taken to have it;
 * 0.13.0, cut about then, is not known to and keeps BF16.
 */
export const VLLM_CHECKPOINT_KV_FROM = '0.14.0';

/**
 * The KV cache type of a worker role (docs/hardware-and-models.md): `kv_cache.dtype` when written;
 * under `auto`, what the engine starts with when launched without a KV cache type. A checkpoint
 * may ask for one: NVIDIA Model Optimizer's NVFP4 exports ask for FP8, so `engine.precision: fp4`
 * on a model whose own checkpoint is not FP4 (served from such an export) does, and a catalog
 * model says so itself (`kv_cache_dtype`). TensorRT-LLM takes FP8 with FP8 or FP4 weights
 * (quantized beyond the experts); vLLM takes the checkpoint's from VLLM_CHECKPOINT_KV_FROM (or
 * when no version is given); SGLang and the others keep BF16.
 */
export function kvPrecisionOf(engine: EngineConfig, role: WorkerRoleConfig, model: ModelEntry): Precision {
  const dtype = role.kv_cache.dtype;
  if (dtype !== 'auto') return dtype;
  const { precision, expertsOnly } = weightsOf(engine, model);
  const asked = engine.precision === 'fp4' && model.precision !== 'fp4' ? 'fp8' : model.kv_cache_dtype;
  if (engine.backend === 'trtllm') return asked ?? ((precision === 'fp8' || precision === 'fp4') && !expertsOnly ? 'fp8' : 'bf16');
  if (engine.backend === 'vllm' && asked !== undefined) {
    const version = engine.backend_version;
    if (version === undefined || versionAtLeast(version, VLLM_CHECKPOINT_KV_FROM)) return asked;
  }
  return 'bf16';
}

/** The deployment of a config's engine and worker role, or why there is none (a name not in the catalog). */
export function deploymentOf(
  engine: EngineConfig,
  role: WorkerRoleConfig,
): { deployment: Deployment; missing: null } | { deployment: null; missing: 'model' | 'hardware' } {
  const model = findModel(engine.model);
  if (model === undefined) return { deployment: null, missing: 'model' };
  const hardware = findHardware(engine.hardware);
  if (hardware === undefined) return { deployment: null, missing: 'hardware' };
  const { precision, expertsOnly } = weightsOf(engine, model);
  const kvPrecision = kvPrecisionOf(engine, role, model);
  return {
    deployment: {
      model,
      hardware,
      backend: engine.backend,
      precision,
      expertsOnly,
      kvPrecision,
      tensor: role.parallelism.tensor,
      attentionData: role.parallelism.attention_data,
      expert: role.parallelism.expert,
      maxBatchedTokens: role.scheduler.max_batched_tokens,
      maxSequences: role.scheduler.max_sequences,
      captureSize: captureTable(
        {
          backend: role.scheduler.policy ?? engine.backend,
          version: (role.scheduler.policy ?? engine.backend) === engine.backend ? engine.backend_version : undefined,
          hardware,
          tensor: role.parallelism.tensor,
        },
        role.scheduler.max_sequences,
        role.scheduler.max_batched_tokens,
        { maxBatch: role.scheduler.cuda_graph_max_batch, padding: role.scheduler.cuda_graph_padding },
      ),
    },
    missing: null,
  };
}

/** KV capacity of an `auto` pool (null when the model or GPU is not in the catalog). */
export function autoKvCapacity(engine: EngineConfig, role: WorkerRoleConfig): KvCapacity | null {
  const capacity = role.kv_cache.capacity;
  const { deployment } = deploymentOf(engine, role);
  if (deployment === null) return null;
  const engineRule = defaultMemory(engine, role);
  const utilization = capacity.type === 'auto' ? (capacity.gpu_memory_utilization ?? engineRule.fraction) : engineRule.fraction;
  const reserve = capacity.type === 'auto' ? capacity.reserve_gib : undefined;
  return kvCapacity(
    deployment,
    utilization,
    reserve,
    engineRule.kvOf,
    engineRule.stateToKvRatio !== undefined ? { stateToKvRatio: engineRule.stateToKvRatio } : {},
  );
}

/** The efficiency factors of a roofline timing: the catalog's for the GPU and backend, with the config's overrides. */
export function effectiveEfficiency(
  engine: EngineConfig,
  role: WorkerRoleConfig,
  hardwareId: string,
): { factors: EfficiencyFactors; source: string } {
  const found = efficiencyFor(hardwareId, engine.backend, undefined, engine.backend_version);
  const overrides = role.timing.type === 'roofline' ? (role.timing.efficiency ?? {}) : {};
  const factors = { ...found.factors };
  let overridden = false;
  for (const [name, value] of Object.entries(overrides)) {
    if (value !== undefined) {
      factors[name as keyof EfficiencyFactors] = value;
      overridden = true;
    }
  }
  return { factors, source: overridden ? `${found.source}, with the config's overrides` : found.source };
}

/** Roofline coefficients of a config's worker role (the model and GPU must be in the catalog: the rules check it). */
export function rooflineOf(engine: EngineConfig, role: WorkerRoleConfig): RooflineCoefficients {
  const { deployment } = deploymentOf(engine, role);
  if (deployment === null) throw new Error('roofline timing needs engine.model and engine.hardware in the catalog');
  return rooflineCoefficients(deployment, effectiveEfficiency(engine, role, deployment.hardware.id).factors);
}

/** What `summary.json` says of the deployment (`deployment`), for any config. */
export interface DeploymentSummary {
  /** GPUs of every replica together. */
  gpus: number;
  /** Weights one GPU holds, GiB (null when the model or GPU is not in the catalog). */
  weights_gib_per_gpu: number | null;
  /** KV cache tokens of one attention-DP rank (null for an unlimited pool). */
  kv_cache_tokens_per_rank: number | null;
}

export function deploymentSummary(engine: EngineConfig, role: WorkerRoleConfig, kvBlocks: number | null): DeploymentSummary {
  const p = role.parallelism;
  const { deployment } = deploymentOf(engine, role);
  return {
    gpus: p.replicas * p.tensor * p.attention_data,
    weights_gib_per_gpu: deployment === null ? null : Math.round((weightBytesPerGpu(deployment) / 2 ** 30) * 1000) / 1000,
    kv_cache_tokens_per_rank: kvBlocks === null ? null : kvBlocks * role.kv_cache.block_size,
  };
}

/**
 * The catalog's list price of the config's GPU (`engine.hardware`), or null when the GPU is not in
 * the catalog or the catalog cites no price for it.
 */
export function catalogPrice(engine: EngineConfig): Price | null {
  const hardware = findHardware(engine.hardware);
  if (hardware?.price === undefined) return null;
  // The citation itself is in the GPU's catalog file.
  return { per_gpu_hour: hardware.price.per_gpu_hour, source: `catalog ${hardware.id}, list price of ${hardware.price.date}` };
}

/**
 * The frontend delay of a run: `engine.frontend`'s numbers; under `auto`, the catalog's fitted
 * `frontend_ms` and `frontend_us_per_token` with roofline timing (with the config's overrides), else 0.
 */
export function frontendOf(config: { engine: EngineConfig }): { baseMs: number; perInputUs: number; perInflightUs: number } {
  const { engine } = config;
  const { base_ms, per_input_us } = engine.frontend;
  const per_inflight_us = engine.frontend.per_inflight_us ?? 'auto';
  let fitted: EfficiencyFactors | null = null;
  if (base_ms === 'auto' || per_input_us === 'auto' || per_inflight_us === 'auto') {
    const role = entryRole(engine).config;
    const { deployment } = deploymentOf(engine, role);
    if (role.timing.type === 'roofline' && deployment !== null) fitted = effectiveEfficiency(engine, role, deployment.hardware.id).factors;
  }
  return {
    baseMs: base_ms !== 'auto' ? base_ms : (fitted?.frontend_ms ?? 0),
    perInputUs: per_input_us !== 'auto' ? per_input_us : (fitted?.frontend_us_per_token ?? 0),
    perInflightUs: per_inflight_us !== 'auto' ? per_inflight_us : (fitted?.frontend_us_per_inflight ?? 0),
  };
}

/**
 * The KV transfer of a disaggregated config (docs/replay-model.md, "Disaggregated prefill and
 * decode"), or null for aggregated workers. Values `engine.kv_transfer` leaves out come from the
 * catalog: the KV bytes of one token on one GPU of the pool with fewer tensor-parallel GPUs (each
 * GPU sends or receives its shard over its own link, in parallel), and the GPU's NVLink bandwidth
 * in one direction when every GPU of both pools is in one NVLink domain, else its network link.
 * Where the catalog cannot say, `problem` names the key to write.
 */
export function kvTransferOf(engine: EngineConfig): { transfer: KvTransfer | null; problem: { key: string; reason: string } | null } {
  if (!isDisaggregated(engine)) return { transfer: null, problem: null };
  const prefill = roleOf(engine, 'prefill');
  const decode = roleOf(engine, 'decode');
  const written = engine.kv_transfer;
  let bytesPerToken = written?.kv_bytes_per_token;
  let gbPerS = written?.bandwidth_gb_per_s;
  if (bytesPerToken === undefined) {
    const p = deploymentOf(engine, prefill);
    const d = deploymentOf(engine, decode);
    if (p.deployment === null || d.deployment === null) {
      return {
        transfer: null,
        problem: {
          key: 'kv_bytes_per_token',
          reason: `is required: engine.model ${JSON.stringify(engine.model)} is not in the catalog, which gives the KV bytes per token otherwise`,
        },
      };
    }
    const perGpu = (dep: Deployment, tensor: number) => kvBytesPerToken(dep.model, BYTES_PER_ELEMENT[dep.kvPrecision], tensor);
    bytesPerToken = Math.max(perGpu(p.deployment, prefill.parallelism.tensor), perGpu(d.deployment, decode.parallelism.tensor));
  }
  if (gbPerS === undefined) {
    const hardware = findHardware(engine.hardware);
    if (hardware === undefined) {
      return {
        transfer: null,
        problem: {
          key: 'bandwidth_gb_per_s',
          reason: `is required: engine.hardware ${JSON.stringify(engine.hardware)} is not in the catalog, which gives the link bandwidth otherwise`,
        },
      };
    }
    const gpus = (role: WorkerRoleConfig) => role.parallelism.replicas * role.parallelism.tensor * role.parallelism.attention_data;
    const link = hardware.interconnect;
    if (link.scale_up === 'nvlink' && gpus(prefill) + gpus(decode) <= link.scale_up_domain_gpus) gbPerS = link.scale_up_gb_per_s / 2;
    else if (link.network_gb_per_s !== undefined) gbPerS = link.network_gb_per_s;
    else {
      return {
        transfer: null,
        problem: {
          key: 'bandwidth_gb_per_s',
          reason:
            `is required: ${hardware.id} lists no network link in the catalog` +
            (link.scale_up === 'nvlink'
              ? ` and the pools' ${gpus(prefill) + gpus(decode)} GPUs do not fit in its NVLink domain of ${link.scale_up_domain_gpus}`
              : ` and links its GPUs by ${link.scale_up === 'pcie' ? 'PCIe' : 'Infinity Fabric'}, not NVLink`),
        },
      };
    }
  }
  return {
    transfer: {
      latencyMs: written?.latency_ms ?? 0,
      bytesPerToken,
      bytesPerMs: gbPerS * 1e6,
      maxLocalPrefillTokens: written?.max_local_prefill_tokens ?? 0,
      firstTokenOnDecode: (written?.first_token ?? 'prefill') === 'decode',
    },
    problem: null,
  };
}
