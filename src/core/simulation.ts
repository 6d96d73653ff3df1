/**
 * The replay loop (docs/replay-model.md and docs/client-path.md): one discrete-event simulation of the load
 * generator, the server's tokenization and detokenization processes, and the engine workers.
 *
 * Reading guide: `run` drains the event queue instant by instant; at each instant events pop
 * in the documented tie order (pass ends, deliveries, arrivals) and passes start last, on every
 * engine worker that became idle or got work. Request state lives in a RequestTable; the only
 * per-token work is in EngineRank.finishPass and `deliverOutputs`.
 *
 * The simulation is the kernel: it owns time, events and the client path, hands requests to
 * the engine's worker pools, and records what happened. What varies between engines and
 * deployments sits behind seams built once per run from the run description: the load
 * generator (what is sent, when), and per pool (pool.ts) the router (which rank), the batch
 * policy (what a rank runs in a pass), the KV store (blocks and the prefix cache) and the
 * timing provider (how long a pass takes).
 */
import type { PassOutputs } from './engine-rank.js';
import { EventKind, EventQueue } from './event-queue.js';
import { fnv1a32OfId } from './fnv.js';
import { createLoadGenerator, type LoadGenerator, type TrafficEventKind, type TrafficSink } from './load-generator.js';
import { Pool, type PassListener } from './pool.js';
import { RequestTable, Status } from './request-table.js';
import type { ResolvedRun } from './run.js';
import { TokenGapPool } from './token-gaps.js';
import { expectedGaps } from './traffic.js';

export interface SimulationResult {
  table: RequestTable;
  /** Requests created (ids 0 .. count-1; for traces, rows up to the stop limit). */
  requestCount: number;
  gaps: TokenGapPool;
  /** Last response received (any request that ended), ms; 0 when none. */
  lastResponseMs: number;
  /** Time of the last processed event (the run's virtual end). */
  endMs: number;
  passCount: number;
  /** Per pool, in the run's order: passes started and their durations summed over its workers (ms). */
  poolPasses: { passes: number; busyMs: number }[];
  preemptionCount: number;
  /** Prefix-cache totals over every rank (null without a prefix cache): tokens looked up and served at admissions, blocks evicted. */
  prefixCache: { queriedTokens: number; hitTokens: number; evictions: number } | null;
  /** Per-token times, only when recording was asked for. */
  tokenReceivedMs: number[][] | null;
  tokenEmittedMs: number[][] | null;
}

export interface SimulationOptions {
  /** Keep every token's emit and receive time (for requests.jsonl). Costs memory. */
  recordTokens?: boolean;
  /**
   * Check the invariants after every pass start and end, and throw on the first broken one:
   * INV-kv (blocks held by running requests + free = pool, free >= 0, per rank) and INV-clock
   * (event time never decreases). For tests: it costs a scan of every rank per pass.
   */
  checkInvariants?: boolean;
  /**
   * Called at the start of every pass with the worker, the pass's start and end, and the view of
   * its slowest rank (read it during the call: the object is reused). For the catalog fit, which
   * reads the passes each request waited through; costs nothing when absent.
   */
  onPass?: PassListener;
  /**
   * Live driving (src/serve): called as each output token is emitted (pass end) and as it is
   * received by the client (its detokenization job's end, possibly later than the clock), and
   * when a whole response is received (`receiveEnd`). Cost nothing when absent.
   */
  onTokenEmitted?: (id: number, atMs: number) => void;
  onTokenReceived?: (id: number, atMs: number) => void;
  onResponseEnd?: (id: number, atMs: number) => void;
  /**
   * Pool every token gap for the `token_gap` statistic (default true). A run whose reader needs
   * only the per-request metrics (the fits, which read the means) turns it off: the summary then
   * has no `token_gap`, and the run neither buffers nor sorts its gaps.
   */
  tokenGaps?: boolean;
}

/** What a live driver reads of the engine for its gauges (`Simulation.readLoad`), summed over every rank. */
export interface EngineLoad {
  running: number;
  waiting: number;
  kvBlocksUsed: number;
  /** 0 when the pool is unlimited. */
  kvBlocksTotal: number;
  preemptions: number;
}

export class Simulation implements TrafficSink {
  private readonly cfg: ResolvedRun;
  readonly table: RequestTable;
  private readonly events = new EventQueue(4096);
  /** The engine's worker pools, in the run description's order. */
  readonly pools: Pool[] = [];
  /** The pool requests enter when they reach the scheduler. */
  private readonly entry: Pool;
  /** Disaggregated runs: the decode pool, its KV transfer from the prefill pool (the entry), and when each link is free. */
  private readonly decode: Pool | null = null;
  private readonly transfer: ResolvedRun['kvTransfer'];
  /** Per link (prefill worker x decode workers + decode worker): when its last queued transfer ends. */
  private readonly linkFreeMs: Float64Array;
  /** The pool of each worker, by its number across pools (a pass end's event target). */
  private readonly poolOfWorker: Int32Array;
  private readonly gaps: TokenGapPool;
  /** Whether token gaps are pooled (SimulationOptions.tokenGaps). */
  private readonly keepGaps: boolean;
  private readonly traffic: LoadGenerator;

  // Client-path servers: the time each becomes free.
  private readonly tokFreeMs: Float64Array;
  private readonly detokFreeMs: Float64Array;
  /** The latest detokenization job end delivered (the run's end when no event follows it). */
  private lastDeliveryMs = 0;
  /** Scratch of the detokenization stage with several servers: each server's job end; with chunks, job ends, each server's first job and outputs placed. */
  private readonly serverEndMs: Float64Array;
  private readonly jobEndsMs: Float64Array;
  private readonly firstJob: Int32Array;
  private readonly placed: Int32Array;

  private created = 0;
  private sent = 0;

  nowMs = 0;
  private lastResponseMs = 0;
  /** Requests sent whose whole response has not been received yet. */
  private inFlight = 0;
  private readonly tokenReceivedMs: number[][] | null;
  private readonly tokenEmittedMs: number[][] | null;
  private readonly recordEmit: ((id: number, nowMs: number) => void) | null;
  private readonly checkInvariants: boolean;
  // Live driving (src/serve): see SimulationOptions and the methods at the end of the class.
  private readonly onTokenReceived: ((id: number, atMs: number) => void) | null;
  private readonly onResponseEnd: ((id: number, atMs: number) => void) | null;
  /** Requests aborted before they reached a rank: dropped when they do (`enterScheduler`). */
  private readonly abortedBeforeScheduler = new Set<number>();
  /** Requests are injected (`injectRequest`): the traffic does not act on responses. */
  private live = false;

  constructor(run: ResolvedRun, options: SimulationOptions = {}) {
    this.cfg = run;
    const expected = Number.isFinite(run.maxRequests) ? run.maxRequests : 1024;
    this.table = new RequestTable(expected);
    this.checkInvariants = options.checkInvariants === true;
    if (run.pools.length === 0) throw new Error('a run needs at least one pool of engine workers');
    // Detokenization runs beside every worker whose passes emit outputs.
    const detokServers = run.detokenization?.serversPerWorker ?? 0;
    let workers = 0;
    let mostOutputs = 0;
    for (const spec of run.pools) {
      mostOutputs = Math.max(mostOutputs, spec.limits.maxSequences * spec.ranksPerWorker);
      const pool = new Pool(spec, workers, this.table, this.events, {
        detokServersPerWorker: detokServers,
        checkInvariants: this.checkInvariants,
        onPass: options.onPass ?? null,
        firstTokenOnDecode: run.kvTransfer?.firstTokenOnDecode ?? false,
      });
      this.pools.push(pool);
      workers += pool.workers;
    }
    this.entry = this.pools[0];
    this.transfer = run.kvTransfer;
    if (run.kvTransfer !== null) {
      if (this.pools.length !== 2 || this.pools[0].role !== 'prefill' || this.pools[1].role !== 'decode') {
        throw new Error('a KV transfer needs a prefill pool then a decode pool');
      }
      this.decode = this.pools[1];
    }
    this.linkFreeMs = new Float64Array(this.decode === null ? 0 : this.entry.workers * this.decode.workers);
    this.poolOfWorker = new Int32Array(workers);
    for (let p = 0; p < this.pools.length; p++)
      this.poolOfWorker.fill(p, this.pools[p].firstWorker, this.pools[p].firstWorker + this.pools[p].workers);
    const table = this.table;
    // Without a time cap every request that receives tokens completes, so every gap counts.
    // The buffer is sized from the run's token count when it is known: no doubling and copying.
    this.keepGaps = options.tokenGaps !== false;
    this.gaps = new TokenGapPool(
      Number.isFinite(run.capMs) ? (id) => table.status[id] === Status.Completed : null,
      this.keepGaps ? expectedGaps(run) : 0,
    );

    this.tokFreeMs = new Float64Array(run.tokenization ? run.tokenization.serversPerWorker * this.entry.workers : 0);
    this.detokFreeMs = new Float64Array(detokServers * workers);
    // At most one job per output and one per server: the outputs of one pass of one worker.
    this.jobEndsMs = new Float64Array(detokServers > 1 ? Math.max(16, mostOutputs) + detokServers : 0);
    this.serverEndMs = new Float64Array(detokServers);
    this.firstJob = new Int32Array(detokServers);
    this.placed = new Int32Array(detokServers);
    this.traffic = createLoadGenerator(run, this);

    const record = options.recordTokens === true;
    this.tokenReceivedMs = record ? [] : null;
    this.tokenEmittedMs = record ? [] : null;
    const emitted = this.tokenEmittedMs;
    this.recordEmit = emitted === null ? (options.onTokenEmitted ?? null) : (id, nowMs) => emitted[id].push(nowMs);
    this.onTokenReceived = options.onTokenReceived ?? null;
    this.onResponseEnd = options.onResponseEnd ?? null;
  }

  run(): SimulationResult {
    this.traffic.start();
    const events = this.events;
    const capMs = this.cfg.capMs;
    // A run whose requests all end at the instant they start (every one rejected in an empty
    // pass, or zero-length outputs with a zero-cost prefill) under a time cap would send
    // requests forever without time advancing: stop it with a clear error instead.
    let sameInstant = 0;
    const stallLimit = 2_000_000 + this.traffic.stallAllowance;
    for (;;) {
      if (events.size === 0 || events.peekTimeMs() > this.nowMs) {
        if (this.hasFlaggedWorkers()) {
          this.startPasses();
          continue;
        }
        if (events.size === 0) break;
        const next = events.peekTimeMs();
        if (next > capMs) break;
        if (this.checkInvariants && next < this.nowMs) throw new Error(`INV-clock: event at ${next} ms after ${this.nowMs} ms`);
        if (next > this.nowMs) sameInstant = 0;
        this.nowMs = next;
      }
      if (++sameInstant > stallLimit) throw this.stallError();
      const kind = events.peekKind();
      const target = events.peekTarget();
      events.pop();
      this.dispatch(kind, target);
    }
    let preemptions = 0;
    let queriedTokens = 0;
    let hitTokens = 0;
    let evictions = 0;
    let passes = 0;
    let prefixCache = false;
    for (const pool of this.pools) {
      passes += pool.passCount;
      if (pool.hasPrefixCache) prefixCache = true;
      for (const rank of pool.ranks) {
        preemptions += rank.preemptionCount;
        queriedTokens += rank.queriedTokens;
        hitTokens += rank.hitTokens;
        evictions += rank.store.evictions;
      }
    }
    return {
      table: this.table,
      requestCount: this.traffic.requestCount,
      gaps: this.gaps,
      lastResponseMs: this.lastResponseMs,
      endMs: this.lastDeliveryMs > this.nowMs ? this.lastDeliveryMs : this.nowMs,
      passCount: passes,
      poolPasses: this.pools.map((pool) => ({ passes: pool.passCount, busyMs: pool.busyMs })),
      preemptionCount: preemptions,
      prefixCache: prefixCache ? { queriedTokens, hitTokens, evictions } : null,
      tokenReceivedMs: this.tokenReceivedMs,
      tokenEmittedMs: this.tokenEmittedMs,
    };
  }

  /** Applies one event (shared by `run` and the live driver's `advanceBefore`). */
  private dispatch(kind: number, target: number): void {
    switch (kind) {
      case EventKind.PassEnd:
        this.endPass(target);
        break;
      case EventKind.Tokenized:
        this.enterScheduler(target);
        break;
      case EventKind.ClientAct:
        this.act(target);
        break;
      case EventKind.Send:
        this.traffic.onSend(target);
        break;
      case EventKind.SlotStart:
        this.traffic.onSlotStart(target);
        break;
      case EventKind.FrontendDone:
        this.reachServer(target);
        break;
      case EventKind.TransferDone:
        this.endTransfer(target);
        break;
    }
  }

  private stallError(): Error {
    return new Error(
      `the run makes no progress in virtual time at ${this.nowMs} ms: requests end at the instant they are sent ` +
        '(every request rejected, or zero-length outputs with a zero-cost prefill); give the client a response overhead ' +
        '(traffic.load.response_overhead.base_ms > 0) or stop by a request count',
    );
  }

  // ---- Traffic (docs/replay-model.md, "Traffic"): the load generator's side of the kernel ------

  schedule(atMs: number, kind: TrafficEventKind, target: number): void {
    this.events.push(atMs, kind, target);
  }

  createRequest(): number {
    const id = this.created++;
    this.table.ensure(this.created);
    return id;
  }

  /** Sends request `id` now: stamps it, then tokenization or straight to the scheduler. */
  send(id: number, slot: number): void {
    const t = this.table;
    const now = this.nowMs;
    t.sentMs[id] = now;
    t.slot[id] = slot;
    t.isWarmup[id] = this.sent < this.cfg.warmupRequests ? 1 : 0;
    this.sent++;
    if (this.tokenReceivedMs !== null) {
      this.tokenReceivedMs[id] = [];
      (this.tokenEmittedMs as number[][])[id] = [];
    }
    // Requests in flight: sent, their whole response not yet received.
    const others = this.inFlight++;
    const cfg = this.cfg;
    const frontendMs = cfg.frontendBaseMs + cfg.frontendPerTokenMs * t.prompt[id] + cfg.frontendPerInflightMs * others;
    if (frontendMs > 0) this.events.push(now + frontendMs, EventKind.FrontendDone, id);
    else this.reachServer(id);
  }

  /** The request reaches the server: tokenization, or straight to the scheduler. */
  private reachServer(id: number): void {
    const t = this.table;
    const now = this.nowMs;
    t.serverMs[id] = now;
    const tok = this.cfg.tokenization;
    if (tok === null) {
      this.enterScheduler(id);
      return;
    }
    t.status[id] = Status.Tokenizing;
    const server = fnv1a32OfId(id) % this.tokFreeMs.length;
    const start = Math.max(now, this.tokFreeMs[server]);
    const end = start + tok.baseMs + tok.perTokenMs * t.prompt[id];
    this.tokFreeMs[server] = end;
    this.events.push(end, EventKind.Tokenized, id);
  }

  /** The request reaches a scheduler's `waiting` queue: the entry pool's, on the rank its router picks. */
  private enterScheduler(id: number): void {
    const t = this.table;
    if (this.abortedBeforeScheduler.size > 0 && this.abortedBeforeScheduler.delete(id)) {
      this.endAborted(id);
      return;
    }
    t.tokenizedMs[id] = this.nowMs;
    if (this.cfg.detokenization !== null) {
      t.detokServer[id] = fnv1a32OfId(id) % this.cfg.detokenization.serversPerWorker;
    }
    // A short prompt stays on a decode worker, which prefills it too (conditional disaggregation).
    const transfer = this.transfer;
    if (transfer !== null && t.prompt[id] <= transfer.maxLocalPrefillTokens) {
      t.rank[id] = (this.decode as Pool).enqueue(id);
      return;
    }
    t.rank[id] = this.entry.enqueue(id);
  }

  /** The client acts on a finished response (docs/client-path.md): the load generator sends what follows. */
  private act(id: number): void {
    this.table.actedMs[id] = this.nowMs;
    // A live request's client is real: the run's traffic sends nothing after it.
    if (!this.live) this.traffic.onActed(id);
  }

  // ---- Engine (docs/replay-model.md, "Engine") ------------------------------------------------

  private hasFlaggedWorkers(): boolean {
    const pools = this.pools;
    for (let p = 0; p < pools.length; p++) if (pools[p].flaggedCount > 0) return true;
    return false;
  }

  /** Starts the passes of every pool's flagged workers (the last phase of an instant), pool by pool. */
  private startPasses(): void {
    const pools = this.pools;
    for (let p = 0; p < pools.length; p++) if (pools[p].flaggedCount > 0) pools[p].startPasses(this.nowMs);
  }

  /** A pass of `worker` (numbered across pools) ends: its pool applies it, its outputs go to the client. */
  private endPass(worker: number): void {
    const now = this.nowMs;
    const pool = this.pools[this.poolOfWorker[worker]];
    const local = worker - pool.firstWorker;
    const out = pool.endPass(local, now, this.recordEmit);
    for (let i = 0; i < out.handoffCount; i++) this.startTransfer(out.handoff[i], local);

    // Requests that ended without output skip detokenization (docs/client-path.md).
    for (let i = 0; i < out.endedCount; i++) this.receiveEnd(out.ended[i], now);

    const detok = this.cfg.detokenization;
    if (detok === null) {
      const emitted = out.emitted;
      this.deliverOutputs(emitted, 0, out.emittedCount, now);
      return;
    }
    this.queueDetokJobs(worker, out, detok.serversPerWorker, detok.baseMs, detok.perTokenMs, detok.chunkOutputs);
  }

  // ---- Disaggregation (docs/replay-model.md, "Disaggregated prefill and decode") ------------

  /**
   * Request `id` ended its prefill on prefill worker `worker` (of the prefill pool) with its first
   * token: the decode pool's router picks its rank now (it counts there as load from now on), and
   * its KV moves over the link between the two workers, after the transfers queued on it.
   */
  private startTransfer(id: number, worker: number): void {
    const decode = this.decode as Pool;
    const transfer = this.transfer as NonNullable<ResolvedRun['kvTransfer']>;
    const t = this.table;
    const rank = decode.routeIncoming(id);
    t.otherRank[id] = rank;
    const link = worker * decode.workers + ((rank / decode.ranksPerWorker) | 0);
    const free = this.linkFreeMs[link];
    const start = free > this.nowMs ? free : this.nowMs;
    const end = start + transfer.latencyMs + (t.computed[id] * transfer.bytesPerToken) / transfer.bytesPerMs;
    this.linkFreeMs[link] = end;
    t.handedOffMs[id] = this.nowMs;
    t.transferStartMs[id] = start;
    t.transferEndMs[id] = end;
    this.events.push(end, EventKind.TransferDone, id);
  }

  /**
   * Request `id`'s KV has reached its decode rank: the prefill worker frees its blocks, and the
   * request waits on the decode rank with its prompt's KV computed (unless its client went away).
   */
  private endTransfer(id: number): void {
    const t = this.table;
    const transfer = this.transfer as NonNullable<ResolvedRun['kvTransfer']>;
    this.entry.releaseSent(t.rank[id], id);
    const decode = this.decode as Pool;
    const rank = t.otherRank[id];
    t.otherRank[id] = t.rank[id];
    t.rank[id] = rank;
    if (t.generated[id] >= t.outputLen[id]) {
      // Aborted in transfer (`abortRequest`): it ends here with what it has.
      decode.ranks[rank].incoming--;
      t.status[id] = Status.EngineDone;
      if (t.received[id] === t.generated[id]) this.receiveEnd(id, this.nowMs);
      return;
    }
    // With the first token the decode worker's, its first pass recomputes the last prompt token
    // to sample it (vLLM's KV connectors count the received KV as one token short).
    t.kvReady[id] = transfer.firstTokenOnDecode ? t.computed[id] - 1 : t.computed[id];
    decode.enqueueIncoming(rank, id);
  }

  // ---- Client path (docs/client-path.md) ------------------------------------------------------

  /**
   * One FIFO job per server with outputs in this pass (or chunks of `chunkOutputs`). A FIFO
   * server's job ends at max(server free, pass end) + its cost, which is known when the job is
   * queued, and nothing that happens later can change it: so the job's outputs are stamped as
   * received at that end right away, and a response it completes schedules its client's act
   * (an event) from there. No event per job. A job ending after the time cap delivers nothing
   * (nothing after the cap is recorded). Outputs are delivered in emission order, each at its
   * job's end, so that outputs reaching the client at one instant are taken in the order the
   * engine emitted them, whatever their servers (as without detokenization).
   */
  private queueDetokJobs(worker: number, out: PassOutputs, servers: number, baseMs: number, perOutputMs: number, chunk: number): void {
    const now = this.nowMs;
    const capMs = this.cfg.capMs;
    if (servers === 1) {
      let remaining = out.emittedCount;
      let offset = 0;
      while (remaining > 0) {
        const size = chunk > 0 && remaining > chunk ? chunk : remaining;
        const end = this.queueJob(worker, now, baseMs, perOutputMs, size);
        if (end <= capMs) this.deliverOutputs(out.emitted, offset, size, end);
        remaining -= size;
        offset += size;
      }
      return;
    }
    // Each output's time is its job's end. A server's job(s) are queued when its first output
    // is met; the servers are independent, so the order does not matter, and a pass touches only
    // the servers it has outputs for. Each server's count is zeroed as its jobs are queued, so
    // the counts are all 0 again for the next pass.
    const first = worker * servers;
    if (chunk === 0) {
      this.deliverOutputsByServer(out, servers, first, now, baseMs, perOutputMs);
      return;
    }
    // Chunks of at most `chunk` outputs: a server's p-th output (0-based) is in its job p / chunk.
    const counts = out.serverCount;
    const emittedServer = out.emittedServer;
    const at = out.emittedAtMs;
    const jobEnds = this.jobEndsMs;
    const firstJob = this.firstJob;
    const placed = this.placed;
    let job = 0;
    for (let k = 0; k < out.emittedCount; k++) {
      const s = emittedServer[k];
      let remaining = counts[s];
      if (remaining > 0) {
        firstJob[s] = job;
        placed[s] = 0;
        while (remaining > 0) {
          const size = remaining > chunk ? chunk : remaining;
          jobEnds[job++] = this.queueJob(first + s, now, baseMs, perOutputMs, size);
          remaining -= size;
        }
        counts[s] = 0;
      }
      at[k] = jobEnds[firstJob[s] + ((placed[s]++ / chunk) | 0)];
    }
    this.deliverOutputsAt(out.emitted, out.emittedCount, at);
  }

  /** Queues a job of `size` outputs on detokenization server `global`; returns its end. */
  private queueJob(global: number, now: number, baseMs: number, perOutputMs: number, size: number): number {
    const free = this.detokFreeMs[global];
    const end = (free > now ? free : now) + baseMs + perOutputMs * size;
    this.detokFreeMs[global] = end;
    if (end <= this.cfg.capMs && end > this.lastDeliveryMs) this.lastDeliveryMs = end;
    return end;
  }

  /**
   * The client receives at `atMs` one output token of each request ids[start + k], k in
   * [0, count). `atMs` is now without detokenization, or a queued job's end.
   */
  private deliverOutputs(ids: Int32Array, start: number, count: number, atMs: number): void {
    const t = this.table;
    const received = t.received;
    const lastReceivedMs = t.lastReceivedMs;
    const isWarmup = t.isWarmup;
    const gaps = this.gaps;
    const keepGaps = this.keepGaps;
    const tokenReceivedMs = this.tokenReceivedMs;
    const onToken = this.onTokenReceived;
    const endOfCount = start + count;
    for (let k = start; k < endOfCount; k++) {
      const id = ids[k];
      const n = received[id]++;
      if (n === 0) {
        t.firstReceivedMs[id] = atMs;
      } else {
        if (n === 1) t.secondReceivedMs[id] = atMs;
        if (keepGaps && isWarmup[id] === 0) gaps.push(atMs - lastReceivedMs[id], id);
      }
      lastReceivedMs[id] = atMs;
      if (tokenReceivedMs !== null) tokenReceivedMs[id].push(atMs);
      if (onToken !== null) onToken(id, atMs);
      if (n + 1 === t.generated[id] && t.status[id] === Status.EngineDone) this.receiveEnd(id, atMs);
    }
  }

  /**
   * As `deliverOutputs`, each output at its own time `atMsEach[k]` (several detokenization
   * servers), skipping those past the time cap. A loop of its own rather than a parameter of
   * the one above: a time that is sometimes a passed-in number and sometimes read from a
   * Float64Array makes V8 box every time into a heap number, one allocation per token.
   */
  private deliverOutputsAt(ids: Int32Array, count: number, atMsEach: Float64Array): void {
    const t = this.table;
    const received = t.received;
    const lastReceivedMs = t.lastReceivedMs;
    const isWarmup = t.isWarmup;
    const gaps = this.gaps;
    const keepGaps = this.keepGaps;
    const tokenReceivedMs = this.tokenReceivedMs;
    const onToken = this.onTokenReceived;
    const capMs = this.cfg.capMs;
    for (let k = 0; k < count; k++) {
      const atMs = atMsEach[k];
      if (atMs > capMs) continue;
      const id = ids[k];
      const n = received[id]++;
      if (n === 0) {
        t.firstReceivedMs[id] = atMs;
      } else {
        if (n === 1) t.secondReceivedMs[id] = atMs;
        if (keepGaps && isWarmup[id] === 0) gaps.push(atMs - lastReceivedMs[id], id);
      }
      lastReceivedMs[id] = atMs;
      if (tokenReceivedMs !== null) tokenReceivedMs[id].push(atMs);
      if (onToken !== null) onToken(id, atMs);
      if (n + 1 === t.generated[id] && t.status[id] === Status.EngineDone) this.receiveEnd(id, atMs);
    }
  }

  /**
   * As `deliverOutputsAt`, with one job per server (no chunks): each server with outputs queues
   * its job first, then each output is received at its server's job end. (Queueing inside the
   * delivery loop would make V8 reload the table's columns at every output.)
   */
  private deliverOutputsByServer(
    out: PassOutputs,
    servers: number,
    firstServer: number,
    now: number,
    baseMs: number,
    perOutputMs: number,
  ): void {
    const counts = out.serverCount;
    const endOf = this.serverEndMs;
    for (let s = 0; s < servers; s++) {
      const size = counts[s];
      if (size > 0) {
        endOf[s] = this.queueJob(firstServer + s, now, baseMs, perOutputMs, size);
        counts[s] = 0;
      }
    }
    const t = this.table;
    const received = t.received;
    const lastReceivedMs = t.lastReceivedMs;
    const isWarmup = t.isWarmup;
    const gaps = this.gaps;
    const keepGaps = this.keepGaps;
    const tokenReceivedMs = this.tokenReceivedMs;
    const onToken = this.onTokenReceived;
    const capMs = this.cfg.capMs;
    const ids = out.emitted;
    const emittedServer = out.emittedServer;
    for (let k = 0; k < out.emittedCount; k++) {
      const atMs = endOf[emittedServer[k]];
      if (atMs > capMs) continue;
      const id = ids[k];
      const n = received[id]++;
      if (n === 0) {
        t.firstReceivedMs[id] = atMs;
      } else {
        if (n === 1) t.secondReceivedMs[id] = atMs;
        if (keepGaps && isWarmup[id] === 0) gaps.push(atMs - lastReceivedMs[id], id);
      }
      lastReceivedMs[id] = atMs;
      if (tokenReceivedMs !== null) tokenReceivedMs[id].push(atMs);
      if (onToken !== null) onToken(id, atMs);
      if (n + 1 === t.generated[id] && t.status[id] === Status.EngineDone) this.receiveEnd(id, atMs);
    }
  }

  /**
   * The client has the whole response at `now` (last token, a zero-length output, or a
   * rejection); for a detokenization job's outputs `now` is the job's end, at or after the clock.
   */
  private receiveEnd(id: number, now: number): void {
    const t = this.table;
    t.responseReceivedMs[id] = now;
    if (t.status[id] !== Status.Rejected) t.status[id] = Status.Completed;
    if (now > this.lastResponseMs) this.lastResponseMs = now;
    if (this.onResponseEnd !== null) this.onResponseEnd(id, now);
    const others = --this.inFlight;
    const overhead = this.cfg.responseOverhead;
    let actMs = now;
    if (overhead !== null) {
      actMs += overhead.baseMs + overhead.perInflightMs * others;
      if (t.status[id] !== Status.Rejected) actMs += overhead.perOutputTokenMs * t.received[id];
    }
    this.events.push(actMs, EventKind.ClientAct, id);
  }

  // ---- Live driving (src/serve, docs/serving.md) ------------------------------------------------
  //
  // The same kernel, advanced by a caller that follows a real clock. The run's traffic is a trace
  // of no rows at its timestamps (it sends nothing by itself); requests are injected as they
  // arrive, with ids in arrival order as a trace's rows have, so that a recorded session replays
  // offline to the same times. The caller advances the clock in bounded steps and never injects
  // a request before the bound it last advanced to. These methods and the `on*` options are the
  // kernel's whole live surface.

  /**
   * A request arriving at `atMs` (at or after the last `advanceBefore` bound) with these
   * lengths; returns its id. It is sent by a `Send` event at `atMs`, in the arrival phase of
   * that instant, exactly as a trace row at that timestamp would be.
   */
  injectRequest(promptTokens: number, outputTokens: number, atMs: number): number {
    this.live = true;
    const id = this.createRequest();
    const t = this.table;
    t.prompt[id] = promptTokens;
    t.outputLen[id] = outputTokens;
    t.sessionId[id] = id;
    t.turnIndex[id] = 0;
    t.slot[id] = 0;
    this.events.push(atMs, EventKind.Send, id);
    return id;
  }

  /**
   * Processes the events before `untilMs` (strictly: a request injected at `untilMs` still takes
   * its place among the events of its instant), starting passes as `run` does, at most
   * `maxEvents` of them. Returns true when events before `untilMs` are left (call again).
   */
  advanceBefore(untilMs: number, maxEvents: number): boolean {
    const events = this.events;
    let budget = maxEvents;
    for (;;) {
      if (events.size === 0 || events.peekTimeMs() > this.nowMs) {
        if (this.hasFlaggedWorkers()) {
          this.startPasses();
          continue;
        }
        if (events.size === 0 || events.peekTimeMs() >= untilMs) return false;
        this.nowMs = events.peekTimeMs();
      }
      if (budget-- === 0) return true;
      const kind = events.peekKind();
      const target = events.peekTarget();
      events.pop();
      this.dispatch(kind, target);
    }
  }

  /** Time of the next event, Infinity when none is queued. */
  get nextEventMs(): number {
    return this.events.size > 0 ? this.events.peekTimeMs() : Infinity;
  }

  /** The engine's state now, summed over every rank, into `out`. */
  readLoad(out: EngineLoad): void {
    out.running = 0;
    out.waiting = 0;
    out.kvBlocksUsed = 0;
    out.kvBlocksTotal = 0;
    out.preemptions = 0;
    for (const pool of this.pools) {
      for (const rank of pool.ranks) {
        out.running += rank.runningCount;
        out.waiting += rank.waiting.size;
        out.kvBlocksUsed += rank.store.usedBlocks;
        out.kvBlocksTotal += rank.store.totalBlocks;
        out.preemptions += rank.preemptionCount;
      }
    }
  }

  /**
   * Aborts request `id` (its client went away; vLLM's abort): one not yet on a rank is dropped
   * when it reaches the scheduler, a waiting one leaves `waiting` at once; a running one has its
   * output cut to what it has generated, so it leaves `running` and frees its KV blocks at its
   * next pass end through the ordinary finish path (a rank may be in a pass, and every batch
   * policy already handles a request that finishes), emitting nothing more. Nothing to do once
   * it has left the engine.
   */
  abortRequest(id: number): void {
    const t = this.table;
    switch (t.status[id]) {
      case Status.Created:
      case Status.Tokenizing:
        this.abortedBeforeScheduler.add(id);
        break;
      case Status.Waiting:
        // The rank index is the pool's own: look in each pool (a rank that does not hold it says no).
        for (const pool of this.pools) {
          const rank = pool.ranks[t.rank[id]];
          if (rank !== undefined && rank.abortWaiting(id)) {
            this.endAborted(id);
            break;
          }
        }
        break;
      case Status.Running:
      case Status.Transferring:
        t.outputLen[id] = t.generated[id];
        break;
    }
  }

  /** An aborted request that left the engine without finishing: it is no longer in flight. */
  private endAborted(id: number): void {
    this.table.status[id] = Status.Rejected;
    this.inFlight--;
  }
}
