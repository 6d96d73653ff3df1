/**
 * `servesim serve` keeps nothing of a request once it is answered or its client went away
 * (docs/serving.md, "Under load"): every response object the HTTP server made is collected after
 * a full collection, for streamed and whole responses, complete and aborted. A listener on a
 * request's AbortSignal once kept every request alive for good (through the request's
 * finalization entry), and the heap grew with each request served.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ServerResponse } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { charsPerTokenCounter } from '../src/serve/prompt-length.js';
import { startServer } from '../src/serve/server.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MODEL = 'served-model';

function serveConfig() {
  return loadRunConfigFromObject(
    {
      engine: {
        model: 'Qwen/Qwen3-8B',
        hardware: 'H100-SXM5-80GB',
        context_length: 1024,
        workers: {
          aggregated: {
            scheduler: { max_batched_tokens: 1024, max_sequences: 8 },
            kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 1000 } },
            timing: { type: 'fixed', prefill_ms: 20, decode_ms: 10 },
          },
        },
      },
      traffic: { source: { type: 'synthetic', input_tokens: 10, output_tokens: 10 }, load: { type: 'concurrency', concurrency: 1 } },
    },
    'serve.yaml',
  );
}

/** Collects until the finalization callbacks of the last collection have run and freed what they held. */
async function collect(): Promise<void> {
  for (let k = 0; k < 4; k++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('servesim serve', () => {
  it('keeps no response object of a request once it is answered or aborted', async () => {
    const responses: Array<WeakRef<ServerResponse>> = [];
    const onStart = (message: unknown): void => {
      responses.push(new WeakRef((message as { response: ServerResponse }).response));
    };
    subscribe('http.server.request.start', onStart);
    const server = await startServer(serveConfig(), {
      host: '127.0.0.1',
      port: 0,
      speed: 20,
      modelName: MODEL,
      maxWaiting: 100,
      counter: charsPerTokenCounter,
      record: null,
    });
    const post = (body: object, signal?: AbortSignal) =>
      fetch(`${server.url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, prompt: 'abcdefgh', ...body }),
        signal,
      });
    try {
      const whole = Array.from({ length: 8 }, async () => (await post({ max_tokens: 4 })).json());
      const streamed = Array.from({ length: 8 }, async () => (await post({ max_tokens: 4, stream: true })).text());
      const aborted = Array.from({ length: 8 }, async (_, k) => {
        const controller = new AbortController();
        const res = await post({ max_tokens: 200, stream: k % 2 === 0 }, controller.signal);
        if (k % 2 === 0) await (res.body as ReadableStream<Uint8Array>).getReader().read();
        controller.abort();
      });
      const done = await Promise.allSettled([...whole, ...streamed, ...aborted]);
      expect(done.filter((d) => d.status === 'rejected')).toEqual([]);
      await expect.poll(() => server.engine.inFlight).toBe(0);
      expect(responses.length).toBe(24);
    } finally {
      await server.stop();
      unsubscribe('http.server.request.start', onStart);
    }
    await collect();
    expect(responses.filter((r) => r.deref() !== undefined).length).toBe(0);
  });
});
