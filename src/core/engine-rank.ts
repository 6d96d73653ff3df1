/**
 * One attention-DP rank of an engine worker (docs/replay-model.md, "Engine"): its `waiting` and `running`
 * queues, token budget and KV pool, and the pass composition of vLLM v1's scheduler.
 *
 * composePass decides and allocates; finishPass applies the pass's compute at its end and
 * writes what happened into the worker's output buffers. Neither schedules events or records
 * metrics: the simulation does.
 */
import { IntDeque } from './int-deque.js';
import { type RequestTable, Status } from './request-table.js';
import type { PassView } from './timing.js';

export interface RankLimits {
  maxBatchedTokens: number;
  maxSequences: number;
  chunkedPrefill: boolean;
  blockSize: number;
  /** 0 = unlimited. */
  kvBlocks: number;
  lengthLimit: number;
}

/**
 * Where a rank writes the results of a pass end; shared by the ranks of one worker. With
 * several detokenization servers, emitted outputs are routed by server as they are written
 * (`routed`, one segment of `capacity` ids per server), so the detokenization stage takes each
 * server's outputs in bulk; otherwise they go to `emitted`.
 */
export class PassOutputs {
  /** Requests that emitted a token, in rank then running order (when not routed). */
  emitted: Int32Array;
  emittedCount = 0;
  /** Requests that ended without a token to deliver: rejections and zero-length outputs. */
  ended: Int32Array;
  endedCount = 0;
  /** Detokenization servers to route to; 0 or 1 = no routing. */
  readonly servers: number;
  /** Server s's outputs of the pass are routed[s * capacity .. s * capacity + routedCount[s]). */
  readonly routed: Int32Array;
  readonly routedCount: Int32Array;
  readonly capacity: number;

  constructor(capacity: number, servers = 0) {
    this.capacity = Math.max(16, capacity);
    this.emitted = new Int32Array(this.capacity);
    this.ended = new Int32Array(16);
    this.servers = servers > 1 ? servers : 0;
    this.routed = new Int32Array(this.servers * this.capacity);
    this.routedCount = new Int32Array(this.servers);
  }

  pushEmitted(id: number): void {
    if (this.emittedCount === this.emitted.length) this.emitted = grow(this.emitted);
    this.emitted[this.emittedCount++] = id;
  }

  pushEnded(id: number): void {
    if (this.endedCount === this.ended.length) this.ended = grow(this.ended);
    this.ended[this.endedCount++] = id;
  }

  clear(): void {
    this.emittedCount = 0;
    this.endedCount = 0;
    if (this.servers > 0) this.routedCount.fill(0);
  }
}

export class EngineRank {
  readonly waiting = new IntDeque(256);
  running: Int32Array;
  runningCount = 0;
  /** running[0 .. scheduledCount) run in the current pass. */
  scheduledCount = 0;
  freeBlocks: number;
  /** Rejected at the head of `waiting` during this pass's composition; reach the client at its end. */
  rejected: Int32Array = new Int32Array(16);
  rejectedCount = 0;
  preemptionCount = 0;
  readonly view: PassView = {
    prefillTokens: 0,
    prefillPairs: 0,
    decodeRequests: 0,
    decodeKvTokens: 0,
    emittedTokens: 0,
    kvBlocksUsed: 0,
    kvBlocksTotal: 0,
  };

  constructor(
    private readonly limits: RankLimits,
    private readonly table: RequestTable,
  ) {
    this.running = new Int32Array(limits.maxSequences);
    this.freeBlocks = limits.kvBlocks;
    this.view.kvBlocksTotal = limits.kvBlocks;
  }

  get hasWork(): boolean {
    return this.runningCount > 0 || this.waiting.size > 0;
  }

  get usedBlocks(): number {
    return this.limits.kvBlocks - this.freeBlocks;
  }

  /**
   * Composes this rank's batch for a pass starting at nowMs (docs/replay-model.md, "Engine", steps 1-4). Returns true
   * when the pass has anything to do for this rank (compute or rejections).
   */
  composePass(nowMs: number): boolean {
    const t = this.table;
    const prompt = t.prompt;
    const generated = t.generated;
    const computed = t.computed;
    const scheduled = t.scheduled;
    const blocksHeld = t.blocksHeld;
    const outputLen = t.outputLen;
    const { maxBatchedTokens, maxSequences, chunkedPrefill, blockSize, kvBlocks, lengthLimit } = this.limits;
    const view = this.view;
    const running = this.running;
    let budget = maxBatchedTokens;
    let prefillTokens = 0;
    let prefillPairs = 0;
    let decodeRequests = 0;
    let decodeKvTokens = 0;
    let emitted = 0;
    let preempted = false;
    this.rejectedCount = 0;

    // 1. Running requests first, in admission order, while budget remains.
    let i = 0;
    while (i < this.runningCount && budget > 0) {
      const r = running[i];
      const known = prompt[r] + generated[r];
      const done = computed[r];
      const needed = known - done;
      const tokens = needed < budget ? needed : budget;
      if (kvBlocks > 0) {
        const need = (((done + tokens + blockSize - 1) / blockSize) | 0) - blocksHeld[r];
        if (need > this.freeBlocks) {
          // 3. Preempt the newest running request until the blocks can be had (vLLM v1,
          // recompute). The newest is always at or after the cursor, so it has not been given
          // budget in this pass and nothing needs refunding; when it is this request itself,
          // this request is not scheduled.
          let selfPreempted = false;
          while (need > this.freeBlocks) {
            const victim = running[--this.runningCount];
            this.preempt(victim);
            preempted = true;
            if (victim === r) {
              selfPreempted = true;
              break;
            }
          }
          if (selfPreempted) break;
        }
        if (need > 0) {
          this.freeBlocks -= need;
          blocksHeld[r] += need;
        }
      }
      scheduled[r] = tokens;
      budget -= tokens;
      if (generated[r] > 0 && needed === 1) {
        decodeRequests++;
        decodeKvTokens += known;
      } else {
        prefillTokens += tokens;
        prefillPairs += tokens * (done + tokens / 2);
      }
      if (tokens === needed && generated[r] < outputLen[r]) emitted++;
      i++;
    }
    let count = i;

    // 2. Admissions from the head of `waiting`, strictly FCFS with head-of-line blocking;
    // none in a pass that preempted. 4. Rejections are decided at the head.
    if (!preempted) {
      const waiting = this.waiting;
      while (waiting.size > 0) {
        const r = waiting.peekFront();
        if (prompt[r] >= lengthLimit) {
          waiting.popFront();
          this.pushRejected(r);
          continue;
        }
        if (this.runningCount >= maxSequences || budget === 0) break;
        const needed = prompt[r] + generated[r];
        if (!chunkedPrefill && needed > budget && needed <= maxBatchedTokens) break;
        const tokens = needed < budget ? needed : budget;
        if (kvBlocks > 0) {
          const need = ((tokens + blockSize - 1) / blockSize) | 0;
          if (need > this.freeBlocks) break;
          this.freeBlocks -= need;
          blocksHeld[r] = need;
        }
        waiting.popFront();
        running[this.runningCount++] = r;
        t.status[r] = Status.Running;
        if (t.firstScheduledMs[r] !== t.firstScheduledMs[r]) t.firstScheduledMs[r] = nowMs;
        scheduled[r] = tokens;
        budget -= tokens;
        prefillTokens += tokens;
        prefillPairs += tokens * (tokens / 2);
        if (tokens === needed && generated[r] < outputLen[r]) emitted++;
        count++;
      }
    }
    this.scheduledCount = count;
    view.prefillTokens = prefillTokens;
    view.prefillPairs = prefillPairs;
    view.decodeRequests = decodeRequests;
    view.decodeKvTokens = decodeKvTokens;
    view.emittedTokens = emitted;
    view.kvBlocksUsed = kvBlocks - this.freeBlocks;
    return count > 0 || this.rejectedCount > 0;
  }

  /**
   * Applies the pass at its end (docs/replay-model.md, "Engine", step 6): computed tokens advance; every request whose
   * known sequence is now computed emits one token; finished requests free their blocks and
   * their running slot. Emissions and ends go to `out`; `onEmit` stamps emit times.
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
    const running = this.running;
    const count = this.scheduledCount;
    // Routing by detokenization server (at most one output per running request per pass, so a
    // server's segment of `capacity` ids never overflows).
    const servers = out.servers;
    const detokServer = t.detokServer;
    const routed = out.routed;
    const routedCount = out.routedCount;
    const segment = out.capacity;
    let write = 0;
    for (let i = 0; i < count; i++) {
      const r = running[i];
      const done = computed[r] + scheduled[r];
      computed[r] = done;
      let finished = false;
      if (done === prompt[r] + generated[r]) {
        if (generated[r] < outputLen[r]) {
          const g = ++generated[r];
          if (firstEmittedMs[r] !== firstEmittedMs[r]) firstEmittedMs[r] = nowMs;
          if (servers > 0) {
            const server = detokServer[r];
            routed[server * segment + routedCount[server]++] = r;
          } else {
            out.pushEmitted(r);
          }
          if (recordEmit !== null) recordEmit(r, nowMs);
          finished = g >= outputLen[r] || prompt[r] + g >= lengthLimit;
        } else {
          // A zero-length output: the prefill ran, nothing is emitted.
          finished = true;
          out.pushEnded(r);
        }
      }
      if (finished) {
        this.releaseBlocks(r);
        t.status[r] = Status.EngineDone;
      } else {
        running[write++] = r;
      }
    }
    // Requests after the scheduled prefix keep their order.
    for (let i = count; i < this.runningCount; i++) running[write++] = running[i];
    this.runningCount = write;
    this.scheduledCount = 0;
    for (let i = 0; i < this.rejectedCount; i++) out.pushEnded(this.rejected[i]);
    this.rejectedCount = 0;
  }

  enqueue(id: number): void {
    this.waiting.pushBack(id);
    this.table.status[id] = Status.Waiting;
  }

  private preempt(id: number): void {
    this.releaseBlocks(id);
    this.table.computed[id] = 0;
    this.table.status[id] = Status.Waiting;
    this.waiting.pushFront(id);
    this.preemptionCount++;
  }

  private releaseBlocks(id: number): void {
    if (this.limits.kvBlocks > 0) {
      this.freeBlocks += this.table.blocksHeld[id];
      this.table.blocksHeld[id] = 0;
    }
  }

  private pushRejected(id: number): void {
    if (this.rejectedCount === this.rejected.length) this.rejected = grow(this.rejected);
    this.rejected[this.rejectedCount++] = id;
    this.table.status[id] = Status.Rejected;
  }
}

function grow(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
