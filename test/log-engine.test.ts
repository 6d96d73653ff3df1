/**
 * The engine of a vLLM request log (docs/request-logs.md, "What is read from meta.json"): the GPU
 * from meta.json's `hardware.device_name`, else from the simulator config the run's folder carries
 * (`config.json`), when every instance of it names the same GPU and the catalog knows the name.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadVllmLogRunConfig, vllmLogRawConfig } from '../src/config/vllm-log-config.js';
import { predictionAccuracy } from '../src/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'servesim-log-engine-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const REQUEST = {
  request_id: 'a',
  input_toks: 100,
  output_toks: 4,
  queued_ts: 10,
  scheduled_ts: 10.1,
  first_token_ts: 10.2,
  last_token_ts: 10.3,
};

/** A log folder with one request, the meta.json given and, unless null, the config.json text given. */
function logFolder(name: string, meta: Record<string, unknown>, cluster: string | null): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'requests.jsonl'), `${JSON.stringify(REQUEST)}\n`);
  writeFileSync(join(folder, 'meta.json'), JSON.stringify(meta));
  if (cluster !== null) writeFileSync(join(folder, 'config.json'), cluster);
  return folder;
}

const cluster = (...gpus: string[][]) =>
  JSON.stringify({
    num_nodes: gpus.length,
    nodes: gpus.map((names) => ({ instances: names.map((hardware) => ({ hardware, tp_size: 2 })) })),
  });

const hardwareOf = (folder: string) => (vllmLogRawConfig(folder).engine as Record<string, unknown>).hardware;

describe('the GPU of a request log', () => {
  const meta = { model: 'Qwen/Qwen3-32B', engine_kwargs: { tensor_parallel_size: 2 } };

  it('comes from config.json when meta.json names none', () => {
    const folder = logFolder('cluster', meta, cluster(['RTXPRO6000']));
    expect(hardwareOf(folder)).toBe('rtx_pro_6000');
    // Named by the log's file as well as its folder; and the replay is a catalog prediction.
    expect(hardwareOf(join(folder, 'requests.jsonl'))).toBe('rtx_pro_6000');
    const loaded = loadVllmLogRunConfig(folder);
    expect(loaded.config.engine.workers.aggregated?.timing.type).toBe('roofline');
    expect(predictionAccuracy(loaded.config)?.basis).not.toBe('placeholder');
  });

  it('is meta.json’s when it names one', () => {
    const folder = logFolder('both', { ...meta, hardware: { device_name: 'NVIDIA GeForce RTX 4090' } }, cluster(['RTXPRO6000']));
    expect(hardwareOf(folder)).toBe('rtx_4090');
  });

  it('is not taken from a config.json that names several GPUs, one the catalog lacks, or none', () => {
    expect(hardwareOf(logFolder('two', meta, cluster(['RTXPRO6000'], ['H100'])))).toBeUndefined();
    expect(hardwareOf(logFolder('unknown', meta, cluster(['TPUv9'])))).toBeUndefined();
    expect(hardwareOf(logFolder('shape', meta, JSON.stringify({ nodes: [{ instances: [{ npu: 'x' }] }] })))).toBeUndefined();
    expect(hardwareOf(logFolder('broken', meta, '{"nodes": ['))).toBeUndefined();
    expect(hardwareOf(logFolder('absent', meta, null))).toBeUndefined();
    // Without a GPU, the placeholder pass times, which say so.
    expect(predictionAccuracy(loadVllmLogRunConfig(join(dir, 'absent')).config)?.basis).toBe('placeholder');
  });
});
