/**
 * Binary min-heap of events over parallel typed arrays (no event objects).
 * Order key: (timeMs, phase, seq). `seq` is the insertion count, so events at one instant and
 * phase pop in the order they were pushed. Phases encode the tie order of spec replay.md §3:
 * pass ends, then deliveries to the client, then arrivals. (Pass starts are not events: the
 * loop starts passes once no event is left at the current instant.)
 */

export const Phase = {
  PassEnd: 0,
  Delivery: 1,
  Arrival: 2,
} as const;

/** Event kinds: the phase of each is fixed (see `KIND_PHASE`). */
export const EventKind = {
  /** target = engine worker index */
  PassEnd: 0,
  /** target = detokenization server index (global) */
  DetokJobEnd: 1,
  /** target = request id: tokenization finished, the request enters the scheduler */
  Tokenized: 2,
  /** target = request id: the client acts on a finished response */
  ClientAct: 3,
  /**
   * A send: target -1 is the next open-loop arrival; otherwise a trace row (trace sources) or
   * the previous turn of a synthetic session whose next turn is due.
   */
  Send: 4,
  /** target = closed-loop slot: its first request, under a ramp-up */
  SlotStart: 5,
} as const;

const KIND_PHASE = [Phase.PassEnd, Phase.Delivery, Phase.Arrival, Phase.Arrival, Phase.Arrival, Phase.Arrival];

/** 2^40 sequence numbers per phase: far more events than any run makes. */
const PHASE_STRIDE = 2 ** 40;

export class EventQueue {
  private timeMs: Float64Array;
  private order: Float64Array;
  private kind: Uint8Array;
  private target: Int32Array;
  private count = 0;
  private seq = 0;

  constructor(initialCapacity = 1024) {
    this.timeMs = new Float64Array(initialCapacity);
    this.order = new Float64Array(initialCapacity);
    this.kind = new Uint8Array(initialCapacity);
    this.target = new Int32Array(initialCapacity);
  }

  get size(): number {
    return this.count;
  }

  /** Time of the earliest event; only valid when size > 0. */
  peekTimeMs(): number {
    return this.timeMs[0];
  }

  peekKind(): number {
    return this.kind[0];
  }

  peekTarget(): number {
    return this.target[0];
  }

  push(timeMs: number, kind: number, target: number): void {
    if (this.count === this.timeMs.length) this.grow();
    const order = KIND_PHASE[kind] * PHASE_STRIDE + this.seq++;
    // Sift up.
    let i = this.count++;
    const times = this.timeMs;
    const orders = this.order;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = times[parent];
      if (pt < timeMs || (pt === timeMs && orders[parent] < order)) break;
      times[i] = pt;
      orders[i] = orders[parent];
      this.kind[i] = this.kind[parent];
      this.target[i] = this.target[parent];
      i = parent;
    }
    times[i] = timeMs;
    orders[i] = order;
    this.kind[i] = kind;
    this.target[i] = target;
  }

  /** Removes the earliest event (read it first with peek*). */
  pop(): void {
    const last = --this.count;
    if (last === 0) return;
    const times = this.timeMs;
    const orders = this.order;
    const kinds = this.kind;
    const targets = this.target;
    const t = times[last];
    const o = orders[last];
    const k = kinds[last];
    const g = targets[last];
    let i = 0;
    const half = last >> 1;
    while (i < half) {
      let child = 2 * i + 1;
      const right = child + 1;
      if (right < last && (times[right] < times[child] || (times[right] === times[child] && orders[right] < orders[child]))) {
        child = right;
      }
      const ct = times[child];
      if (t < ct || (t === ct && o < orders[child])) break;
      times[i] = ct;
      orders[i] = orders[child];
      kinds[i] = kinds[child];
      targets[i] = targets[child];
      i = child;
    }
    times[i] = t;
    orders[i] = o;
    kinds[i] = k;
    targets[i] = g;
  }

  private grow(): void {
    const n = this.timeMs.length * 2;
    const timeMs = new Float64Array(n);
    timeMs.set(this.timeMs);
    this.timeMs = timeMs;
    const order = new Float64Array(n);
    order.set(this.order);
    this.order = order;
    const kind = new Uint8Array(n);
    kind.set(this.kind);
    this.kind = kind;
    const target = new Int32Array(n);
    target.set(this.target);
    this.target = target;
  }
}
