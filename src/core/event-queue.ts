/**
 * The event queue: events over parallel typed arrays (no event objects), in a binary min-heap
 * plus a FIFO lane for events pushed in key order (see EventQueue).
 * Order key: (timeMs, phase, seq). `seq` is the insertion count, so events at one instant and
 * phase pop in the order they were pushed. Phases encode the tie order of docs/replay-model.md, "Engine":
 * pass ends before arrivals. Deliveries to the client are not events: they are applied inside the
 * pass end (no detokenization) or stamped when a detokenization job is queued, its end being known
 * then (see Simulation.queueDetokJobs). Pass starts are not events either: the loop starts passes
 * once no event is left at the current instant.
 */

export const Phase = {
  PassEnd: 0,
  Arrival: 1,
} as const;

/** Event kinds: the phase of each is fixed (see `KIND_PHASE`). */
export const EventKind = {
  /** target = engine worker index */
  PassEnd: 0,
  /** target = request id: tokenization finished, the request enters the scheduler */
  Tokenized: 1,
  /** target = request id: the client acts on a finished response */
  ClientAct: 2,
  /**
   * A send: target -1 is the next open-loop arrival; otherwise a trace row (trace sources) or
   * the previous turn of a synthetic session whose next turn is due.
   */
  Send: 3,
  /** target = closed-loop slot: its first request, under a ramp-up */
  SlotStart: 4,
  /** target = request id: the request has crossed the frontend (HTTP, API server) and reaches the server */
  FrontendDone: 5,
  /** target = request id: its KV transfer from a prefill worker to a decode worker ends (an engine event, with the pass ends) */
  TransferDone: 6,
} as const;

const KIND_PHASE = [Phase.PassEnd, Phase.Arrival, Phase.Arrival, Phase.Arrival, Phase.Arrival, Phase.Arrival, Phase.PassEnd];

/** 2^40 sequence numbers per phase: far more events than any run makes. */
const PHASE_STRIDE = 2 ** 40;

/** Binary min-heap over parallel typed arrays, keyed (timeMs, order). */
class EventHeap {
  private timeMs: Float64Array;
  private order: Float64Array;
  private kind: Uint8Array;
  private target: Int32Array;
  private count = 0;

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

  peekOrder(): number {
    return this.order[0];
  }

  push(timeMs: number, order: number, kind: number, target: number): void {
    if (this.count === this.timeMs.length) this.grow();
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

/**
 * Events pushed in non-decreasing key order (a closed loop's responses acted on after a fixed
 * overhead, tokenization ends on one server) need no heap: they go to a FIFO lane, and only the
 * others to the heap. Popping takes the smaller of the two heads, so the order is exactly the
 * heap's (timeMs, phase, seq) order, at O(1) for in-order events.
 */
export class EventQueue {
  private readonly heap: EventHeap;
  // The lane: a ring of events in key order.
  private laneTime: Float64Array;
  private laneOrder: Float64Array;
  private laneKind: Uint8Array;
  private laneTarget: Int32Array;
  private laneHead = 0;
  private laneCount = 0;
  private laneMask: number;
  private seq = 0;
  /** Whether the next event to pop is the lane's head (recomputed after every change). */
  private fromLane = false;

  constructor(initialCapacity = 1024) {
    this.heap = new EventHeap(initialCapacity);
    let cap = 16;
    while (cap < initialCapacity) cap *= 2;
    this.laneTime = new Float64Array(cap);
    this.laneOrder = new Float64Array(cap);
    this.laneKind = new Uint8Array(cap);
    this.laneTarget = new Int32Array(cap);
    this.laneMask = cap - 1;
  }

  get size(): number {
    return this.heap.size + this.laneCount;
  }

  /** Time of the earliest event; only valid when size > 0. */
  peekTimeMs(): number {
    return this.fromLane ? this.laneTime[this.laneHead] : this.heap.peekTimeMs();
  }

  peekKind(): number {
    return this.fromLane ? this.laneKind[this.laneHead] : this.heap.peekKind();
  }

  peekTarget(): number {
    return this.fromLane ? this.laneTarget[this.laneHead] : this.heap.peekTarget();
  }

  push(timeMs: number, kind: number, target: number): void {
    const order = KIND_PHASE[kind] * PHASE_STRIDE + this.seq++;
    const n = this.laneCount;
    if (n === 0 || this.isAfterLaneTail(timeMs, order)) {
      if (n === this.laneTime.length) this.growLane();
      const at = (this.laneHead + n) & this.laneMask;
      this.laneTime[at] = timeMs;
      this.laneOrder[at] = order;
      this.laneKind[at] = kind;
      this.laneTarget[at] = target;
      this.laneCount = n + 1;
    } else {
      this.heap.push(timeMs, order, kind, target);
    }
    this.chooseHead();
  }

  /** Removes the earliest event (read it first with peek*). */
  pop(): void {
    if (this.fromLane) {
      this.laneHead = (this.laneHead + 1) & this.laneMask;
      this.laneCount--;
    } else {
      this.heap.pop();
    }
    this.chooseHead();
  }

  private isAfterLaneTail(timeMs: number, order: number): boolean {
    const tail = (this.laneHead + this.laneCount - 1) & this.laneMask;
    const tailTime = this.laneTime[tail];
    return timeMs > tailTime || (timeMs === tailTime && order > this.laneOrder[tail]);
  }

  private chooseHead(): void {
    if (this.laneCount === 0) {
      this.fromLane = false;
      return;
    }
    if (this.heap.size === 0) {
      this.fromLane = true;
      return;
    }
    const laneTime = this.laneTime[this.laneHead];
    const heapTime = this.heap.peekTimeMs();
    this.fromLane = laneTime < heapTime || (laneTime === heapTime && this.laneOrder[this.laneHead] < this.heap.peekOrder());
  }

  private growLane(): void {
    const n = this.laneTime.length;
    const time = new Float64Array(n * 2);
    const order = new Float64Array(n * 2);
    const kind = new Uint8Array(n * 2);
    const target = new Int32Array(n * 2);
    for (let i = 0; i < this.laneCount; i++) {
      const at = (this.laneHead + i) & this.laneMask;
      time[i] = this.laneTime[at];
      order[i] = this.laneOrder[at];
      kind[i] = this.laneKind[at];
      target[i] = this.laneTarget[at];
    }
    this.laneTime = time;
    this.laneOrder = order;
    this.laneKind = kind;
    this.laneTarget = target;
    this.laneHead = 0;
    this.laneMask = n * 2 - 1;
  }
}
