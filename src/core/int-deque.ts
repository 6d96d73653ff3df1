/**
 * Growable ring deque of int32 (request ids). `waiting` needs push-back for arrivals and
 * push-front for preempted requests (spec replay.md §3), with no Array.shift in the loop.
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

  /** Appends src[start .. start + count) in order (a bulk pushBack; no allocation). */
  pushBackRange(src: Int32Array, start: number, count: number): void {
    while (this.count + count > this.buf.length) this.grow();
    const buf = this.buf;
    const mask = this.mask;
    const tail = this.head + this.count;
    for (let k = 0; k < count; k++) buf[(tail + k) & mask] = src[start + k];
    this.count += count;
  }

  /**
   * The ring's storage, for a caller that reads the front elements in place: element k from the
   * front is `ring[(frontIndex + k) & ringMask]`; `dropFront(count)` then removes them. Valid
   * until the next push.
   */
  get ring(): Int32Array {
    return this.buf;
  }

  get frontIndex(): number {
    return this.head;
  }

  get ringMask(): number {
    return this.mask;
  }

  dropFront(count: number): void {
    this.head = (this.head + count) & this.mask;
    this.count -= count;
  }

  /** Makes room for `extra` more elements, so that a caller may write them with `ring` and `commitBack`. */
  reserve(extra: number): void {
    while (this.count + extra > this.buf.length) this.grow();
  }

  /** Ring index where the next pushed element goes. */
  get backIndex(): number {
    return (this.head + this.count) & this.mask;
  }

  /** Counts `count` elements written at ring[(backIndex + k) & ringMask] (after `reserve`). */
  commitBack(count: number): void {
    this.count += count;
  }

  /** Removes the `count` front elements into dst[0 .. count) (a bulk popFront; no allocation). */
  takeFront(count: number, dst: Int32Array): void {
    const buf = this.buf;
    const mask = this.mask;
    const head = this.head;
    for (let k = 0; k < count; k++) dst[k] = buf[(head + k) & mask];
    this.head = (head + count) & mask;
    this.count -= count;
  }

  /** Element at position i from the front (0 = front). */
  at(i: number): number {
    return this.buf[(this.head + i) & this.mask];
  }

  private grow(): void {
    const next = new Int32Array(this.buf.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = this.buf[(this.head + i) & this.mask];
    this.buf = next;
    this.mask = next.length - 1;
    this.head = 0;
  }
}
