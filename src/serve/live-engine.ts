/**
 * The real-time driver of a live engine (docs/serving.md): the replay core's `Simulation`, with
 * the scheduler policies, KV store and timing model of `replay`, advanced by the wall clock.
 *
 * Simulated time is (wall time - the first request's arrival) x speed, so the first request
 * arrives at 0 ms, as the first row of a trace replayed at its timestamps does. A request is
 * injected at its receipt; the core then only ever processes events strictly before the clock,
 * so a request received later still takes its place among the events of its instant, and the
 * simulated times are exactly those of an offline replay of the same arrivals. Each token and
 * each response end is handed to its client when the wall clock reaches its simulated time.
 * The core advances in bounded steps (`maxEventsPerStep` events, then the event loop runs
 * I/O), and a timer wakes the driver at the next event or delivery; nothing spins.
 */
import { performance } from 'node:perf_hooks';
import type { ResolvedRun } from '../core/run.js';
import { Simulation, type EngineLoad } from '../core/simulation.js';
import { Status } from '../core/request-table.js';
import { Delivery, DeliveryQueue } from './delivery-queue.js';

/** The receiver of one request's response. */
export interface LiveClient {
  /** Output token `index` (0-based) reached the client at simulated `atMs`; called when the wall clock gets there. */
  onToken(index: number, atMs: number): void;
  /** The whole response (`tokens` output tokens, all handed over before) ended at simulated `atMs`. */
  onEnd(atMs: number, tokens: number): void;
}

/** A request that left the live engine: completed, or aborted when its client went away. */
export interface FinishedRequest {
  id: number;
  arrivalMs: number;
  promptTokens: number;
  /** The output length asked for (max_tokens). */
  maxTokens: number;
  aborted: boolean;
  /** Output tokens handed to the client. */
  outputTokens: number;
  /** Simulated stamps (ms), NaN where the request did not get there. */
  tokenizedMs: number;
  firstScheduledMs: number;
  firstEmittedMs: number;
  endMs: number;
  /** Each token's receive and emit time, when the engine keeps them (`keepTokenTimes`). */
  tokenMs: number[] | null;
  emittedMs: number[] | null;
}

/** What the metrics see of the requests, as their deliveries are made. */
export interface LiveObserver {
  /** A request's first token: time to first token, ms of simulated time. */
  firstToken(ttftMs: number): void;
  /** A later token: the gap since the request's previous one, ms. */
  nextToken(gapMs: number): void;
  finished(request: FinishedRequest): void;
}

export interface LiveEngineOptions {
  /** Simulated ms per wall ms (1 = real time). */
  speed: number;
  /** Keep every token's times for the finished-request records (`--record`). */
  keepTokenTimes?: boolean;
  /** Events the core processes before the driver lets the event loop run I/O. */
  maxEventsPerStep?: number;
  observer?: LiveObserver;
  /** The wall clock in ms (performance.now by default; tests drive their own). */
  clock?: () => number;
}

interface LiveState {
  client: LiveClient;
  arrivalMs: number;
  promptTokens: number;
  maxTokens: number;
  tokens: number;
  lastTokenMs: number;
  tokenMs: number[] | null;
  emittedMs: number[] | null;
}

const DEFAULT_EVENTS_PER_STEP = 2048;

export class LiveEngine {
  readonly sim: Simulation;
  private readonly speed: number;
  private readonly clock: () => number;
  private readonly maxEvents: number;
  private readonly keepTokenTimes: boolean;
  private readonly observer: LiveObserver | null;
  private readonly deliveries = new DeliveryQueue();
  private readonly live = new Map<number, LiveState>();
  private readonly load: EngineLoad = { running: 0, waiting: 0, kvBlocksUsed: 0, kvBlocksTotal: 0, preemptions: 0 };
  /** Wall time (ms) of simulated 0: the first request's receipt; NaN before it. */
  private originMs = NaN;
  /** The bound the core was last advanced to: no request may be injected before it. */
  private boundMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerAtMs = Infinity;
  private immediate: NodeJS.Immediate | null = null;
  private closed = false;
  private idleWaiters: Array<() => void> = [];

  constructor(run: ResolvedRun, options: LiveEngineOptions) {
    this.speed = options.speed;
    this.clock = options.clock ?? (() => performance.now());
    this.maxEvents = options.maxEventsPerStep ?? DEFAULT_EVENTS_PER_STEP;
    this.keepTokenTimes = options.keepTokenTimes === true;
    this.observer = options.observer ?? null;
    const deliveries = this.deliveries;
    this.sim = new Simulation(run, {
      onTokenReceived: (id, atMs) => deliveries.push(atMs, id, Delivery.Token),
      onResponseEnd: (id, atMs) => deliveries.push(atMs, id, Delivery.End),
      onTokenEmitted: this.keepTokenTimes
        ? (id, atMs) => {
            const state = this.live.get(id);
            if (state !== undefined) (state.emittedMs as number[]).push(atMs);
          }
        : undefined,
    });
  }

  /** Simulated now (ms); the first call sets the origin. */
  simNowMs(): number {
    const wall = this.clock();
    if (this.originMs !== this.originMs) this.originMs = wall;
    return (wall - this.originMs) * this.speed;
  }

  /** Requests in the engine (received, response not over). */
  get inFlight(): number {
    return this.live.size;
  }

  /** Injects a request received now; returns its id (ids are dense, in arrival order). */
  submit(promptTokens: number, maxTokens: number, client: LiveClient): number {
    if (this.closed) throw new Error('the live engine is closed');
    const now = this.simNowMs();
    const atMs = now > this.boundMs ? now : this.boundMs;
    const id = this.sim.injectRequest(promptTokens, maxTokens, atMs);
    this.live.set(id, {
      client,
      arrivalMs: atMs,
      promptTokens,
      maxTokens,
      tokens: 0,
      lastTokenMs: NaN,
      tokenMs: this.keepTokenTimes ? [] : null,
      emittedMs: this.keepTokenTimes ? [] : null,
    });
    this.wake();
    return id;
  }

  /**
   * Aborts request `id` (its client went away): the core frees it (Simulation.abortRequest) and
   * nothing more is handed to its client. A request that already ended is left alone.
   */
  abort(id: number): void {
    const state = this.live.get(id);
    if (state === undefined) return;
    this.sim.abortRequest(id);
    this.finish(id, state, true, NaN);
    this.wake();
  }

  /** The engine's gauges now: running, waiting (in a scheduler queue), KV blocks, preemptions. */
  readLoad(): EngineLoad {
    this.sim.readLoad(this.load);
    return this.load;
  }

  /** Requests received and not yet running: waiting in a scheduler queue, or not yet there (frontend, tokenization). */
  countQueued(): number {
    this.sim.readLoad(this.load);
    let beforeScheduler = 0;
    const status = this.sim.table.status;
    for (const id of this.live.keys()) {
      if (status[id] === Status.Created || status[id] === Status.Tokenizing) beforeScheduler++;
    }
    return this.load.waiting + beforeScheduler;
  }

  /** Resolves once no request is in flight. */
  whenIdle(): Promise<void> {
    if (this.live.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops the timers; requests still in flight are left as they are (abort them first). */
  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.immediate !== null) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  /** The ids of the requests in flight, in arrival order. */
  inFlightIds(): number[] {
    return [...this.live.keys()].sort((a, b) => a - b);
  }

  // ---- The loop ------------------------------------------------------------------------------

  private readonly step = (): void => {
    this.timer = null;
    this.timerAtMs = Infinity;
    this.immediate = null;
    if (this.closed) return;
    const now = this.simNowMs();
    if (now > this.boundMs) this.boundMs = now;
    const more = this.sim.advanceBefore(this.boundMs, this.maxEvents);
    this.deliverUntil(now);
    if (more) this.immediate = setImmediate(this.step);
    else this.wake();
  };

  /** Sets the timer for the next event or delivery (at once when it is due). */
  private wake(): void {
    if (this.closed || this.immediate !== null) return;
    const next = Math.min(this.sim.nextEventMs, this.deliveries.peekTimeMs());
    if (next === Infinity) return;
    const wallAtMs = this.originMs + next / this.speed;
    if (this.timer !== null) {
      if (this.timerAtMs <= wallAtMs) return;
      clearTimeout(this.timer);
    }
    // Node's timers count whole ms and may fire up to a ms early: round up, so that the core
    // has reached the time when it wakes (an event is processed once the clock is past it).
    const delayMs = Math.max(0, Math.ceil(wallAtMs - this.clock()));
    this.timerAtMs = wallAtMs;
    this.timer = setTimeout(this.step, delayMs);
  }

  /** Hands every delivery due by simulated `nowMs` to its client, in time order. */
  private deliverUntil(nowMs: number): void {
    const queue = this.deliveries;
    while (queue.size > 0 && queue.peekTimeMs() <= nowMs) {
      const atMs = queue.peekTimeMs();
      const id = queue.peekId();
      const kind = queue.peekKind();
      queue.pop();
      const state = this.live.get(id);
      // An aborted request's deliveries are dropped.
      if (state === undefined) continue;
      if (kind === Delivery.Token) this.deliverToken(state, atMs);
      else {
        this.finish(id, state, false, atMs);
        state.client.onEnd(atMs, state.tokens);
      }
    }
  }

  private deliverToken(state: LiveState, atMs: number): void {
    const index = state.tokens++;
    if (this.observer !== null) {
      if (index === 0) this.observer.firstToken(atMs - state.arrivalMs);
      else this.observer.nextToken(atMs - state.lastTokenMs);
    }
    state.lastTokenMs = atMs;
    if (state.tokenMs !== null) state.tokenMs.push(atMs);
    state.client.onToken(index, atMs);
  }

  private finish(id: number, state: LiveState, aborted: boolean, endMs: number): void {
    this.live.delete(id);
    if (this.observer !== null) {
      const t = this.sim.table;
      this.observer.finished({
        id,
        arrivalMs: state.arrivalMs,
        promptTokens: state.promptTokens,
        maxTokens: state.maxTokens,
        aborted,
        outputTokens: state.tokens,
        tokenizedMs: t.tokenizedMs[id],
        firstScheduledMs: t.firstScheduledMs[id],
        firstEmittedMs: t.firstEmittedMs[id],
        endMs,
        tokenMs: state.tokenMs,
        emittedMs: state.emittedMs,
      });
    }
    if (this.live.size === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
