/**
 * A pool of engine workers (docs/replay-model.md, "Engine"): identical workers of one role, each
 * with its attention-DP ranks running in lockstep. The pool owns its ranks and the seams they
 * are built from (router, batch policy, timing, KV stores: one of each per pool, so every call
 * site in the loop sees one class), places the requests it is given, and starts and ends its
 * workers' passes. The simulation keeps the time and the events: a pool posts the end of each
 * pass it starts to the simulation's queue and hands the pass's outputs back when it ends.
 *
 * Workers are numbered across the run's pools (a pass end's event target): this pool's are
 * `firstWorker` .. `firstWorker + workers - 1`; its ranks are numbered within the pool.
 */
import { EngineRank, PassOutputs } from './engine-rank.js';
import { EventKind, type EventQueue } from './event-queue.js';
import { createKvStore } from './create-kv-store.js';
import { KvRequestBooks } from './kv-store.js';
import type { BatchPolicy } from './policies/batch-policy.js';
import { createBatchPolicy } from './policies/create-batch-policy.js';
import { createBlockKeys } from './prefix-cache.js';
import { Status, type RequestTable } from './request-table.js';
import { createRouter, type Router } from './router.js';
import type { PoolRole, ResolvedPool } from './run.js';
import { createPassTime } from './timing/create-pass-time.js';
import { TimingError, type PassTimeFn, type PassView } from './timing/timing-model.js';

/** Called at the start of every pass: the worker (numbered across pools), the pass's start and end, and the view of its slowest rank. */
export type PassListener = (worker: number, startMs: number, endMs: number, view: PassView) => void;

export interface PoolOptions {
  /** Detokenization servers per worker: the outputs of a pass are routed to them when > 1. */
  detokServersPerWorker: number;
  /** Check INV-kv and INV-budget at every pass start and end (tests). */
  checkInvariants: boolean;
  onPass: PassListener | null;
  /** A prefill pool's requests leave at the end of their prefill without a token (`KvTransfer.firstTokenOnDecode`). */
  firstTokenOnDecode: boolean;
}

export class Pool {
  readonly role: PoolRole;
  readonly workers: number;
  readonly ranksPerWorker: number;
  /** The pool's ranks, worker x ranks per worker + rank in worker. */
  readonly ranks: EngineRank[] = [];
  readonly router: Router;
  /** Whether the pool's KV stores cache prefixes. */
  readonly hasPrefixCache: boolean;
  /** Passes started, and their durations summed over the workers (ms). */
  passCount = 0;
  busyMs = 0;
  /** Workers flagged to start a pass at the end of this instant (`startPasses`). */
  flaggedCount = 0;

  private readonly outputs: PassOutputs[] = [];
  private readonly busy: Uint8Array;
  private readonly flagged: Uint8Array;
  private readonly toStart: Int32Array;
  /** The ranks of the worker whose pass is being started that run a plan (scratch). */
  private readonly composed: EngineRank[] = [];
  private readonly passTime: PassTimeFn;
  private readonly policy: BatchPolicy;
  private readonly timingType: string;
  private readonly checkInvariants: boolean;
  private readonly onPass: PassListener | null;

  constructor(
    spec: ResolvedPool,
    /** The number of this pool's first worker among the run's workers. */
    readonly firstWorker: number,
    private readonly table: RequestTable,
    private readonly events: EventQueue,
    options: PoolOptions,
  ) {
    this.role = spec.role;
    this.workers = spec.replicas;
    this.ranksPerWorker = spec.ranksPerWorker;
    const { limits, kv } = spec;
    this.hasPrefixCache = kv.prefixCache !== null;
    const rankLimits = {
      maxBatchedTokens: limits.maxBatchedTokens,
      maxSequences: limits.maxSequences,
      chunkedPrefill: limits.chunkedPrefill,
      blockSize: kv.blockSize,
      lengthLimit: limits.lengthLimit,
    };
    this.passTime = createPassTime(spec.timing);
    this.timingType = spec.timing.type;
    this.policy = createBatchPolicy(spec.policy, spec.replicas * spec.ranksPerWorker);
    this.router = createRouter(spec, this.ranks, table);
    const keys = kv.prefixCache === null ? null : createBlockKeys(kv.prefixCache, kv.blockSize, table);
    const groups = kv.prefixCache !== null && kv.prefixCache.kind === 'trace' ? kv.prefixCache.groupCount : 0;
    // One set of per-request books for every rank's store: a request is on one rank of a pool.
    const books = new KvRequestBooks(table.prompt.length);
    for (let w = 0; w < spec.replicas; w++) {
      for (let k = 0; k < spec.ranksPerWorker; k++) {
        const index = w * spec.ranksPerWorker + k;
        const store = createKvStore(kv, keys, groups, books);
        const prefill = spec.role === 'prefill';
        this.ranks.push(new EngineRank(index, rankLimits, table, store, this.router, prefill, prefill && options.firstTokenOnDecode));
      }
      this.outputs.push(new PassOutputs(limits.maxSequences * spec.ranksPerWorker, options.detokServersPerWorker));
    }
    this.busy = new Uint8Array(spec.replicas);
    this.flagged = new Uint8Array(spec.replicas);
    this.toStart = new Int32Array(spec.replicas);
    this.checkInvariants = options.checkInvariants;
    this.onPass = options.onPass;
  }

  /** Places request `id` on the rank its router picks, in that rank's `waiting` queue; returns the rank. */
  enqueue(id: number): number {
    const rank = this.router.route(id);
    this.ranks[rank].enqueue(id);
    this.flag((rank / this.ranksPerWorker) | 0);
    return rank;
  }

  /**
   * A decode pool: picks the rank request `id` (its KV about to move here) will join, and counts
   * it there as incoming until `enqueueIncoming`.
   */
  routeIncoming(id: number): number {
    const rank = this.router.route(id);
    this.ranks[rank].incoming++;
    return rank;
  }

  /** A decode pool: request `id`'s KV has arrived on `rank`: it joins that rank's `waiting` queue. */
  enqueueIncoming(rank: number, id: number): void {
    this.ranks[rank].incoming--;
    this.ranks[rank].enqueue(id);
    this.flag((rank / this.ranksPerWorker) | 0);
  }

  /** A prefill pool: request `id`'s KV has left `rank`: its blocks there are free again. */
  releaseSent(rank: number, id: number): void {
    this.ranks[rank].releaseSent(id);
    this.flag((rank / this.ranksPerWorker) | 0);
  }

  /** Marks `worker` (of this pool) to be looked at when passes start, unless it is busy or marked already. */
  private flag(worker: number): void {
    if (this.busy[worker] === 0 && this.flagged[worker] === 0) {
      this.flagged[worker] = 1;
      this.toStart[this.flaggedCount++] = worker;
    }
  }

  /**
   * Starts a pass on every flagged idle worker that has work (the last phase of an instant, in
   * the order the workers were flagged) and posts its end to the event queue.
   */
  startPasses(nowMs: number): void {
    const count = this.flaggedCount;
    this.flaggedCount = 0;
    const ranksPerWorker = this.ranksPerWorker;
    const passTime = this.passTime;
    const policy = this.policy;
    for (let i = 0; i < count; i++) {
      const worker = this.toStart[i];
      this.flagged[worker] = 0;
      let any = false;
      let durationMs = 0;
      let slowest: EngineRank | null = null;
      // Attention-DP ranks run in lockstep: every rank's plan first, then their mixture-of-experts
      // layers take the worker's tokens together, and the pass ends when the slowest rank ends.
      const composed = this.composed;
      let n = 0;
      let workerTokens = 0;
      for (let k = 0; k < ranksPerWorker; k++) {
        const rank = this.ranks[worker * ranksPerWorker + k];
        if (!rank.hasWork) continue;
        if (!policy.compose(rank, nowMs)) continue;
        any = true;
        if (rank.scheduledCount > 0) {
          composed[n++] = rank;
          workerTokens += rank.view.workerTokens;
        }
      }
      for (let j = 0; j < n; j++) {
        const rank = composed[j];
        rank.view.workerTokens = workerTokens;
        const ms = passTime(rank.view);
        if (!(ms >= 0 && ms < Infinity)) throw new TimingError(this.timingType, ms);
        if (ms > durationMs || slowest === null) {
          durationMs = ms;
          slowest = rank;
        }
      }
      if (!any) continue;
      this.busy[worker] = 1;
      this.passCount++;
      this.busyMs += durationMs;
      if (this.checkInvariants) this.verify(worker, nowMs);
      if (this.onPass !== null && slowest !== null) this.onPass(this.firstWorker + worker, nowMs, nowMs + durationMs, slowest.view);
      this.events.push(nowMs + durationMs, EventKind.PassEnd, this.firstWorker + worker);
    }
  }

  /**
   * Ends the pass of `worker` (of this pool) at `nowMs`: each rank applies it, and the worker is
   * flagged for its next pass. Returns the pass's outputs (valid until the worker's next pass end).
   */
  endPass(worker: number, nowMs: number, recordEmit: ((id: number, nowMs: number) => void) | null): PassOutputs {
    const out = this.outputs[worker];
    out.clear();
    const ranksPerWorker = this.ranksPerWorker;
    for (let k = 0; k < ranksPerWorker; k++) this.ranks[worker * ranksPerWorker + k].finishPass(nowMs, out, recordEmit);
    this.busy[worker] = 0;
    this.flag(worker);
    if (this.checkInvariants) this.verify(worker, nowMs);
    return out;
  }

  /** INV-kv and INV-budget for every rank of a worker: the store's books balance against its running requests, the plan keeps the limits. */
  private verify(worker: number, nowMs: number): void {
    const ranksPerWorker = this.ranksPerWorker;
    for (let k = 0; k < ranksPerWorker; k++) {
      const rank = this.ranks[worker * ranksPerWorker + k];
      // Requests in transfer from a prefill rank hold their blocks as running ones do.
      const holders = rank.sendingCount === 0 ? rank.running : concat(rank.running, rank.runningCount, rank.sending, rank.sendingCount);
      const problem = rank.store.check(holders, rank.runningCount + rank.sendingCount);
      if (problem !== null) throw new Error(`INV-kv: rank ${rank.index} ${problem} at ${nowMs} ms`);
      // INV-budget: the plan is running requests, within the token budget and max_sequences,
      // each given tokens it still needs.
      const { maxBatchedTokens, maxSequences } = rank.limits;
      const t = this.table;
      let tokens = 0;
      for (let i = 0; i < rank.scheduledCount; i++) {
        const r = rank.running[i];
        const left = t.prompt[r] + t.generated[r] - t.computed[r];
        if (t.status[r] !== Status.Running || t.scheduled[r] < 1 || t.scheduled[r] > left) {
          throw new Error(`INV-budget: rank ${rank.index} schedules request ${r} for ${t.scheduled[r]} of ${left} tokens at ${nowMs} ms`);
        }
        tokens += t.scheduled[r];
      }
      // The pass totals the timing provider read are those of the plan: its tokens (prefill
      // tokens plus one per decoding request; a recompute with one token left may count as
      // either) and the tokens it emits.
      let emits = 0;
      for (let i = 0; i < rank.scheduledCount; i++) {
        const r = rank.running[i];
        if (t.scheduled[r] === t.prompt[r] + t.generated[r] - t.computed[r] && t.generated[r] < t.outputLen[r]) emits++;
      }
      const v = rank.view;
      if (rank.scheduledCount > 0 && (v.prefillTokens + v.decodeRequests !== tokens || v.emittedTokens !== emits)) {
        throw new Error(`INV-budget: rank ${rank.index} pass totals ${JSON.stringify(v)} differ from its plan at ${nowMs} ms`);
      }
      if (tokens > maxBatchedTokens || rank.runningCount > maxSequences) {
        throw new Error(`INV-budget: rank ${rank.index} schedules ${tokens} tokens with ${rank.runningCount} running at ${nowMs} ms`);
      }
    }
  }
}

function concat(a: Int32Array, n: number, b: Int32Array, m: number): Int32Array {
  const out = new Int32Array(n + m);
  out.set(a.subarray(0, n));
  out.set(b.subarray(0, m), n);
  return out;
}
