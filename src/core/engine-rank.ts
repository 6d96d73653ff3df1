/**
 * One attention-DP rank of an engine worker (docs/replay-model.md, "Engine"): its `waiting` and `running`
 * queues, its KV store, and the effects a batch policy applies to them (admit, preempt,
 * reject). The policy (policies/batch-policy.ts) decides what runs in a pass; the rank applies the pass
 * at its end (`finishPass`): computed tokens advance, tokens are emitted, finished requests
 * leave. Neither schedules events: the simulation does.
 */
import { IntDeque } from './int-deque.js';
import type { KvStore } from './kv-store.js';
import { type RequestTable, Status } from './request-table.js';
import type { PassView } from './timing/timing-model.js';

export interface RankLimits {
  maxBatchedTokens: number;
  maxSequences: number;
  chunkedPrefill: boolean;
  blockSize: number;
  lengthLimit: number;
}

/**
 * What the rank tells about a request's life on it: whoever placed it there (the router) may
 * keep its own view of each rank's load. Called once or twice per request, never per token.
 */
export interface RequestLifecycle {
  /** Whether the calls below do anything (a router that keeps no load of its own skips them). */
  readonly listens: boolean;
  /** Request `id`'s prefill is done: its first token is emitted. */
  prefillDone(rank: number, id: number): void;
  /** Request `id` left rank `rank`: it finished, or was rejected. */
  finished(rank: number, id: number): void;
}
/**
 * Where a rank writes the results of a pass end; shared by the ranks of one worker. Emitted
 * outputs are kept in emission order (rank, then running order); with several detokenization
 * servers each also records its server, so the detokenization stage can time each server's jobs
 * and still deliver the outputs in emission order.
 */
export class PassOutputs {
  /** Requests that emitted a token, in rank then running order (`capacity` of them at most). */
  readonly emitted: Int32Array;
  emittedCount = 0;
  /** Requests that ended without a token to deliver: rejections and zero-length outputs. */
  ended: Int32Array;
  endedCount = 0;
  /** Prefill workers: requests whose prefill ended with their first token, to hand to a decode worker. */
  handoff: Int32Array;
  handoffCount = 0;
  /** Detokenization servers the outputs go to; 0 = one server or none (no routing). */
  readonly servers: number;
  /** With several servers: the server of emitted[k], and how many outputs each server got. */
  readonly emittedServer: Int32Array;
  readonly serverCount: Int32Array;
  /** With several servers: when emitted[k] reaches the client (its job's end), filled by the detokenization stage. */
  readonly emittedAtMs: Float64Array;
  readonly capacity: number;

  constructor(capacity: number, servers = 0) {
    this.capacity = Math.max(16, capacity);
    this.emitted = new Int32Array(this.capacity);
    this.ended = new Int32Array(16);
    this.handoff = new Int32Array(16);
    this.servers = servers > 1 ? servers : 0;
    this.emittedServer = new Int32Array(this.servers > 0 ? this.capacity : 0);
    this.serverCount = new Int32Array(this.servers);
    this.emittedAtMs = new Float64Array(this.servers > 0 ? this.capacity : 0);
  }

  pushEnded(id: number): void {
    if (this.endedCount === this.ended.length) this.ended = grow(this.ended);
    this.ended[this.endedCount++] = id;
  }

  pushHandoff(id: number): void {
    if (this.handoffCount === this.handoff.length) this.handoff = grow(this.handoff);
    this.handoff[this.handoffCount++] = id;
  }

  /** Empties the buffers for the next pass end (the detokenization stage zeroes `serverCount` as it reads it). */
  clear(): void {
    this.emittedCount = 0;
    this.endedCount = 0;
    this.handoffCount = 0;
  }
}

export class EngineRank {
  readonly waiting = new IntDeque(256);
  running: Int32Array;
  runningCount = 0;
  /** running[0 .. scheduledCount) run in the current pass. */
  scheduledCount = 0;
  /** Rejected at the head of `waiting` during this pass's composition; reach the client at its end. */
  rejected: Int32Array = new Int32Array(16);
  rejectedCount = 0;
  preemptionCount = 0;
  /** Tokens looked up in the prefix cache at admissions (known sequence), and of those, served by it. */
  queriedTokens = 0;
  hitTokens = 0;
  /** Decode ranks: requests routed here whose KV is still in transfer (a router counts them as load). */
  incoming = 0;
  /**
   * Prefill ranks: requests that left `running` with their first token and still hold their
   * blocks here until their KV transfer ends (`releaseSent`).
   */
  sending: Int32Array = new Int32Array(16);
  sendingCount = 0;
  /** The pass the policy composed, as the timing provider sees it. */
  readonly view: PassView = {
    prefillTokens: 0,
    prefillPairs: 0,
    decodeRequests: 0,
    decodeKvTokens: 0,
    decodeKvMax: 0,
    decodeKvMin: 0,
    emittedTokens: 0,
    workerTokens: 0,
    kvBlocksUsed: 0,
    kvBlocksTotal: 0,
  };

  constructor(
    /** Global index of this rank (worker x ranks per worker + rank in worker). */
    readonly index: number,
    readonly limits: RankLimits,
    readonly table: RequestTable,
    readonly store: KvStore,
    private readonly lifecycle: RequestLifecycle,
    /** A prefill rank: a request leaves with its first token, for a decode worker. */
    readonly handsOff = false,
    /**
     * A prefill rank whose first tokens are the decode worker's (`KvTransfer.firstTokenOnDecode`):
     * a request leaves at the end of its prefill without emitting a token.
     */
    readonly handsOffBeforeToken = false,
  ) {
    this.running = new Int32Array(limits.maxSequences);
    this.view.kvBlocksTotal = store.totalBlocks;
  }

  get hasWork(): boolean {
    return this.runningCount > 0 || this.waiting.size > 0;
  }

  enqueue(id: number): void {
    this.waiting.pushBack(id);
    this.table.status[id] = Status.Waiting;
  }

  // ---- Effects a batch policy applies while composing a pass ----------------------------

  /**
   * Admits the head of `waiting` (its KV blocks already taken from the store): it joins
   * `running`, with `cachedTokens` of its sequence served by the prefix cache.
   */
  admitHead(nowMs: number, cachedTokens: number): number {
    const t = this.table;
    const r = this.waiting.popFront();
    this.running[this.runningCount++] = r;
    t.status[r] = Status.Running;
    t.computed[r] = cachedTokens;
    // KV moved in from a prefill worker (`kvReady`, kept until a preemption here loses it) is not
    // a prefix-cache lookup.
    if (t.kvReady[r] === 0) {
      this.queriedTokens += t.prompt[r] + t.generated[r];
      this.hitTokens += cachedTokens;
    }
    if (t.firstScheduledMs[r] !== t.firstScheduledMs[r]) {
      t.firstScheduledMs[r] = nowMs;
      t.cachedTokens[r] = cachedTokens;
    }
    return r;
  }

  /**
   * Preempts the newest running request (vLLM's recompute mode): its blocks go back to the
   * store, its computed tokens reset to 0 (the generated count is kept) and it returns to the
   * front of `waiting`. Returns its id.
   */
  preemptNewest(): number {
    const id = this.running[--this.runningCount];
    this.store.release(id);
    this.table.computed[id] = 0;
    this.table.kvReady[id] = 0;
    this.table.status[id] = Status.Waiting;
    this.waiting.pushFront(id);
    this.preemptionCount++;
    return id;
  }

  /**
   * Removes running request `running[index]` (not yet given tokens in the pass being composed,
   * or refunded by the policy): its blocks go back to the store, its computed tokens reset to 0
   * (the generated count is kept), and it returns to `waiting`, at the front (`toFront`: vLLM's
   * preemption, TensorRT-LLM's pause) or at the back (SGLang's retraction). Later running
   * requests keep their order. Returns its id.
   */
  evictAt(index: number, toFront: boolean): number {
    const running = this.running;
    const id = running[index];
    const last = --this.runningCount;
    for (let i = index; i < last; i++) running[i] = running[i + 1];
    this.store.release(id);
    this.table.computed[id] = 0;
    this.table.kvReady[id] = 0;
    this.table.status[id] = Status.Waiting;
    if (toFront) this.waiting.pushFront(id);
    else this.waiting.pushBack(id);
    this.preemptionCount++;
    return id;
  }

  /** Rejects the head of `waiting`; it reaches the client at the end of the pass being composed. */
  rejectHead(): void {
    const id = this.waiting.popFront();
    if (this.rejectedCount === this.rejected.length) this.rejected = grow(this.rejected);
    this.rejected[this.rejectedCount++] = id;
    this.table.status[id] = Status.Rejected;
    if (this.lifecycle.listens) this.lifecycle.finished(this.index, id);
  }

  /**
   * Removes waiting request `id` (its client went away: vLLM aborts a waiting request at once;
   * `Simulation.abortRequest`). A waiting request holds no blocks. False when it is not waiting here.
   */
  abortWaiting(id: number): boolean {
    const waiting = this.waiting;
    for (let i = 0; i < waiting.size; i++) {
      if (waiting.at(i) !== id) continue;
      waiting.removeAt(i);
      if (this.lifecycle.listens) this.lifecycle.finished(this.index, id);
      return true;
    }
    return false;
  }

  // ---- Disaggregation: a prefill rank's requests in transfer ------------------------------

  private hold(id: number): void {
    if (this.sendingCount === this.sending.length) this.sending = grow(this.sending);
    this.sending[this.sendingCount++] = id;
    this.table.status[id] = Status.Transferring;
  }

  /** Request `id`'s KV has moved to its decode worker: its blocks here go back to the store. */
  releaseSent(id: number): void {
    // Transfers mostly end in the order they started: look from the front.
    const sending = this.sending;
    const count = this.sendingCount;
    let i = 0;
    while (i < count && sending[i] !== id) i++;
    if (i === count) throw new Error(`request ${id} is not in transfer from rank ${this.index}`);
    for (; i < count - 1; i++) sending[i] = sending[i + 1];
    this.sendingCount = count - 1;
    this.store.release(id);
  }

  // ---- The pass end ----------------------------------------------------------------------

  /**
   * Applies the pass at its end (docs/replay-model.md, "Engine", step 6): computed tokens advance; every request whose
   * known sequence is now computed emits one token; finished requests free their blocks and
   * their running slot. Emissions and ends go to `out`; `recordEmit` stamps emit times.
   */
  finishPass(nowMs: number, out: PassOutputs, recordEmit: ((id: number, nowMs: number) => void) | null): void {
    const t = this.table;
    const prompt = t.prompt;
    const generated = t.generated;
    const computed = t.computed;
    const scheduled = t.scheduled;
    const outputLen = t.outputLen;
    const firstEmittedMs = t.firstEmittedMs;
    const lengthLimit = this.limits.lengthLimit;
    const store = this.store;
    const caches = store.cachesComputed;
    const lifecycle = this.lifecycle;
    const listens = lifecycle.listens;
    const beforeToken = this.handsOffBeforeToken;
    const running = this.running;
    const count = this.scheduledCount;
    // Outputs in emission order and, with several detokenization servers, each one's server. At
    // most one output per running request per pass, and the buffers hold `capacity` >= the
    // running requests of every rank of the worker: no bounds to check.
    const servers = out.servers;
    const detokServer = t.detokServer;
    const emittedServer = out.emittedServer;
    const serverCount = out.serverCount;
    const emitted = out.emitted;
    let emittedCount = out.emittedCount;
    let write = 0;
    for (let i = 0; i < count; i++) {
      const r = running[i];
      const before = computed[r];
      const done = before + scheduled[r];
      computed[r] = done;
      if (caches) store.computed(r, before, done);
      let finished = false;
      if (done === prompt[r] + generated[r]) {
        if (beforeToken && generated[r] < outputLen[r]) {
          // The prefill is done and the token it samples is the decode worker's to send: the
          // request leaves without output, its blocks held here until its KV has moved.
          this.hold(r);
          out.pushHandoff(r);
          if (listens) lifecycle.finished(this.index, r);
          continue;
        }
        if (generated[r] < outputLen[r]) {
          const g = ++generated[r];
          if (firstEmittedMs[r] !== firstEmittedMs[r]) firstEmittedMs[r] = nowMs;
          if (servers > 0) {
            const server = detokServer[r];
            emittedServer[emittedCount] = server;
            serverCount[server]++;
          }
          emitted[emittedCount++] = r;
          if (recordEmit !== null) recordEmit(r, nowMs);
          finished = g >= outputLen[r] || prompt[r] + g >= lengthLimit;
          if (g === 1 && !finished) {
            if (this.handsOff) {
              // The prefill is done: the request leaves for a decode worker, its blocks held
              // here until its KV has moved (docs/replay-model.md, "Disaggregated prefill and decode").
              this.hold(r);
              out.pushHandoff(r);
              if (listens) lifecycle.finished(this.index, r);
              continue;
            }
            if (listens) lifecycle.prefillDone(this.index, r);
          }
        } else {
          // A zero-length output: the prefill ran, nothing is emitted.
          finished = true;
          out.pushEnded(r);
        }
      }
      if (finished) {
        store.release(r);
        t.status[r] = Status.EngineDone;
        if (listens) lifecycle.finished(this.index, r);
      } else {
        running[write++] = r;
      }
    }
    out.emittedCount = emittedCount;
    // Requests after the scheduled prefix keep their order.
    for (let i = count; i < this.runningCount; i++) running[write++] = running[i];
    this.runningCount = write;
    this.scheduledCount = 0;
    for (let i = 0; i < this.rejectedCount; i++) out.pushEnded(this.rejected[i]);
    this.rejectedCount = 0;
  }
}

function grow(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
