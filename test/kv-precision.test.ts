/**
 * The KV cache type a worker starts with under `kv_cache.dtype: auto`: what the engine does when
 * launched without a KV cache type, given the checkpoint's request (docs/hardware-and-models.md).
 */
import { describe, expect, it } from 'vitest';
import { kvCapacity } from '../src/catalog/deployment.js';
import { autoKvCapacity, deploymentOf } from '../src/config/deployment.js';
import { parseRunConfig } from '../src/config/load.js';
import { roleOf } from '../src/config/roles.js';

function kvOf(engine: Record<string, unknown>, kvCache: Record<string, unknown> = {}) {
  const config = parseRunConfig(
    { engine: { hardware: 'b200_sxm', ...engine, workers: { aggregated: { parallelism: { tensor: 4 }, kv_cache: kvCache } } } },
    'run.yaml',
  );
  const role = roleOf(config.engine, 'aggregated');
  const found = deploymentOf(config.engine, role).deployment;
  if (found === null) throw new Error('not in the catalog');
  return { precision: found.kvPrecision, deployment: found, capacity: autoKvCapacity(config.engine, role) };
}

describe('the KV cache type under auto', () => {
  it('an FP4 variant of a model is an NVFP4 export, whose FP8 request vLLM from 0.14 honours', () => {
    const kimi = { model: 'moonshotai/Kimi-K2.5', precision: 'fp4' };
    expect(kvOf({ ...kimi, backend: 'vllm', backend_version: '0.17.0' }).precision).toBe('fp8');
    expect(kvOf({ ...kimi, backend: 'vllm', backend_version: 'v0.19.0' }).precision).toBe('fp8');
    // No version: the newest engine's behaviour.
    expect(kvOf({ ...kimi, backend: 'vllm' }).precision).toBe('fp8');
    expect(kvOf({ ...kimi, backend: 'vllm', backend_version: '0.13.0' }).precision).toBe('bf16');
    expect(kvOf({ ...kimi, backend: 'sglang' }).precision).toBe('bf16');
    expect(kvOf({ ...kimi, backend: 'trtllm' }).precision).toBe('fp8');
  });

  it("a catalog model's own request, and none for a checkpoint that makes none", () => {
    expect(kvOf({ model: 'nvidia/DeepSeek-V3.1-NVFP4', backend: 'vllm' }).precision).toBe('fp8');
    // Kimi-K2.5's own INT4 checkpoint asks for nothing; gpt-oss-120b's MXFP4 is its own precision.
    expect(kvOf({ model: 'moonshotai/Kimi-K2.5', backend: 'vllm' }).precision).toBe('bf16');
    expect(kvOf({ model: 'openai/gpt-oss-120b', backend: 'vllm' }).precision).toBe('bf16');
    // TensorRT-LLM: FP8 with FP8 or FP4 weights quantized beyond the experts, as before.
    expect(kvOf({ model: 'openai/gpt-oss-120b', backend: 'trtllm' }).precision).toBe('bf16');
    expect(kvOf({ model: 'meta-llama/Llama-3.1-70B', precision: 'fp8', backend: 'trtllm' }).precision).toBe('fp8');
    expect(kvOf({ model: 'meta-llama/Llama-3.1-70B', precision: 'fp8', backend: 'vllm' }).precision).toBe('bf16');
  });

  it('a written type wins', () => {
    const kimi = { model: 'moonshotai/Kimi-K2.5', precision: 'fp4', backend: 'vllm' };
    expect(kvOf(kimi, { dtype: 'bf16' }).precision).toBe('bf16');
    expect(kvOf({ model: 'meta-llama/Llama-3.1-70B', backend: 'sglang' }, { dtype: 'fp8' }).precision).toBe('fp8');
  });

  it('sizes the cache: one byte an element instead of two', () => {
    const fp8 = kvOf({ model: 'moonshotai/Kimi-K2.5', precision: 'fp4', backend: 'vllm' });
    const bf16 = kvOf({ model: 'moonshotai/Kimi-K2.5', precision: 'fp4', backend: 'vllm', backend_version: '0.13.0' });
    // MLA keeps its latent whole on every GPU: 61 layers x (512 + 64) elements a token.
    const fp8Capacity = kvCapacity(fp8.deployment, 0.9);
    const bf16Capacity = kvCapacity(bf16.deployment, 0.9);
    expect(fp8Capacity.kvBytesPerTokenPerGpu).toBe(61 * 576 * 1);
    expect(bf16Capacity.kvBytesPerTokenPerGpu).toBe(61 * 576 * 2);
    expect(fp8Capacity.weightBytesPerGpu).toBe(bf16Capacity.weightBytesPerGpu);
    // The same bytes left for the cache hold twice the tokens (to the rounding of each).
    expect(fp8Capacity.tokensPerRank - 2 * bf16Capacity.tokensPerRank).toBeGreaterThanOrEqual(0);
    expect(fp8Capacity.tokensPerRank - 2 * bf16Capacity.tokensPerRank).toBeLessThanOrEqual(1);
    expect(fp8.capacity?.tokensPerRank).toBe(fp8Capacity.tokensPerRank);
  });
});
