/**
 * The engines' defaults (data/engine-defaults.yaml) as a config gets them: vLLM's token budget
 * and sequence limit by version and GPU, SGLang's and TensorRT-LLM's, the CUDA graphs each
 * captures, and the timing a config without a timing block gets.
 */
import { roleOf } from '../src/config/roles.js';
import { describe, expect, it } from 'vitest';
import { captureTable, engineScheduler } from '../src/catalog/engine-defaults.js';
import { findHardware } from '../src/catalog/load.js';
import { parseRunConfig } from '../src/config/load.js';
import { ConfigError } from '../src/config/errors.js';

const gpu = (id: string) => {
  const found = findHardware(id);
  if (found === undefined) throw new Error(`no ${id} in the catalog`);
  return found;
};

describe("the engines' scheduler defaults", () => {
  it('vLLM: 8192 tokens and 1024 sequences on GPUs of 70 GiB or more other than A100, else 2048 and 256', () => {
    // H100 reports 81559 MiB = 79.6 GiB; L40S 46068 MiB = 45 GiB; A100 80GB is excluded by name.
    expect(engineScheduler({ backend: 'vllm', hardware: gpu('h100_sxm'), tensor: 1 })).toEqual({
      maxBatchedTokens: 8192,
      maxSequences: 1024,
      chunkedPrefill: true,
    });
    expect(engineScheduler({ backend: 'vllm', hardware: gpu('b200_sxm'), tensor: 1 }).maxBatchedTokens).toBe(8192);
    expect(engineScheduler({ backend: 'vllm', hardware: gpu('a100_sxm'), tensor: 1 })).toMatchObject({
      maxBatchedTokens: 2048,
      maxSequences: 256,
    });
    expect(engineScheduler({ backend: 'vllm', hardware: gpu('l40s'), tensor: 1 })).toMatchObject({
      maxBatchedTokens: 2048,
      maxSequences: 256,
    });
    // vLLM 0.8.4 had no memory rule: 2048 / 256 on an H100 too; before 0.8.4, 1024 sequences.
    expect(engineScheduler({ backend: 'vllm', version: '0.8.4', hardware: gpu('h100_sxm'), tensor: 1 })).toMatchObject({
      maxBatchedTokens: 2048,
      maxSequences: 256,
    });
    expect(engineScheduler({ backend: 'vllm', version: '0.8.2', hardware: gpu('h100_sxm'), tensor: 1 }).maxSequences).toBe(1024);
  });

  it('SGLang: the chunk by memory tier; TensorRT-LLM: 8192 tokens, 2048 sequences, no chunked context', () => {
    expect(engineScheduler({ backend: 'sglang', hardware: gpu('h100_sxm'), tensor: 1 })).toEqual({
      maxBatchedTokens: 8192,
      maxSequences: null,
      chunkedPrefill: true,
    });
    // B200 (about 179 GiB) is above the 160 GiB tier.
    expect(engineScheduler({ backend: 'sglang', hardware: gpu('b200_sxm'), tensor: 8 }).maxBatchedTokens).toBe(16384);
    expect(engineScheduler({ backend: 'trtllm', hardware: gpu('h100_sxm'), tensor: 4 })).toEqual({
      maxBatchedTokens: 8192,
      maxSequences: 2048,
      chunkedPrefill: false,
    });
  });

  it('a config leaving the limits out gets them; written ones stay; the version picks the row', () => {
    const scheduler = (engine: Record<string, unknown>, written: Record<string, unknown> = {}) =>
      roleOf(parseRunConfig({ engine: { ...engine, workers: { aggregated: { scheduler: written } } } }, 'run.yaml').engine, 'aggregated')
        .scheduler;
    expect(scheduler({ hardware: 'h100_sxm' })).toMatchObject({ max_batched_tokens: 8192, max_sequences: 1024, chunked_prefill: true });
    expect(scheduler({ hardware: 'h100_sxm', backend_version: '0.8.4' })).toMatchObject({ max_batched_tokens: 2048, max_sequences: 256 });
    expect(scheduler({ hardware: 'h100_sxm' }, { max_sequences: 64 })).toMatchObject({ max_batched_tokens: 8192, max_sequences: 64 });
    expect(scheduler({ hardware: 'h100_sxm', backend: 'trtllm' })).toMatchObject({
      max_batched_tokens: 8192,
      max_sequences: 2048,
      chunked_prefill: false,
    });
    // Not in the catalog: servesim's generic 8192 / 256.
    expect(scheduler({ hardware: 'my-gpu' })).toMatchObject({ max_batched_tokens: 8192, max_sequences: 256, chunked_prefill: true });
    expect(() => parseRunConfig({ engine: { backend_version: 'latest' } }, 'run.yaml')).toThrow(ConfigError);
    expect(() => parseRunConfig({ engine: { backend_version: 'latest' } }, 'run.yaml')).toThrow(
      'run.yaml: engine.backend_version: must be a version such as 0.12.0 or 1.1.0rc2, got "latest"',
    );
  });

  it('times a catalog deployment with the roofline when the config has no timing block', () => {
    const timing = (engine: Record<string, unknown>) => roleOf(parseRunConfig({ engine }, 'run.yaml').engine, 'aggregated').timing;
    expect(timing({ model: 'Qwen/Qwen3-32B', hardware: 'h100_sxm' })).toEqual({ type: 'roofline' });
    expect(timing({ model: 'Qwen/Qwen3-32B', hardware: 'my-gpu' })).toEqual({ type: 'fixed', prefill_ms: 10, decode_ms: 2 });
    expect(timing({})).toEqual({ type: 'fixed', prefill_ms: 10, decode_ms: 2 });
    // A written block stays.
    const written = parseRunConfig(
      { engine: { model: 'Qwen/Qwen3-32B', hardware: 'h100_sxm', workers: { aggregated: { timing: { type: 'fixed' } } } } },
      'run.yaml',
    );
    expect(roleOf(written.engine, 'aggregated').timing).toEqual({ type: 'fixed', prefill_ms: 10, decode_ms: 2 });
  });
});

describe('CUDA graphs of decode-only passes', () => {
  const h100 = gpu('h100_sxm');
  it('vLLM pads to 1, 2, 4 and multiples of 8, from 0.11.1 multiples of 16 above 256, up to min(2 x max_num_seqs, 512)', () => {
    const t = captureTable({ backend: 'vllm', version: '0.19.0', hardware: h100, tensor: 1 }, 1024, 8192);
    expect(t.length).toBe(513);
    expect([t[1], t[2], t[3], t[5], t[9], t[256], t[257], t[500], t[512]]).toEqual([1, 2, 4, 8, 16, 256, 272, 512, 512]);
    // 0.10.x: steps of 8 throughout.
    expect(captureTable({ backend: 'vllm', version: '0.10.2', hardware: h100, tensor: 1 }, 1024, 8192)[257]).toBe(264);
    // 64 sequences: graphs up to 128.
    expect(captureTable({ backend: 'vllm', version: '0.19.0', hardware: h100, tensor: 1 }, 64, 8192).length).toBe(129);
  });

  it('TensorRT-LLM captures 1 to 32, 64 and 128 and does not pad', () => {
    const t = captureTable({ backend: 'trtllm', hardware: h100, tensor: 1 }, 2048, 8192);
    expect(t.length).toBe(129);
    expect([t[7], t[32], t[33], t[64], t[100], t[128]]).toEqual([7, 32, 0, 64, 0, 128]);
  });

  it('SGLang pads to 1, 2, 4, 8, 12 and multiples of 8, up to cuda_graph_max_bs (256 on an H100 below TP 4)', () => {
    const t = captureTable({ backend: 'sglang', hardware: h100, tensor: 1 }, 4096, 8192);
    expect(t.length).toBe(257);
    expect([t[3], t[9], t[13], t[17], t[256]]).toEqual([4, 12, 16, 24, 256]);
  });
});
