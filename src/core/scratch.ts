/**
 * Reuse of the replay's largest buffers between runs on the same thread. Fresh memory costs a
 * page fault per 4 KiB page when first written, and on a virtual machine two cores faulting at
 * once slow each other down, as a sweep's pool threads would on every point they replay
 * (docs/benchmarks.md, "The sweep pool").
 *
 * A buffer handed back with `give*` belongs to the cache: the giver must not touch it again.
 * Contents are not cleared (callers track their own lengths). Per module instance, so each
 * worker thread has its own cache; nothing here changes what a replay computes.
 */

type TypedArray = Float64Array | Uint16Array;

/** One cached buffer of a kind: `take` hands it out when it is large enough, `give` keeps the largest. */
class SpareSlot<T extends TypedArray> {
  private spare: T | null = null;

  constructor(private readonly create: (length: number) => T) {}

  take(length: number): T {
    const spare = this.spare;
    if (spare !== null && spare.length >= length) {
      this.spare = null;
      return spare;
    }
    return this.create(length);
  }

  give(buffer: T): void {
    if (this.spare === null || buffer.length > this.spare.length) this.spare = buffer;
  }
}

const float64 = new SpareSlot<Float64Array>((n) => new Float64Array(n));
const uint16 = new SpareSlot<Uint16Array>((n) => new Uint16Array(n));
/**
 * The selection's gather buffer (values copied per radix level). A slot of its own: the token-gap
 * buffer it selects from is taken from the Float64 slot at the same time.
 */
const select = new SpareSlot<Float64Array>((n) => new Float64Array(n));

/** A Float64Array of at least `length` elements, from the cache when it has one that large. */
export const takeFloat64 = (length: number): Float64Array => float64.take(length);
/** Hands a buffer back; the cache keeps the largest it has been given. */
export const giveFloat64 = (buffer: Float64Array): void => float64.give(buffer);
export const takeUint16 = (length: number): Uint16Array => uint16.take(length);
export const giveUint16 = (buffer: Uint16Array): void => uint16.give(buffer);
export const takeSelectBuffer = (length: number): Float64Array => select.take(length);
export const giveSelectBuffer = (buffer: Float64Array): void => select.give(buffer);
