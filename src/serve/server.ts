/**
 * `servesim serve` (docs/serving.md): an OpenAI-compatible HTTP server on Hono and its Node.js
 * adapter, with the replay core behind it driven in real time (live-engine.ts). Routes:
 * `GET /v1/models`, `GET /health`, `GET /metrics` (metrics.ts), `POST /v1/completions` and
 * `POST /v1/chat/completions`, streamed (server-sent events, `data: [DONE]`) or whole. Errors
 * are answered in OpenAI's shape (openai-api.ts); a client that goes away has its request
 * aborted and its KV blocks freed; `drain` stops taking requests and ends once those in flight
 * are answered, `stop` aborts them.
 *
 * The hot path is a token handed to its stream: one `write` of a string built once per request
 * on the Node.js response itself (every write to a socket in one tick leaves in one system call,
 * as Node.js corks a response's socket until the next tick), not a web stream per response, whose
 * promise hops cost more than the write. A client that goes away is seen by its response's
 * `close`, not by the request's AbortSignal: a listener on that signal holds the request's
 * context, which keeps the undici Request's finalization entry, and so the whole request, alive
 * for good. The body is read straight from the connection (Hono's body limit reads a web
 * stream; it is kept for a body without a Content-Length).
 */
import type { AddressInfo } from 'node:net';
import { serve, type HttpBindings, type ServerType } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { RunConfig } from '../config/types.js';
import { LiveEngine, type FinishedRequest, type LiveObserver } from './live-engine.js';
import { resolveLiveRun } from './live-run.js';
import { LiveMetrics } from './metrics.js';
import {
  ApiError,
  TOKEN_TEXT,
  chunkJson,
  parseGenerationRequest,
  responseJson,
  sseEvent,
  usageChunkJson,
  usageOf,
  type Endpoint,
} from './openai-api.js';
import type { PromptCounter } from './prompt-length.js';
import { SessionRecorder } from './record.js';

export interface ServeOptions {
  host: string;
  /** 0: any free port (LiveServer.port says which). */
  port: number;
  /** Simulated ms per wall ms. */
  speed: number;
  /** The model name clients send and /v1/models lists. */
  modelName: string;
  /** Requests received and not yet running beyond which a new one is answered 503. */
  maxWaiting: number;
  counter: PromptCounter;
  /** --record FILE, or null. */
  record: string | null;
  /** Events the core processes per step before the event loop runs I/O. */
  maxEventsPerStep?: number;
}

export interface LiveServer {
  url: string;
  port: number;
  engine: LiveEngine;
  metrics: LiveMetrics;
  /** Context length (Infinity: none). */
  maxModelLen: number;
  /** Stops taking requests (503) and resolves once every request in flight is answered and the server closed. */
  drain(): Promise<void>;
  /** Aborts the requests in flight and closes the server. */
  stop(): Promise<void>;
}

/** The largest request body taken (a prompt of a few million characters). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** The headers of a streamed response, as Hono's streamSSE sets them. */
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'Transfer-Encoding': 'chunked',
};

type ServeEnv = { Bindings: HttpBindings };
type ServeContext = Context<ServeEnv>;

export async function startServer(config: RunConfig, options: ServeOptions): Promise<LiveServer> {
  const { run, maxModelLen } = resolveLiveRun(config);
  const metrics = new LiveMetrics(options.modelName);
  let recorder: SessionRecorder | null = null;
  const observer: LiveObserver = {
    firstToken: (ms) => metrics.firstToken(ms),
    nextToken: (ms) => metrics.nextToken(ms),
    finished: (request: FinishedRequest) => {
      metrics.finished(request);
      if (recorder !== null) recorder.add(request);
    },
  };
  const engine = new LiveEngine(run, {
    speed: options.speed,
    keepTokenTimes: options.record !== null,
    maxEventsPerStep: options.maxEventsPerStep,
    observer,
  });
  metrics.attach(engine);
  if (options.record !== null) recorder = new SessionRecorder(options.record, engine.sim.table);
  const model = options.modelName;
  const counter = options.counter;
  let draining = false;
  const modelCreated = Math.floor(Date.now() / 1000);

  const app = new Hono<ServeEnv>();
  app.onError((err, c) => {
    const e = err instanceof ApiError ? err : new ApiError(500, `internal error: ${err.message}`, 'InternalServerError');
    return c.json(e.body(), e.status);
  });
  app.notFound((c) => c.json(new ApiError(404, `no route ${c.req.method} ${c.req.path}`, 'NotFoundError').body(), 404));
  app.get('/health', (c) => (draining ? c.json(shuttingDown().body(), 503) : c.body(null, 200)));
  app.get('/v1/models', (c) =>
    c.json({
      object: 'list',
      data: [
        {
          id: model,
          object: 'model',
          created: modelCreated,
          owned_by: 'servesim',
          root: model,
          parent: null,
          max_model_len: Number.isFinite(maxModelLen) ? maxModelLen : null,
        },
      ],
    }),
  );
  app.get('/metrics', async (c) => {
    const { text, contentType } = await metrics.render();
    return c.body(text, 200, { 'Content-Type': contentType });
  });
  const tooLarge = (c: ServeContext): Response =>
    c.json(new ApiError(413, `the body is over ${MAX_BODY_BYTES} bytes`, 'BadRequestError').body(), 413);
  const streamedLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  // A body with a Content-Length is judged by it and read straight from the connection later
  // (c.req.text()); only a chunked one goes through Hono's limit, which reads a web stream.
  const limit: MiddlewareHandler<ServeEnv> = async (c, next) => {
    const headers = c.env.incoming.headers;
    const length = headers['content-length'];
    if (length === undefined || headers['transfer-encoding'] !== undefined) return streamedLimit(c, next);
    if (Number(length) > MAX_BODY_BYTES) return tooLarge(c);
    await next();
  };
  app.post('/v1/completions', limit, (c) => generate(c, 'completions'));
  app.post('/v1/chat/completions', limit, (c) => generate(c, 'chat'));

  function shuttingDown(): ApiError {
    return new ApiError(503, 'the server is shutting down', 'ServiceUnavailableError');
  }

  async function generate(c: ServeContext, endpoint: Endpoint): Promise<Response> {
    if (draining) throw shuttingDown();
    const raw = await c.req.text();
    const req = parseGenerationRequest(endpoint, raw, counter, maxModelLen, model);
    const queued = engine.countQueued();
    if (queued >= options.maxWaiting) {
      throw new ApiError(
        503,
        `the engine has ${queued} requests waiting, its limit (--max-waiting ${options.maxWaiting}); retry later`,
        'ServiceUnavailableError',
      );
    }
    if (draining) throw shuttingDown();
    const created = Math.floor(Date.now() / 1000);
    const prefix = endpoint === 'completions' ? 'cmpl' : 'chatcmpl';
    const res = c.env.outgoing;
    if (!req.stream) {
      return new Promise<Response>((resolve) => {
        let ended = false;
        const onClose = (): void => {
          if (ended) return;
          ended = true;
          engine.abort(id);
          resolve(c.body(null, 499 as never));
        };
        const id = engine.submit(req.promptTokens, req.maxTokens, {
          onToken: () => {},
          onEnd: (_atMs, tokens) => {
            ended = true;
            res.off('close', onClose);
            resolve(c.json(responseJson(endpoint, `${prefix}-${id}`, created, model, tokens, req.promptTokens)));
          },
        });
        res.once('close', onClose);
        // The client may have gone while the body was read: its close is past.
        if (res.destroyed) onClose();
      });
    }
    let ended = false;
    // Every token's event is the same bytes but the last (its finish reason): built once. The
    // engine hands nothing over before a timer fires, so they are built before it is needed.
    let tokenEvent = '';
    let lastTokenEvent = '';
    const id = engine.submit(req.promptTokens, req.maxTokens, {
      onToken: (index) => {
        res.write(index + 1 === req.maxTokens ? lastTokenEvent : tokenEvent);
      },
      onEnd: (_atMs, tokens) => {
        ended = true;
        res.off('close', onClose);
        const usage = req.includeUsage ? sseEvent(usageChunkJson(endpoint, rid, created, model, usageOf(req.promptTokens, tokens))) : '';
        res.end(`${usage}${sseEvent('[DONE]')}`);
      },
    });
    const rid = `${prefix}-${id}`;
    tokenEvent = sseEvent(chunkJson(endpoint, rid, created, model, TOKEN_TEXT, null));
    lastTokenEvent = sseEvent(chunkJson(endpoint, rid, created, model, TOKEN_TEXT, 'length'));
    const onClose = (): void => {
      if (ended) return;
      ended = true;
      engine.abort(id);
    };
    res.once('close', onClose);
    if (res.destroyed) onClose();
    res.writeHead(200, SSE_HEADERS);
    if (endpoint === 'chat') res.write(sseEvent(chunkJson(endpoint, rid, created, model, null, null)));
    else res.flushHeaders();
    return RESPONSE_ALREADY_SENT;
  }

  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port, hostname: options.host });
    s.once('error', reject);
    s.once('listening', () => {
      s.off('error', reject);
      resolve(s);
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;

  const closeServer = (): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => resolve());
      if ('closeAllConnections' in server) server.closeAllConnections();
    });
  let closing: Promise<void> | null = null;
  const finish = async (): Promise<void> => {
    await closeServer();
    engine.close();
    if (recorder !== null) recorder.close();
  };
  return {
    url: `http://${host}:${port}`,
    port,
    engine,
    metrics,
    maxModelLen,
    drain: () => {
      draining = true;
      closing ??= engine.whenIdle().then(finish);
      return closing;
    },
    stop: () => {
      draining = true;
      for (const id of engine.inFlightIds()) engine.abort(id);
      closing ??= finish();
      return closing;
    },
  };
}
