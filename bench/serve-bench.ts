/**
 * `npm run bench:serve [-- --clients N] [--seconds S] [--json]`: `servesim serve` under load.
 *
 * The compiled command line serves a fixed-timing engine (prefill 40 ms, decode 30 ms, 128
 * sequences, context 8192) at --speed 1 in its own process; this process runs N (512) clients
 * of the official `openai` package on loopback, each streaming completions one after another
 * (prompts of 100-400 tokens by characters / 4, 32-96 output tokens, usage included) for S (60)
 * seconds; at the end the requests still streaming are cut (their clients go away) and the
 * server is stopped with SIGINT. The first third of the run is the ramp-up; the figures of the
 * server are taken over the last two thirds, before the cut:
 *
 * - its event-loop delay, by its own perf_hooks.monitorEventLoopDelay (serve-probe.ts, loaded into
 *   the server's process with `--import`): p50, p99 (goal < 20 ms) and the worst;
 * - prom-client's `nodejs_eventloop_lag_p99_seconds` as a scraper reads it from /metrics every
 *   second (each reading covers the second before it, as prom-client resets its monitor at every
 *   scrape): the median and the worst reading;
 * - the CPU time of the server and of this process (the clients), in % of one core, and the
 *   server's event-loop utilization: on 2 cores the clients and the server share the machine,
 *   and a server kept off a core by the clients or by other work sees that as event-loop delay;
 * - its peak RSS, and whether its memory stays flat: the heap it holds after a full collection
 *   at the end of the window within 10 % of that at its start (the probe collects; with 512
 *   requests in flight at both ends, what a request leaves behind adds up between the two),
 *   with the mean heap used as scraped over the middle and the last third beside it (a
 *   saw-tooth: garbage not yet collected counts there).
 *
 * Printed with requests served (complete, every token and the usage), errors (anything else:
 * goal 0) and tokens streamed. Run after `npm run build`.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import { JSON_OUTPUT, benchEnvironment, describeEnvironment, say } from './environment.js';
import type { ProbeFigures } from './serve-probe.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, basename(dirname(here)) === 'dist' ? '../..' : '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const PROBE = pathToFileURL(join(ROOT, 'dist', 'bench', 'serve-probe.js')).href;
const MODEL = 'Qwen/Qwen3-8B';
const CONFIG = `engine:
  model: ${MODEL}
  hardware: H100-SXM5-80GB
  context_length: 8192
  workers:
    aggregated:
      scheduler: {max_batched_tokens: 8192, max_sequences: 128}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 20000}}
      timing: {type: fixed, prefill_ms: 40, decode_ms: 30}
traffic:
  source: {type: synthetic, input_tokens: 100, output_tokens: 10}
  load: {type: concurrency, concurrency: 1}
`;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!(Number.isInteger(v) && v > 0)) throw new Error(`${name}: must be a positive integer`);
  return v;
}

interface Sample {
  atS: number;
  rssBytes: number;
  heapUsedBytes: number;
  lagP99S: number;
}

function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const clients = option('--clients', 512);
  const seconds = option('--seconds', 60);
  const env = benchEnvironment(ROOT);
  const dir = mkdtempSync(join(tmpdir(), 'servesim-serve-bench-'));
  writeFileSync(join(dir, 'serve.yaml'), CONFIG);
  const server = spawn(process.execPath, ['--import', PROBE, CLI, 'serve', 'serve.yaml', '--port', '0'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((done) => server.on('exit', (code) => done(code)));
  let out = '';
  const url = await new Promise<string>((done, fail) => {
    (server.stdout as Readable).on('data', (b: Buffer) => {
      out += b.toString();
      const m = /at (http:\/\/\S+)\/v1/.exec(out);
      if (m !== null) done(m[1]);
    });
    void exited.then(() => fail(new Error(`the server exited: ${out}`)));
  });
  say(`${describeEnvironment(env)}\n`);
  say(`${clients} streaming clients for ${seconds} s against ${url}/v1 (speed 1)\n`);
  const loadBefore = loadavg()[0];

  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 600_000 });
  const controller = new AbortController();
  // One signal cuts every client's request at the end.
  setMaxListeners(0, controller.signal);
  let served = 0;
  let errors = 0;
  let cut = 0;
  let tokens = 0;
  const firstErrors: string[] = [];
  const startMs = performance.now();
  const endMs = startMs + seconds * 1000;
  const runClient = async (c: number): Promise<void> => {
    for (let k = 0; performance.now() < endMs; k++) {
      const n = c * 7919 + k * 104729;
      const prompt = 'word '.repeat(80 + (n % 241));
      const maxTokens = 32 + (n % 65);
      let got = 0;
      let usage: { completion_tokens: number } | undefined;
      try {
        const stream = await client.completions.create(
          { model: MODEL, prompt, max_tokens: maxTokens, stream: true, stream_options: { include_usage: true } },
          { signal: controller.signal },
        );
        for await (const chunk of stream) {
          if (chunk.choices.length > 0 && chunk.choices[0].text !== '') got++;
          if (chunk.usage) usage = chunk.usage;
        }
        tokens += got;
        if (got === maxTokens && usage?.completion_tokens === maxTokens) served++;
        else if (controller.signal.aborted) cut++;
        else {
          errors++;
          if (firstErrors.length < 3) firstErrors.push(`${got} of ${maxTokens} tokens, usage ${JSON.stringify(usage)}`);
        }
      } catch (err) {
        tokens += got;
        if (controller.signal.aborted) cut++;
        else {
          errors++;
          if (firstErrors.length < 3) firstErrors.push(String(err));
        }
      }
    }
  };
  const samples: Sample[] = [];
  const scrape = async (): Promise<void> => {
    const text = await (await fetch(`${url}/metrics`)).text();
    samples.push({
      atS: (performance.now() - startMs) / 1000,
      rssBytes: metricValue(text, 'process_resident_memory_bytes'),
      heapUsedBytes: metricValue(text, 'nodejs_heap_size_used_bytes'),
      lagP99S: metricValue(text, 'nodejs_eventloop_lag_p99_seconds'),
    });
  };
  const scraper = setInterval(() => void scrape().catch(() => {}), 1000);
  // The window of the server's figures: the last two thirds, closed before the cut.
  const third = seconds / 3;
  let clientCpuStart = process.cpuUsage();
  let clientCpu = { user: 0, system: 0 };
  const opener = setTimeout(() => {
    server.send('start');
    clientCpuStart = process.cpuUsage();
  }, third * 1000);
  const probed = new Promise<ProbeFigures>((done) => server.once('message', (m) => done(m as ProbeFigures)));
  const closer = setTimeout(() => {
    server.send('stop');
    clientCpu = process.cpuUsage(clientCpuStart);
  }, seconds * 1000);
  const cutter = setTimeout(() => controller.abort(), seconds * 1000 + 100);
  await Promise.all(Array.from({ length: clients }, (_, c) => runClient(c)));
  clearTimeout(opener);
  clearTimeout(closer);
  clearTimeout(cutter);
  clearInterval(scraper);
  const probe = await probed;
  server.disconnect();
  server.kill('SIGINT');
  const code = await exited;
  rmSync(dir, { recursive: true, force: true });

  const wallS = (performance.now() - startMs) / 1000;
  const peakRss = Math.max(...samples.map((s) => s.rssBytes));
  const inWindow = samples.filter((s) => s.atS >= third && s.atS <= seconds);
  const promP99Ms = inWindow.map((s) => s.lagP99S * 1000);
  const middle = mean(samples.filter((s) => s.atS >= third && s.atS < 2 * third).map((s) => s.heapUsedBytes));
  const last = mean(samples.filter((s) => s.atS >= 2 * third && s.atS <= seconds).map((s) => s.heapUsedBytes));
  const growth = probe.liveHeapEndBytes / probe.liveHeapStartBytes - 1;
  const flat = growth < 0.1;
  const clientCpuPercent = ((clientCpu.user + clientCpu.system) / 1000 / (probe.windowS * 1000)) * 100;
  const figures = {
    clients,
    seconds,
    served,
    errors,
    cut_at_end: cut,
    tokens_streamed: tokens,
    tokens_per_s: Math.round(tokens / wallS),
    window_s: round2(probe.windowS),
    server_event_loop_delay_p50_ms: round2(probe.delayP50Ms),
    server_event_loop_delay_p99_ms: round2(probe.delayP99Ms),
    server_event_loop_delay_max_ms: round2(probe.delayMaxMs),
    prom_client_lag_p99_median_ms: round2(median(promP99Ms)),
    prom_client_lag_p99_worst_ms: round2(Math.max(...promP99Ms)),
    server_cpu_percent: Math.round(probe.cpuPercent),
    server_event_loop_utilization: round2(probe.eventLoopUtilization),
    clients_cpu_percent: Math.round(clientCpuPercent),
    peak_rss_mib: Math.round(peakRss / 2 ** 20),
    heap_used_middle_mib: Math.round(middle / 2 ** 20),
    heap_used_last_mib: Math.round(last / 2 ** 20),
    live_heap_start_mib: round2(probe.liveHeapStartBytes / 2 ** 20),
    live_heap_end_mib: round2(probe.liveHeapEndBytes / 2 ** 20),
    memory_flat: flat,
    server_exit: code,
    load_before: round2(loadBefore),
    load_after: round2(loadavg()[0]),
  };
  say(
    `served ${served} requests, ${errors} errors, ${cut} cut at the end; ${tokens} tokens streamed (${figures.tokens_per_s}/s)\n` +
      `server, last two thirds (${probe.windowS.toFixed(1)} s): event-loop delay p50 ${probe.delayP50Ms.toFixed(2)} ms, ` +
      `p99 ${probe.delayP99Ms.toFixed(2)} ms (goal < 20 ms), worst ${probe.delayMaxMs.toFixed(1)} ms; ` +
      `prom-client's p99 per 1-s scrape: median ${figures.prom_client_lag_p99_median_ms.toFixed(2)} ms, worst ${figures.prom_client_lag_p99_worst_ms.toFixed(2)} ms\n` +
      `CPU, same window: server ${figures.server_cpu_percent} % of a core (event loop busy ${(probe.eventLoopUtilization * 100).toFixed(0)} %), ` +
      `clients ${figures.clients_cpu_percent} %\n` +
      `server memory: peak RSS ${mib(peakRss)}; heap after a full collection ${figures.live_heap_start_mib.toFixed(1)} MiB at the window's start, ` +
      `${figures.live_heap_end_mib.toFixed(1)} MiB at its end: ${flat ? 'flat' : `grows ${(growth * 100).toFixed(0)} %`} ` +
      `(heap used as scraped: ${mib(middle)} over the middle third, ${mib(last)} over the last)\n` +
      `server exit status ${code}; load average ${figures.load_before} before, ${figures.load_after} after\n`,
  );
  for (const e of firstErrors) say(`error: ${e}\n`);
  if (JSON_OUTPUT) process.stdout.write(`${JSON.stringify({ environment: env, figures }, null, 2)}\n`);
}

await main();
