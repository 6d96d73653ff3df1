/**
 * `servesim serve` driven by a real client (docs/serving.md, "How its numbers relate to a
 * replay"): the compiled command line serves a small fixed-timing config, the official `openai`
 * client streams 8 completions to warm up, then 32 at concurrency 8, and times every token, SIGINT drains the
 * server, and the recorded session is replayed offline with `servesim replay`.
 *
 * - Determinism: the replay of the record gives exactly the recorded engine-side times (each
 *   token's emission and receipt, relative to its request's arrival), request by request.
 * - The client sees the replay's times: its time to first token and every inter-token gap equal
 *   the offline replay's within the loopback's scheduling noise. The tolerance: the median
 *   difference under 2 ms, and 90 % of them under 5 ms + 5 % of the time, each plus the
 *   scheduling noise of the run: the 90th percentile of the lateness of a 5 ms timer re-armed in
 *   the test process throughout (a fraction of a ms on an idle machine), counted twice for the
 *   90 % bound, as a token's time is the server's wake-up and then the client's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'servesim-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENGINE = `engine:
  model: Qwen/Qwen3-8B
  hardware: H100-SXM5-80GB
  context_length: 4096
  workers:
    aggregated:
      scheduler: {max_batched_tokens: 256, max_sequences: 4}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 400}, prefix_caching: false}
      timing: {type: fixed, prefill_ms: 30, decode_ms: 12}
`;
const SERVE_YAML = `${ENGINE}traffic:
  source: {type: synthetic, input_tokens: 100, output_tokens: 10}
  load: {type: concurrency, concurrency: 1}
`;
const REPLAY_YAML = `${ENGINE}traffic:
  source: {type: trace, path: session.jsonl}
  load: {type: trace_timestamps}
`;

const CONCURRENCY = 8;
const PER_CLIENT = 4;

interface ClientRequest {
  id: number;
  promptTokens: number;
  maxTokens: number;
  /** Wall ms: sent, then each token's chunk. */
  sentMs: number;
  tokenMs: number[];
  usage: { prompt_tokens: number; completion_tokens: number } | null;
}

interface RecordLine {
  request_id: number;
  status: string;
  sent_ms: number;
  token_ms: number[];
  token_emitted_ms: number[];
  input_tokens: number;
  output_tokens: number;
}

function readLines(path: string): RecordLine[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RecordLine);
}

const relative = (r: RecordLine) => ({
  id: r.request_id,
  tokens: r.token_ms.map((t) => t - r.sent_ms),
  emitted: r.token_emitted_ms.map((t) => t - r.sent_ms),
});

function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))];
}

const median = (values: number[]) => quantile(values, 0.5);

describe('servesim serve with the openai client', () => {
  it('streams the offline replay’s times, and its record replays to the same engine-side times', async () => {
    writeFileSync(join(dir, 'serve.yaml'), SERVE_YAML);
    writeFileSync(join(dir, 'replay.yaml'), REPLAY_YAML);
    const record = join(dir, 'session.jsonl');
    const child = spawn(process.execPath, [CLI, 'serve', 'serve.yaml', '--port', '0', '--record', record], { cwd: dir });
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start-up line: ${stdout}`)), 30_000);
      child.stdout.on('data', () => {
        const m = /at (http:\/\/\S+\/v1)/.exec(stdout);
        if (m !== null) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    const client = new OpenAI({ baseURL: url, apiKey: 'none', maxRetries: 0 });
    const requests: ClientRequest[] = [];
    // Prompt lengths and output lengths vary: 40-160 characters (10-40 tokens by characters / 4), 4-19 tokens.
    const runClient = async (c: number, timed: boolean) => {
      for (let k = 0; k < (timed ? PER_CLIENT : 1); k++) {
        const n = c * PER_CLIENT + k;
        const prompt = 'word '.repeat(8 + ((n * 7) % 25));
        const maxTokens = 4 + ((n * 5) % 16);
        const sentMs = performance.now();
        const stream = await client.completions.create({
          model: 'Qwen/Qwen3-8B',
          prompt,
          max_tokens: maxTokens,
          stream: true,
          stream_options: { include_usage: true },
        });
        const req: ClientRequest = { id: -1, promptTokens: Math.ceil(prompt.length / 4), maxTokens, sentMs, tokenMs: [], usage: null };
        for await (const chunk of stream) {
          const at = performance.now();
          req.id = Number(chunk.id.replace('cmpl-', ''));
          if (chunk.choices.length > 0 && chunk.choices[0].text !== '') req.tokenMs.push(at);
          if (chunk.usage) req.usage = chunk.usage;
        }
        if (timed) requests.push(req);
      }
    };
    // A first round warms both processes (connections, compiled code); the next is timed.
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, c) => runClient(c, false)));
    const lateness: number[] = [];
    let probing = true;
    const arm = () => {
      const due = performance.now() + 5;
      setTimeout(() => {
        lateness.push(performance.now() - due);
        if (probing) arm();
      }, 5);
    };
    arm();
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, c) => runClient(c, true)));
    probing = false;
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stdout).toContain(`stopped; wrote ${record}`);

    // Usage is what the simulation used.
    for (const r of requests) {
      expect(r.usage).toMatchObject({ prompt_tokens: r.promptTokens, completion_tokens: r.maxTokens });
      expect(r.tokenMs.length).toBe(r.maxTokens);
    }
    const recorded = readLines(record);
    expect(recorded.map((r) => r.request_id)).toEqual(recorded.map((_, i) => i));
    expect(recorded.length).toBe(CONCURRENCY * (PER_CLIENT + 1));
    expect(recorded.every((r) => r.status === 'completed')).toBe(true);

    // Determinism: the record replayed offline.
    const replay = spawnSync(process.execPath, [CLI, 'replay', 'replay.yaml', '--out', 'offline', '--per-request'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(replay.stderr).toBe('');
    expect(replay.status).toBe(0);
    const offline = readLines(join(dir, 'offline', 'requests.jsonl'));
    expect(offline.map(relative)).toEqual(recorded.map(relative));
    // Coverage guard: requests queued (max_sequences 4 < concurrency 8), so the times depend on each other.
    expect(recorded.some((r) => r.token_ms[0] - r.sent_ms > 30 + 12 + 1)).toBe(true);

    // The client's times against the offline replay's, request by request (matched by the response id).
    const byId = new Map(offline.map((r) => [r.request_id, r]));
    const diffs: Array<[number, number]> = [];
    for (const r of requests) {
      const o = byId.get(r.id) as RecordLine;
      expect(o.input_tokens).toBe(r.promptTokens);
      diffs.push([r.tokenMs[0] - r.sentMs, o.token_ms[0] - o.sent_ms]);
      for (let k = 1; k < r.tokenMs.length; k++) diffs.push([r.tokenMs[k] - r.tokenMs[k - 1], o.token_ms[k] - o.token_ms[k - 1]]);
    }
    const errors = diffs.map(([client, sim]) => Math.abs(client - sim));
    const beyond = diffs.map(([client, sim]) => Math.abs(client - sim) - 0.05 * sim);
    const noise50 = quantile(lateness, 0.5);
    const noise90 = quantile(lateness, 0.9);
    console.log(
      `client vs offline replay over ${diffs.length} times (TTFT and gaps): |diff| median ${median(errors).toFixed(2)} ms, ` +
        `p90 ${quantile(errors, 0.9).toFixed(2)} ms, max ${Math.max(...errors).toFixed(2)} ms; p90 beyond 5 % ${quantile(beyond, 0.9).toFixed(2)} ms; ` +
        `timer lateness median ${noise50.toFixed(2)} ms, p90 ${noise90.toFixed(2)} ms`,
    );
    expect(median(errors)).toBeLessThan(2 + noise90);
    expect(quantile(beyond, 0.9)).toBeLessThan(5 + 2 * noise90);
  });

  it('says at start-up when its pass times are the placeholder, and not when the config gives them', async () => {
    const startUp = async (yaml: string, name: string): Promise<string> => {
      writeFileSync(join(dir, name), yaml);
      const child = spawn(process.execPath, [CLI, 'serve', name, '--port', '0'], { cwd: dir });
      let stdout = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no start-up lines: ${stdout}`)), 30_000);
          child.stdout.on('data', () => {
            if (stdout.includes('Ctrl-C drains') && (stdout.includes('not a prediction') || !yaml.includes('unlisted'))) {
              clearTimeout(timer);
              resolve();
            }
          });
        });
        // One answered request: the server is past its start-up (its signal handlers are in place).
        const url = (/at (http:\/\/\S+\/v1)/.exec(stdout) as RegExpExecArray)[1];
        expect((await fetch(`${url}/models`)).status).toBe(200);
        child.kill('SIGINT');
        expect(await exited).toBe(0);
        return stdout;
      } finally {
        // A failed assertion leaves no server behind.
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    };
    expect(await startUp('engine: {model: acme/unlisted-7b}\n', 'placeholder.yaml')).toContain(
      'not a prediction: placeholder pass times (fixed 10 ms with prefill work, 2 ms otherwise): model acme/unlisted-7b is not in the catalog and no GPU is named\n',
    );
    expect(await startUp(ENGINE, 'given.yaml')).not.toContain('not a prediction');
  });
});
