/**
 * Reuse of the replay's largest buffers between runs on the same thread. Fresh memory costs a
 * page fault per 4 KiB page when first written, and on a virtual machine two cores faulting at
 * once slow each other down: a sweep's pool threads, each replaying point after point, ran a
 * third slower two at a time than alone until the pooled token-gap buffer was reused.
 *
 * A buffer handed back with `give*` belongs to the cache: the giver must not touch it again.
 * Contents are not cleared (callers track their own lengths). Per module instance, so each
 * worker thread has its own cache; nothing here changes what a replay computes.
 */

let spareFloat64: Float64Array | null = null;
let spareUint16: Uint16Array | null = null;
let spareSelect: Float64Array | null = null;

/** A Float64Array of at least `length` elements, from the cache when it has one that large. */
export function takeFloat64(length: number): Float64Array {
  const spare = spareFloat64;
  if (spare !== null && spare.length >= length) {
    spareFloat64 = null;
    return spare;
  }
  return new Float64Array(length);
}

/** Hands a buffer back; the cache keeps the largest it has been given. */
export function giveFloat64(buffer: Float64Array): void {
  if (spareFloat64 === null || buffer.length > spareFloat64.length) spareFloat64 = buffer;
}

export function takeUint16(length: number): Uint16Array {
  const spare = spareUint16;
  if (spare !== null && spare.length >= length) {
    spareUint16 = null;
    return spare;
  }
  return new Uint16Array(length);
}

export function giveUint16(buffer: Uint16Array): void {
  if (spareUint16 === null || buffer.length > spareUint16.length) spareUint16 = buffer;
}

/**
 * The selection's gather buffer (values copied per radix level). A slot of its own: the token-gap
 * buffer it selects from is taken from the Float64 slot at the same time.
 */
export function takeSelectBuffer(length: number): Float64Array {
  const spare = spareSelect;
  if (spare !== null && spare.length >= length) {
    spareSelect = null;
    return spare;
  }
  return new Float64Array(length);
}

export function giveSelectBuffer(buffer: Float64Array): void {
  if (spareSelect === null || buffer.length > spareSelect.length) spareSelect = buffer;
}
