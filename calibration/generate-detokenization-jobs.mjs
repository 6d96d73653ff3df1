// Writes calibration/detokenization-jobs.csv: detokenizer jobs of a replay with engine.detokenization
// {workers: 2, base_ms: 2.85, per_output_us: 61.6} (values reported for vLLM's API server from B200 calibration runs). Run: node calibration/generate-detokenization-jobs.mjs (after npm run build).
import { writeFileSync } from 'node:fs';
import { parseRunConfig } from '../dist/src/config/load.js';
import { replay } from '../dist/src/replay.js';
import { fnv1a32OfId } from '../dist/src/core/fnv.js';
const workers = 2;
const config = parseRunConfig({
  engine: { workers: { aggregated: { timing: { type: 'linear', base_ms: 9, prefill_token_us: 30, prefill_pair_ns: 0, decode_request_us: 0, decode_kv_token_ns: 150 } } },
    detokenization: { workers, base_ms: 2.85, per_output_us: 61.6 } },
  traffic: { source: { type: 'synthetic', input_tokens: 1024, output_tokens: 128, random_range_ratio: 0.5, seed: 1 }, load: { type: 'concurrency', concurrency: 32 }, stop: { requests: 256 } },
}, 'gen');
const { requests } = replay(config, { baseDir: '.', perRequest: true });
const jobs = new Map();
for (const r of requests) {
  const server = fnv1a32OfId(r.request_id) % workers;
  r.token_emitted_ms.forEach((e, k) => {
    const key = `${e}|${server}`;
    const j = jobs.get(key) ?? { pass_end_ms: e, server, outputs: 0, received_ms: r.token_ms[k], first_outputs: 0, final_outputs: 0 };
    j.outputs++; if (k === 0) j.first_outputs++; if (k === r.token_ms.length - 1) j.final_outputs++;
    jobs.set(key, j);
  });
}
const rows = [...jobs.values()].sort((a, b) => a.pass_end_ms - b.pass_end_ms || a.server - b.server);
const f = (v) => Number(v.toFixed(4));
writeFileSync(new URL('./detokenization-jobs.csv', import.meta.url), ['pass_end_ms,server,outputs,received_ms,first_outputs,final_outputs', ...rows.map((j) => [f(j.pass_end_ms), j.server, j.outputs, f(j.received_ms), j.first_outputs, j.final_outputs].join(','))].join('\n') + '\n');
console.log(rows.length);
