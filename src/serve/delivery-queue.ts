/**
 * Deliveries waiting for their time: what the simulation decided (a token reaches the client, a
 * response ends) at a simulated time the wall clock may not have reached yet (a detokenization
 * job ends after the pass that queued it). A binary min-heap over parallel typed arrays keyed
 * (time, insertion order), so one request's deliveries leave in the order they were made.
 */
export const Delivery = {
  Token: 0,
  End: 1,
} as const;

export class DeliveryQueue {
  private timeMs = new Float64Array(1024);
  private seq = new Float64Array(1024);
  private id = new Int32Array(1024);
  private kind = new Uint8Array(1024);
  private count = 0;
  private pushed = 0;

  get size(): number {
    return this.count;
  }

  /** Time of the earliest delivery (Infinity when none). */
  peekTimeMs(): number {
    return this.count > 0 ? this.timeMs[0] : Infinity;
  }

  peekId(): number {
    return this.id[0];
  }

  peekKind(): number {
    return this.kind[0];
  }

  push(timeMs: number, id: number, kind: number): void {
    if (this.count === this.timeMs.length) this.grow();
    const order = this.pushed++;
    let i = this.count++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = this.timeMs[parent];
      if (pt < timeMs || (pt === timeMs && this.seq[parent] < order)) break;
      this.move(parent, i);
      i = parent;
    }
    this.timeMs[i] = timeMs;
    this.seq[i] = order;
    this.id[i] = id;
    this.kind[i] = kind;
  }

  /** Removes the earliest delivery (read it first with peek*). */
  pop(): void {
    const last = --this.count;
    if (last === 0) return;
    const t = this.timeMs[last];
    const o = this.seq[last];
    const id = this.id[last];
    const kind = this.kind[last];
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      const right = child + 1;
      if (right < last && this.before(right, child)) child = right;
      const ct = this.timeMs[child];
      if (t < ct || (t === ct && o < this.seq[child])) break;
      this.move(child, i);
      i = child;
    }
    this.timeMs[i] = t;
    this.seq[i] = o;
    this.id[i] = id;
    this.kind[i] = kind;
  }

  private before(a: number, b: number): boolean {
    return this.timeMs[a] < this.timeMs[b] || (this.timeMs[a] === this.timeMs[b] && this.seq[a] < this.seq[b]);
  }

  private move(from: number, to: number): void {
    this.timeMs[to] = this.timeMs[from];
    this.seq[to] = this.seq[from];
    this.id[to] = this.id[from];
    this.kind[to] = this.kind[from];
  }

  private grow(): void {
    const n = this.timeMs.length * 2;
    const timeMs = new Float64Array(n);
    timeMs.set(this.timeMs);
    this.timeMs = timeMs;
    const seq = new Float64Array(n);
    seq.set(this.seq);
    this.seq = seq;
    const id = new Int32Array(n);
    id.set(this.id);
    this.id = id;
    const kind = new Uint8Array(n);
    kind.set(this.kind);
    this.kind = kind;
  }
}
