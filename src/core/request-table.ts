/**
 * Request state as columns keyed by dense request id (no per-request objects). Times are ms
 * of virtual time, NaN until the stage is reached. Columns grow by doubling when the run's
 * request count is not known up front (a time cap); the hot loop re-reads them per call.
 */

export const Status = {
  /** Reserved id (a trace row not yet sent). */
  Created: 0,
  Tokenizing: 1,
  Waiting: 2,
  Running: 3,
  /** Finished in the engine; some outputs may still be on their way to the client. */
  EngineDone: 4,
  Completed: 5,
  Rejected: 6,
  /** Prefilled on a prefill worker, its KV on its way to a decode worker. */
  Transferring: 7,
} as const;

export class RequestTable {
  capacity: number;

  // Stamps (ms).
  sentMs: Float64Array;
  /** When the request reached the server (past the frontend); equals sentMs without a frontend delay. */
  serverMs: Float64Array;
  tokenizedMs: Float64Array;
  firstScheduledMs: Float64Array;
  firstEmittedMs: Float64Array;
  firstReceivedMs: Float64Array;
  secondReceivedMs: Float64Array;
  lastReceivedMs: Float64Array;
  responseReceivedMs: Float64Array;
  actedMs: Float64Array;
  /**
   * Disaggregated runs: when the request's prefill ended on its prefill worker, and its KV
   * transfer started and ended (NaN without one).
   */
  handedOffMs: Float64Array;
  transferStartMs: Float64Array;
  transferEndMs: Float64Array;

  // Lengths and progress (tokens).
  prompt: Int32Array;
  outputLen: Int32Array;
  generated: Int32Array;
  computed: Int32Array;
  scheduled: Int32Array;
  received: Int32Array;
  /** Prompt tokens the prefix cache served when the request was first admitted. */
  cachedTokens: Int32Array;
  /**
   * Tokens of the request's sequence whose KV it brings to its admission on a decode worker
   * (moved in from a prefill worker); 0 otherwise. The admission takes them as computed; a
   * preemption there, which loses the KV, clears it. While it is set, a pass that computes one
   * token of the request is a decode, whether or not the request has emitted a token yet.
   */
  kvReady: Int32Array;

  // Placement and identity.
  rank: Int32Array;
  /** Disaggregated runs: the decode rank while the request's KV is in transfer, the prefill rank it left once the KV has arrived. */
  otherRank: Int32Array;
  detokServer: Int32Array;
  sessionId: Int32Array;
  turnIndex: Int32Array;
  slot: Int32Array;
  status: Uint8Array;
  isWarmup: Uint8Array;

  constructor(capacity: number) {
    this.capacity = Math.max(16, capacity);
    const n = this.capacity;
    this.sentMs = nanArray(n);
    this.serverMs = nanArray(n);
    this.tokenizedMs = nanArray(n);
    this.firstScheduledMs = nanArray(n);
    this.firstEmittedMs = nanArray(n);
    this.firstReceivedMs = nanArray(n);
    this.secondReceivedMs = nanArray(n);
    this.lastReceivedMs = nanArray(n);
    this.responseReceivedMs = nanArray(n);
    this.actedMs = nanArray(n);
    this.handedOffMs = nanArray(n);
    this.transferStartMs = nanArray(n);
    this.transferEndMs = nanArray(n);
    this.prompt = new Int32Array(n);
    this.outputLen = new Int32Array(n);
    this.generated = new Int32Array(n);
    this.computed = new Int32Array(n);
    this.scheduled = new Int32Array(n);
    this.received = new Int32Array(n);
    this.cachedTokens = new Int32Array(n);
    this.kvReady = new Int32Array(n);
    this.rank = new Int32Array(n);
    this.otherRank = new Int32Array(n);
    this.detokServer = new Int32Array(n);
    this.sessionId = new Int32Array(n);
    this.turnIndex = new Int32Array(n);
    this.slot = new Int32Array(n);
    this.status = new Uint8Array(n);
    this.isWarmup = new Uint8Array(n);
  }

  /** Makes room for ids below `size`. */
  ensure(size: number): void {
    if (size <= this.capacity) return;
    let n = this.capacity;
    while (n < size) n *= 2;
    this.sentMs = growNan(this.sentMs, n);
    this.serverMs = growNan(this.serverMs, n);
    this.tokenizedMs = growNan(this.tokenizedMs, n);
    this.firstScheduledMs = growNan(this.firstScheduledMs, n);
    this.firstEmittedMs = growNan(this.firstEmittedMs, n);
    this.firstReceivedMs = growNan(this.firstReceivedMs, n);
    this.secondReceivedMs = growNan(this.secondReceivedMs, n);
    this.lastReceivedMs = growNan(this.lastReceivedMs, n);
    this.responseReceivedMs = growNan(this.responseReceivedMs, n);
    this.actedMs = growNan(this.actedMs, n);
    this.handedOffMs = growNan(this.handedOffMs, n);
    this.transferStartMs = growNan(this.transferStartMs, n);
    this.transferEndMs = growNan(this.transferEndMs, n);
    this.prompt = growInt(this.prompt, n);
    this.outputLen = growInt(this.outputLen, n);
    this.generated = growInt(this.generated, n);
    this.computed = growInt(this.computed, n);
    this.scheduled = growInt(this.scheduled, n);
    this.received = growInt(this.received, n);
    this.cachedTokens = growInt(this.cachedTokens, n);
    this.kvReady = growInt(this.kvReady, n);
    this.rank = growInt(this.rank, n);
    this.otherRank = growInt(this.otherRank, n);
    this.detokServer = growInt(this.detokServer, n);
    this.sessionId = growInt(this.sessionId, n);
    this.turnIndex = growInt(this.turnIndex, n);
    this.slot = growInt(this.slot, n);
    const status = new Uint8Array(n);
    status.set(this.status);
    this.status = status;
    const warmup = new Uint8Array(n);
    warmup.set(this.isWarmup);
    this.isWarmup = warmup;
    this.capacity = n;
  }
}

function nanArray(n: number): Float64Array {
  return new Float64Array(n).fill(NaN);
}

function growNan(a: Float64Array, n: number): Float64Array {
  const b = nanArray(n);
  b.set(a);
  return b;
}

function growInt(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}
