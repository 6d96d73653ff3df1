/**
 * `servesim serve`'s answers to bad input (docs/serving.md, "Errors"): each bad request gets its
 * status and OpenAI-shaped error body, and the server serves the next request; a client that
 * goes away has its request aborted and its KV blocks freed, as /metrics shows; past the waiting
 * cap a request is answered 503.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { charsPerTokenCounter } from '../src/serve/prompt-length.js';
import { startServer, type LiveServer } from '../src/serve/server.js';

const MODEL = 'served-model';

/** Fixed timing, 1000 blocks of 16 tokens, context 256 tokens; `extra` merged into the worker. */
function serveConfig(worker: Record<string, unknown> = {}) {
  return loadRunConfigFromObject(
    {
      engine: {
        model: 'Qwen/Qwen3-8B',
        hardware: 'H100-SXM5-80GB',
        context_length: 256,
        workers: {
          aggregated: {
            scheduler: { max_batched_tokens: 512, max_sequences: 4 },
            kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 1000 } },
            timing: { type: 'fixed', prefill_ms: 20, decode_ms: 10 },
            ...worker,
          },
        },
      },
      traffic: { source: { type: 'synthetic', input_tokens: 10, output_tokens: 10 }, load: { type: 'concurrency', concurrency: 1 } },
    },
    'serve.yaml',
  );
}

let server: LiveServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

async function start(options: { speed?: number; maxWaiting?: number; worker?: Record<string, unknown> } = {}): Promise<LiveServer> {
  server = await startServer(serveConfig(options.worker), {
    host: '127.0.0.1',
    port: 0,
    speed: options.speed ?? 20,
    modelName: MODEL,
    maxWaiting: options.maxWaiting ?? 100,
    counter: charsPerTokenCounter,
    record: null,
  });
  return server;
}

function post(s: LiveServer, path: string, body: string, signal?: AbortSignal) {
  return fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
}

/** A good request after a bad one: served whole, 3 tokens. */
async function expectServed(s: LiveServer) {
  const res = await post(s, '/v1/completions', JSON.stringify({ model: MODEL, prompt: 'abcdefgh', max_tokens: 3 }));
  expect(res.status).toBe(200);
  const body = (await res.json()) as { usage: unknown; choices: Array<{ text: string; finish_reason: string }> };
  expect(body.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
  expect(body.choices[0]).toMatchObject({ text: ' the the the', finish_reason: 'length' });
}

async function metric(s: LiveServer, name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  if (line === undefined) throw new Error(`no ${name} in /metrics`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

const error = (status: number, type: string, message: string | RegExp, param: string | null = null) => ({
  status,
  body: { error: { message: typeof message === 'string' ? message : expect.stringMatching(message), type, param, code: status } },
});

const BAD: Array<[string, string, string, ReturnType<typeof error>]> = [
  ['malformed JSON', '/v1/completions', '{"prompt": "x",', error(400, 'BadRequestError', /^the body is not JSON: /)],
  ['a body that is not an object', '/v1/chat/completions', '[1, 2]', error(400, 'BadRequestError', 'the body must be a JSON object')],
  ['no prompt', '/v1/completions', JSON.stringify({ model: MODEL }), error(400, 'BadRequestError', 'prompt: required', 'prompt')],
  [
    'no messages',
    '/v1/chat/completions',
    JSON.stringify({ model: MODEL }),
    error(400, 'BadRequestError', 'messages: required', 'messages'),
  ],
  [
    'a message without a role',
    '/v1/chat/completions',
    JSON.stringify({ messages: [{ content: 'hi' }] }),
    error(400, 'BadRequestError', 'messages.0: must be an object with a role', 'messages'),
  ],
  [
    'max_tokens 0',
    '/v1/completions',
    JSON.stringify({ prompt: 'x', max_tokens: 0 }),
    error(400, 'BadRequestError', 'max_tokens: must be an integer from 1 to 100000000', 'max_tokens'),
  ],
  [
    'min_tokens above max_tokens',
    '/v1/completions',
    JSON.stringify({ prompt: 'x', max_tokens: 2, min_tokens: 3 }),
    error(400, 'BadRequestError', 'min_tokens: must be at most max_tokens (2), got 3', 'min_tokens'),
  ],
  [
    'stream_options without stream',
    '/v1/completions',
    JSON.stringify({ prompt: 'x', stream_options: { include_usage: true } }),
    error(400, 'BadRequestError', 'stream_options: only allowed with stream true', 'stream_options'),
  ],
  ['n 2', '/v1/completions', JSON.stringify({ prompt: 'x', n: 2 }), error(400, 'BadRequestError', 'n: only 1 is served', 'n')],
  [
    'a prompt over the context length',
    '/v1/completions',
    // 1200 characters: 300 tokens by characters / 4, over the context of 256.
    JSON.stringify({ prompt: 'a'.repeat(1200), max_tokens: 1 }),
    error(
      400,
      'BadRequestError',
      "This model's maximum context length is 256 tokens. However, your request has 300 input tokens. Please reduce the length of the input prompt.",
      'prompt',
    ),
  ],
  [
    'a prompt and max_completion_tokens over the context length',
    '/v1/chat/completions',
    // 400 characters: 100 tokens; 100 + 200 > 256.
    JSON.stringify({ messages: [{ role: 'user', content: 'a'.repeat(400) }], max_completion_tokens: 200 }),
    error(
      400,
      'BadRequestError',
      "This model's maximum context length is 256 tokens. However, you requested 300 tokens (100 in the messages, 200 in the completion). Please reduce the length of the messages or completion.",
      'max_completion_tokens',
    ),
  ],
  [
    'an unknown model',
    '/v1/chat/completions',
    JSON.stringify({ model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] }),
    error(404, 'NotFoundError', 'The model `gpt-4` does not exist.', 'model'),
  ],
  ['an unknown route', '/v1/embeddings', '{}', error(404, 'NotFoundError', 'no route POST /v1/embeddings')],
];

describe('servesim serve', () => {
  it.each(BAD)('answers %s in OpenAI’s error shape and serves the next request', async (_name, path, body, expected) => {
    const s = await start();
    const res = await post(s, path, body);
    expect(res.status).toBe(expected.status);
    expect(await res.json()).toEqual(expected.body);
    await expectServed(s);
  });

  it('answers 503 past the waiting cap, and serves again once the queue is under it', async () => {
    // One sequence at a time, each request 100 decode passes: the first runs, the next two wait.
    const s = await start({ maxWaiting: 2, speed: 1, worker: { scheduler: { max_batched_tokens: 512, max_sequences: 1 } } });
    const controller = new AbortController();
    const long = JSON.stringify({ prompt: 'abcd', max_tokens: 100 });
    const send = () => post(s, '/v1/completions', long, controller.signal).catch(() => null);
    // The first is running before the next two are sent: requests received in the same
    // millisecond all wait until the engine's next step, and the third would find two waiting.
    const inFlight = [send()];
    await expect.poll(() => metric(s, 'vllm:num_requests_running')).toBe(1);
    inFlight.push(send(), send());
    await expect.poll(() => metric(s, 'vllm:num_requests_waiting')).toBe(2);
    const res = await post(s, '/v1/completions', long);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual(
      error(503, 'ServiceUnavailableError', 'the engine has 2 requests waiting, its limit (--max-waiting 2); retry later').body,
    );
    controller.abort();
    await Promise.all(inFlight);
    await expect.poll(() => metric(s, 'vllm:num_requests_waiting')).toBe(0);
    await expectServed(s);
  });

  it('aborts the request of a client that goes away and frees its KV blocks', async () => {
    // 100 blocks of 16 tokens; the request holds ceil((40 + generated) / 16) of them while it runs.
    const s = await start({ speed: 1, worker: { kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 100 } } } });
    const controller = new AbortController();
    const res = await post(
      s,
      '/v1/completions',
      JSON.stringify({ prompt: 'a'.repeat(160), max_tokens: 200, stream: true }),
      controller.signal,
    );
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    expect(await metric(s, 'vllm:num_requests_running')).toBe(1);
    const usage = await metric(s, 'vllm:kv_cache_usage_perc');
    expect(usage).toBeGreaterThanOrEqual(0.03);
    expect(usage).toBeLessThanOrEqual(0.04);
    controller.abort();
    await expect.poll(() => metric(s, 'vllm:kv_cache_usage_perc')).toBe(0);
    expect(await metric(s, 'vllm:num_requests_running')).toBe(0);
    expect(await metric(s, 'vllm:request_success_total')).toBe(0);
    await expectServed(s);
  });
});
