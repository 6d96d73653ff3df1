/**
 * The live engine's `/metrics` (docs/serving.md, "Metrics"): Prometheus text through prom-client,
 * under vLLM's metric names and labels (`model_name`, `engine`), so that dashboards and
 * autoscalers built for vLLM read it unchanged. Gauges are read from the engine at each scrape;
 * counters and histograms are fed as the engine hands tokens and responses over. Latencies are
 * seconds of simulated time, measured from each request's arrival (as vLLM measures from its
 * receipt) to a token's receipt by the client's connection. prom-client's default Node.js metrics
 * (`process_resident_memory_bytes`, `nodejs_eventloop_lag_p99_seconds`, heap sizes, ...) come
 * with them: how the server process itself holds up.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FinishedRequest, LiveEngine, LiveObserver } from './live-engine.js';

// vLLM's buckets (vllm/v1/metrics/loggers.py).
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const E2E_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

const LABELS = ['model_name', 'engine'] as const;

export class LiveMetrics implements LiveObserver {
  readonly registry = new Registry();
  private readonly labels: { model_name: string; engine: string };
  private engine: LiveEngine | null = null;
  private readonly promptTokens: Counter<(typeof LABELS)[number]>;
  private readonly generationTokens: Counter<(typeof LABELS)[number]>;
  private readonly success: Counter<(typeof LABELS)[number] | 'finished_reason'>;
  private readonly ttft: Histogram<(typeof LABELS)[number]>;
  private readonly itl: Histogram<(typeof LABELS)[number]>;
  private readonly e2e: Histogram<(typeof LABELS)[number]>;
  /** Tokens handed over since the last scrape: the counter is increased once per scrape, not per token. */
  private pendingGenerated = 0;
  private preemptionsSeen = 0;

  constructor(modelName: string) {
    this.labels = { model_name: modelName, engine: '0' };
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 1 });
    const labels = this.labels;
    const read = (): LiveEngine | null => this.engine;
    new Gauge({
      name: 'vllm:num_requests_running',
      help: 'Number of requests in model execution batches.',
      labelNames: LABELS,
      registers,
      collect() {
        const engine = read();
        this.set(labels, engine === null ? 0 : engine.readLoad().running);
      },
    });
    new Gauge({
      name: 'vllm:num_requests_waiting',
      help: 'Number of requests waiting to be processed.',
      labelNames: LABELS,
      registers,
      collect() {
        const engine = read();
        this.set(labels, engine === null ? 0 : engine.countQueued());
      },
    });
    new Gauge({
      name: 'vllm:kv_cache_usage_perc',
      help: 'KV-cache usage. 1 means 100 percent usage.',
      labelNames: LABELS,
      registers,
      collect() {
        const engine = read();
        const load = engine?.readLoad();
        this.set(labels, load === undefined || load.kvBlocksTotal === 0 ? 0 : load.kvBlocksUsed / load.kvBlocksTotal);
      },
    });
    const preemptions = new Counter({
      name: 'vllm:num_preemptions_total',
      help: 'Cumulative number of preemptions from the engine.',
      labelNames: LABELS,
      registers,
      collect: () => {
        const engine = read();
        if (engine === null) return;
        const now = engine.readLoad().preemptions;
        if (now > this.preemptionsSeen) preemptions.inc(labels, now - this.preemptionsSeen);
        this.preemptionsSeen = now;
      },
    });
    this.promptTokens = new Counter({
      name: 'vllm:prompt_tokens_total',
      help: 'Number of prefill tokens processed.',
      labelNames: LABELS,
      registers,
    });
    this.generationTokens = new Counter({
      name: 'vllm:generation_tokens_total',
      help: 'Number of generation tokens processed.',
      labelNames: LABELS,
      registers,
      collect: () => {
        if (this.pendingGenerated > 0) this.generationTokens.inc(labels, this.pendingGenerated);
        this.pendingGenerated = 0;
      },
    });
    this.success = new Counter({
      name: 'vllm:request_success_total',
      help: 'Count of successfully processed requests.',
      labelNames: [...LABELS, 'finished_reason'],
      registers,
    });
    this.ttft = new Histogram({
      name: 'vllm:time_to_first_token_seconds',
      help: 'Histogram of time to first token in seconds.',
      labelNames: LABELS,
      buckets: TTFT_BUCKETS,
      registers,
    });
    this.itl = new Histogram({
      name: 'vllm:inter_token_latency_seconds',
      help: 'Histogram of inter-token latency in seconds.',
      labelNames: LABELS,
      buckets: ITL_BUCKETS,
      registers,
    });
    this.e2e = new Histogram({
      name: 'vllm:e2e_request_latency_seconds',
      help: 'Histogram of e2e request latency in seconds.',
      labelNames: LABELS,
      buckets: E2E_BUCKETS,
      registers,
    });
    // Every series exists from the start, at zero, as vLLM's do.
    this.promptTokens.inc(labels, 0);
    this.generationTokens.inc(labels, 0);
    preemptions.inc(labels, 0);
    this.success.inc({ ...labels, finished_reason: 'length' }, 0);
    this.success.inc({ ...labels, finished_reason: 'abort' }, 0);
  }

  /** The engine whose gauges are read at each scrape. */
  attach(engine: LiveEngine): void {
    this.engine = engine;
  }

  firstToken(ttftMs: number): void {
    this.pendingGenerated++;
    this.ttft.observe(this.labels, ttftMs / 1000);
  }

  nextToken(gapMs: number): void {
    this.pendingGenerated++;
    this.itl.observe(this.labels, gapMs / 1000);
  }

  finished(request: FinishedRequest): void {
    this.promptTokens.inc(this.labels, request.promptTokens);
    this.success.inc({ ...this.labels, finished_reason: request.aborted ? 'abort' : 'length' });
    if (!request.aborted) this.e2e.observe(this.labels, (request.endMs - request.arrivalMs) / 1000);
  }

  /** The Prometheus text and its content type. */
  async render(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
