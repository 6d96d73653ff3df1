/**
 * The load generator (docs/replay-model.md, "Traffic"): when requests are sent (arrivals: a closed loop, an
 * open loop at Poisson or constant gaps, a trace's timestamps) and what is sent (the source:
 * synthetic lengths, synthetic sessions, trace rows). One arrival process and one source per
 * run (`createLoadGenerator`), so the simulation never switches on load or source kinds.
 *
 * Ids are dense: synthetic requests get 0, 1, 2, ... in send order (a session's later turn gets
 * its id when it is sent); a trace row's id is its row index.
 */
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { EventKind } from './event-queue.js';
import type { RequestTable } from './request-table.js';
import { sessionTurnPromptTokens, type ResolvedRun } from './run.js';
import { NO_NEXT, buildTraceOrder, drawLength, drawNormalLength, type Rng } from './traffic.js';

/** The events a load generator schedules. */
export type TrafficEventKind = typeof EventKind.Send | typeof EventKind.SlotStart;

/** What a load generator may do in the simulation. */
export interface TrafficSink {
  readonly nowMs: number;
  readonly table: RequestTable;
  /** Sends request `id` now, from closed-loop slot `slot` (-1 for an open-loop arrival). */
  send(id: number, slot: number): void;
  /** Schedules a traffic event (`Send` or `SlotStart`) for `target` at `atMs`. */
  schedule(atMs: number, kind: TrafficEventKind, target: number): void;
  /** A fresh request id, with room for it in the table. */
  createRequest(): number;
}

export interface LoadGenerator {
  /** Starts the traffic at t = 0. */
  start(): void;
  /** A `Send` event: -1 is an open-loop arrival; other targets are what the source scheduled. */
  onSend(target: number): void;
  /** A `SlotStart` event: a closed-loop slot's first send after its ramp-up delay. */
  onSlotStart(slot: number): void;
  /** The client has acted on request `id`'s response. */
  onActed(id: number): void;
  /** Requests created so far (for a trace: its rows up to the stop limit). */
  readonly requestCount: number;
  /** Events at one instant allowed beyond the stall guard's base (a closed loop starts every slot at once). */
  readonly stallAllowance: number;
}

/** What is sent: requests, sessions of turns, or trace rows. */
interface RequestSource {
  /** Starts the next unit (a request, a session's first turn, a trace row) from `slot`, if any is left. */
  startUnit(slot: number): void;
  /** Whether `startUnit` would start anything. */
  hasMore(): boolean;
  /** After the client acted on `id`: sends or schedules the next turn of its session; false when there is none. */
  continueAfter(id: number): boolean;
  /** A `Send` event this source scheduled (a delayed turn, a trace row). */
  onSend(target: number): void;
  readonly requestCount: number;
}

/**
 * Synthetic lengths. Without a dataset every request draws its own lengths and is its own
 * session. With one (AIPerf's dataset entries), each entry draws its lengths once, in entry order,
 * and a request takes an entry as the sampling says; the entry is its session, so the prefix
 * cache shares a repeated prompt's blocks.
 */
class SyntheticSource implements RequestSource {
  private readonly rng: Rng;
  /** Each entry's prompt and output tokens (empty without a dataset). */
  private readonly entryPrompt: Int32Array;
  private readonly entryOutput: Int32Array;
  /** Shuffle sampling: this pass's order of the entries, and how many of it were taken. */
  private readonly order: Int32Array;
  private taken: number;

  constructor(
    private readonly sink: TrafficSink,
    private readonly inputTokens: number,
    private readonly outputTokens: number,
    private readonly rangeRatio: number,
    private readonly inputStddev: number,
    private readonly outputStddev: number,
    seed: number,
    private readonly maxRequests: number,
    entries: number,
    private readonly sampling: 'shuffle' | 'sequential' | 'random',
  ) {
    this.rng = xoroshiro128plus(seed);
    this.entryPrompt = new Int32Array(entries);
    this.entryOutput = new Int32Array(entries);
    for (let e = 0; e < entries; e++) {
      this.entryPrompt[e] = this.drawPrompt();
      this.entryOutput[e] = this.drawOutput();
    }
    this.order = new Int32Array(sampling === 'shuffle' ? entries : 0);
    this.taken = this.order.length;
  }

  get requestCount(): number {
    return this.created;
  }

  private created = 0;

  private drawPrompt(): number {
    return this.inputStddev > 0
      ? drawNormalLength(this.rng, this.inputTokens, this.inputStddev, 1)
      : drawLength(this.rng, this.inputTokens, this.rangeRatio, 1);
  }

  private drawOutput(): number {
    return this.outputStddev > 0
      ? drawNormalLength(this.rng, this.outputTokens, this.outputStddev, 1)
      : drawLength(this.rng, this.outputTokens, this.rangeRatio, 0);
  }

  /** The entry request number `n` (0-based) repeats. */
  private entryOf(n: number): number {
    const entries = this.entryPrompt.length;
    if (this.sampling === 'sequential') return n % entries;
    if (this.sampling === 'random') return uniformInt(this.rng, 0, entries - 1);
    // Shuffle: a fresh Fisher-Yates order of every entry each time the last one ran out.
    const order = this.order;
    if (this.taken === entries) {
      for (let e = 0; e < entries; e++) order[e] = e;
      for (let e = entries - 1; e > 0; e--) {
        const j = uniformInt(this.rng, 0, e);
        const swap = order[e];
        order[e] = order[j];
        order[j] = swap;
      }
      this.taken = 0;
    }
    return order[this.taken++];
  }

  startUnit(slot: number): void {
    if (this.created >= this.maxRequests) return;
    const id = this.sink.createRequest();
    const n = this.created++;
    const t = this.sink.table;
    if (this.entryPrompt.length > 0) {
      const entry = this.entryOf(n);
      t.prompt[id] = this.entryPrompt[entry];
      t.outputLen[id] = this.entryOutput[entry];
      t.sessionId[id] = entry;
    } else {
      t.prompt[id] = this.drawPrompt();
      t.outputLen[id] = this.drawOutput();
      t.sessionId[id] = id;
    }
    t.turnIndex[id] = 0;
    this.sink.send(id, slot);
  }

  hasMore(): boolean {
    return this.created < this.maxRequests;
  }

  continueAfter(): boolean {
    return false;
  }

  onSend(): void {}
}

/**
 * Synthetic sessions: turn k's prompt carries the conversation so far; turn k + 1 is sent
 * `interTurnDelayMs` after the client acted on turn k (its id is taken when it is sent).
 */
class SessionSource implements RequestSource {
  private created = 0;
  private sessions = 0;

  constructor(
    private readonly sink: TrafficSink,
    private readonly turns: number,
    private readonly newInputTokens: number,
    private readonly outputTokens: number,
    private readonly interTurnDelayMs: number,
    private readonly maxRequests: number,
  ) {}

  get requestCount(): number {
    return this.created;
  }

  startUnit(slot: number): void {
    if (this.created >= this.maxRequests) return;
    const id = this.sink.createRequest();
    this.created++;
    const t = this.sink.table;
    t.prompt[id] = this.newInputTokens;
    t.outputLen[id] = this.outputTokens;
    t.sessionId[id] = this.sessions++;
    t.turnIndex[id] = 0;
    this.sink.send(id, slot);
  }

  hasMore(): boolean {
    return this.created < this.maxRequests;
  }

  continueAfter(id: number): boolean {
    if (this.sink.table.turnIndex[id] + 1 >= this.turns || this.created >= this.maxRequests) return false;
    if (this.interTurnDelayMs > 0) this.sink.schedule(this.sink.nowMs + this.interTurnDelayMs, EventKind.Send, id);
    else this.onSend(id);
    return true;
  }

  /** Sends the turn after request `prev`. */
  onSend(prev: number): void {
    if (this.created >= this.maxRequests) return;
    const id = this.sink.createRequest();
    this.created++;
    const t = this.sink.table;
    const turn = t.turnIndex[prev] + 1;
    t.prompt[id] = sessionTurnPromptTokens(this.newInputTokens, this.outputTokens, turn + 1);
    t.outputLen[id] = this.outputTokens;
    t.sessionId[id] = t.sessionId[prev];
    t.turnIndex[id] = turn;
    this.sink.send(id, t.slot[prev]);
  }
}

/**
 * Trace rows. Without session replay every row is its own unit, in file order; with it (trace
 * timestamps), a session's later row is sent its `delay` after the client acted on the one
 * before.
 */
class TraceSource implements RequestSource {
  /** Rows that start a unit, in send order. */
  readonly starts: Int32Array;
  private readonly nextInSession: Int32Array | null;
  private cursor = 0;

  constructor(
    private readonly sink: TrafficSink,
    readonly trace: { timestampMs: Float64Array; inputLength: Int32Array; outputLength: Int32Array; delayMs: Float64Array },
    readonly requestCount: number,
    order: ReturnType<typeof buildTraceOrder>,
  ) {
    this.starts = order.starts;
    this.nextInSession = order.nextInSession;
    const t = sink.table;
    t.ensure(requestCount);
    for (let row = 0; row < requestCount; row++) {
      t.prompt[row] = trace.inputLength[row];
      t.outputLen[row] = trace.outputLength[row];
      t.sessionId[row] = order.sessionIndex[row];
      t.turnIndex[row] = order.turnIndex[row];
    }
  }

  startUnit(slot: number): void {
    if (this.cursor >= this.starts.length) return;
    this.sink.send(this.starts[this.cursor++], slot);
  }

  hasMore(): boolean {
    return this.cursor < this.starts.length;
  }

  continueAfter(id: number): boolean {
    if (this.nextInSession === null) return false;
    const next = this.nextInSession[id];
    if (next === NO_NEXT) return false;
    const t = this.sink.table;
    t.slot[next] = t.slot[id];
    this.sink.schedule(this.sink.nowMs + this.trace.delayMs[next], EventKind.Send, next);
    return true;
  }

  onSend(row: number): void {
    this.sink.send(row, this.sink.table.slot[row]);
  }
}

/** Arrivals: when units start. */
abstract class Arrivals implements LoadGenerator {
  constructor(
    protected readonly sink: TrafficSink,
    protected readonly source: RequestSource,
  ) {}

  get requestCount(): number {
    return this.source.requestCount;
  }

  get stallAllowance(): number {
    return 0;
  }

  abstract start(): void;

  onSend(target: number): void {
    this.source.onSend(target);
  }

  onSlotStart(slot: number): void {
    this.source.startUnit(slot);
  }

  onActed(id: number): void {
    this.source.continueAfter(id);
  }
}

/**
 * A closed loop: every slot sends at t = 0 (or slot k at k x ramp / concurrency), and sends its
 * next unit when the client has acted on the last response of the one before.
 */
class ClosedLoop extends Arrivals {
  constructor(
    sink: TrafficSink,
    source: RequestSource,
    private readonly concurrency: number,
    private readonly rampUpMs: number,
  ) {
    super(sink, source);
  }

  override get stallAllowance(): number {
    return 16 * this.concurrency;
  }

  start(): void {
    for (let slot = 0; slot < this.concurrency; slot++) {
      const startMs = (slot * this.rampUpMs) / this.concurrency;
      if (startMs === 0) this.source.startUnit(slot);
      else this.sink.schedule(startMs, EventKind.SlotStart, slot);
    }
  }

  override onActed(id: number): void {
    if (!this.source.continueAfter(id)) this.source.startUnit(this.sink.table.slot[id]);
  }
}

/** An open loop: the first arrival at 0, then gaps of -ln(U) 1000 / rate (Poisson) or exactly 1000 / rate. */
class OpenLoop extends Arrivals {
  private nextArrivalMs = 0;
  private readonly rng: Rng | null;

  constructor(
    sink: TrafficSink,
    source: RequestSource,
    private readonly ratePerSecond: number,
    seed: number | null,
  ) {
    super(sink, source);
    this.rng = seed === null ? null : xoroshiro128plus(seed);
  }

  start(): void {
    this.nextArrivalMs = 0;
    this.sink.schedule(0, EventKind.Send, -1);
  }

  override onSend(target: number): void {
    if (target >= 0) {
      this.source.onSend(target);
      return;
    }
    this.source.startUnit(-1);
    if (!this.source.hasMore()) return;
    const rate = this.ratePerSecond;
    const gapMs = this.rng !== null ? (-Math.log(1 - uniformFloat64(this.rng)) * 1000) / rate : 1000 / rate;
    this.nextArrivalMs += gapMs;
    this.sink.schedule(this.nextArrivalMs, EventKind.Send, -1);
  }
}

/** A trace at its timestamps: each session's first row at (timestamp - first timestamp) / speedup. */
class TraceTimestamps extends Arrivals {
  constructor(
    sink: TrafficSink,
    private readonly trace: TraceSource,
    private readonly speedup: number,
  ) {
    super(sink, trace);
  }

  start(): void {
    const starts = this.trace.starts;
    if (starts.length === 0) return;
    const ts = this.trace.trace.timestampMs;
    const first = ts[starts[0]];
    for (let i = 0; i < starts.length; i++) {
      const row = starts[i];
      this.sink.schedule((ts[row] - first) / this.speedup, EventKind.Send, row);
    }
  }
}

export function createLoadGenerator(run: ResolvedRun, sink: TrafficSink): LoadGenerator {
  const src = run.source;
  const load = run.load;
  let source: RequestSource;
  switch (src.kind) {
    case 'synthetic':
      source = new SyntheticSource(
        sink,
        src.inputTokens,
        src.outputTokens,
        src.rangeRatio,
        src.inputStddev,
        src.outputStddev,
        src.seed,
        run.maxRequests,
        src.entries,
        src.sampling,
      );
      break;
    case 'session':
      source = new SessionSource(sink, src.turns, src.newInputTokens, src.outputTokens, src.interTurnDelayMs, run.maxRequests);
      break;
    case 'trace': {
      const order = buildTraceOrder(src.trace.rows, run.maxRequests, src.trace, load.kind === 'timestamps');
      const trace = new TraceSource(sink, src.trace, run.maxRequests, order);
      if (load.kind === 'timestamps') return new TraceTimestamps(sink, trace, load.speedup);
      source = trace;
      break;
    }
  }
  switch (load.kind) {
    case 'closed':
      return new ClosedLoop(sink, source, load.concurrency, load.rampUpMs);
    case 'poisson':
      return new OpenLoop(sink, source, load.ratePerSecond, load.seed);
    case 'constant':
      return new OpenLoop(sink, source, load.ratePerSecond, null);
    case 'timestamps':
      throw new Error('traffic.load: trace_timestamps needs a trace source');
  }
}
