/**
 * Growable ring deque of int32 (request ids). `waiting` needs push-back for arrivals and
 * push-front for preempted requests (docs/replay-model.md, "Engine"), with no Array.shift in the loop.
 */
export class IntDeque {
  private buf: Int32Array;
  private mask: number;
  private head = 0;
  private count = 0;

  constructor(initialCapacity = 64) {
    let cap = 16;
    while (cap < initialCapacity) cap *= 2;
    this.buf = new Int32Array(cap);
    this.mask = cap - 1;
  }

  get size(): number {
    return this.count;
  }

  peekFront(): number {
    return this.buf[this.head];
  }

  pushBack(value: number): void {
    if (this.count === this.buf.length) this.grow();
    this.buf[(this.head + this.count) & this.mask] = value;
    this.count++;
  }

  pushFront(value: number): void {
    if (this.count === this.buf.length) this.grow();
    this.head = (this.head - 1) & this.mask;
    this.buf[this.head] = value;
    this.count++;
  }

  popFront(): number {
    const value = this.buf[this.head];
    this.head = (this.head + 1) & this.mask;
    this.count--;
    return value;
  }

  /** Element at position i from the front (0 = front). */
  at(i: number): number {
    return this.buf[(this.head + i) & this.mask];
  }

  popBack(): number {
    this.count--;
    return this.buf[(this.head + this.count) & this.mask];
  }

  /** Inserts `value` at position `pos` (0 = front, size = back); later elements move back by one. */
  insertAt(pos: number, value: number): void {
    if (this.count === this.buf.length) this.grow();
    const buf = this.buf;
    const start = (this.head + pos) & this.mask;
    const end = (this.head + this.count) & this.mask;
    if (start <= end) {
      buf.copyWithin(start + 1, start, end);
    } else {
      // The tail wraps around the end of the buffer: shift both pieces.
      buf.copyWithin(1, 0, end);
      buf[0] = buf[this.mask];
      buf.copyWithin(start + 1, start, this.mask);
    }
    buf[start] = value;
    this.count++;
  }

  /** Removes the element at position `pos` (0 = front); later elements move forward by one. */
  removeAt(pos: number): void {
    const last = this.count - 1;
    for (let i = pos; i < last; i++) this.buf[(this.head + i) & this.mask] = this.buf[(this.head + i + 1) & this.mask];
    this.count = last;
  }

  /** Overwrites the element at position i from the front (a policy reordering `waiting` in place). */
  set(i: number, value: number): void {
    this.buf[(this.head + i) & this.mask] = value;
  }

  private grow(): void {
    const next = new Int32Array(this.buf.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = this.buf[(this.head + i) & this.mask];
    this.buf = next;
    this.mask = next.length - 1;
    this.head = 0;
  }
}
