/**
 * KV stores: the blocks of one attention-DP rank (docs/replay-model.md, "Engine"). A store is chosen once
 * per run (`createKvStore`) so every call site in the loop sees one class. The batch policy
 * decides what to allocate and whom to preempt; the store only answers whether blocks can be
 * had, and keeps the books: the pool's blocks, and per request what it holds (`KvRequestBooks`).
 *
 * The interface is what a scheduler needs from a KV pool: free and used blocks (admission
 * rules that reserve room for expected outputs), the cached prefix of a request, admission of
 * a waiting request (with its cached prefix, or with KV computed elsewhere, as a decode worker
 * receives it), growth of a running one, and release.
 */

/**
 * What the KV stores of one pool keep per request, indexed by request id: the blocks it holds
 * and, with prefix caching, which of them are keyed. The stores of a pool's ranks share one set
 * (a request is on one rank of a pool at a time): these grow with the request ids, so a copy per
 * rank would take ranks x requests of memory. A request that moves to another pool is booked in
 * that pool's set, so it can hold blocks in both while its KV moves.
 */
export class KvRequestBooks {
  /** Blocks each request holds (0 when none, and in an unlimited store, which counts nothing). */
  held: Int32Array;
  /** Prefix caching: per request its keyed runs as [start, end) block pairs, and how many pairs. */
  keyed: (Int32Array | null)[] = [];
  keyedPairs = new Int32Array(0);
  /** Keyed-run buffers of released requests, for reuse. */
  readonly spare: Int32Array[] = [];

  constructor(capacity = 1024) {
    this.held = new Int32Array(Math.max(16, capacity));
  }

  /** Makes room for request id `id` (called when a request is first booked: its admission). */
  ensure(id: number): void {
    if (id < this.held.length) return;
    const held = new Int32Array(Math.max(id + 1, this.held.length * 2));
    held.set(this.held);
    this.held = held;
  }
}

export interface KvStore {
  /** Blocks of the pool; 0 = unlimited. */
  readonly totalBlocks: number;
  /** Blocks an allocation can take now (Infinity when unlimited). */
  readonly freeBlocks: number;
  /** Blocks held by requests (0 when unlimited: nothing is counted). */
  readonly usedBlocks: number;
  /** Blocks that carry a prefix-cache key, held or free (0 without a prefix cache). */
  readonly cachedBlocks: number;
  /** Cached blocks evicted so far to make room for an allocation. */
  readonly evictions: number;
  /** Whether `computed` does anything (a prefix cache): the pass end skips the call otherwise. */
  readonly cachesComputed: boolean;
  /**
   * Tokens at the start of request `id`'s known sequence whose KV is in the cache, in whole
   * blocks, at most `maxTokens`; 0 for a store without a prefix cache.
   */
  cachedPrefix(id: number, maxTokens: number): number;
  /**
   * Admits waiting request `id`: its first `cachedTokens` come from the cache (the value
   * `cachedPrefix` just returned) and it gets blocks up to `totalTokens`. Returns false, and
   * changes nothing, when the free blocks do not suffice.
   */
  admit(id: number, cachedTokens: number, totalTokens: number): boolean;
  /** Grows running request `id`'s blocks to hold `totalTokens`; false (nothing changed) if they cannot be had. */
  grow(id: number, totalTokens: number): boolean;
  /** Tokens [fromTokens, toTokens) of request `id` are now computed (at a pass end). */
  computed(id: number, fromTokens: number, toTokens: number): void;
  /** Gives back every block request `id` holds (it finished, or was preempted). */
  release(id: number): void;
  /** Blocks request `id` holds in this store (0 in an unlimited store). */
  heldBlocks(id: number): number;
  /**
   * INV-kv against the running requests: null when the books balance, else what is wrong.
   * For tests (`checkInvariants`): it scans the running requests.
   */
  check(running: Int32Array, runningCount: number): string | null;
}

/** An unlimited pool: every allocation succeeds and nothing is counted. */
export class UnlimitedKvStore implements KvStore {
  readonly totalBlocks = 0;
  readonly freeBlocks = Infinity;
  readonly usedBlocks = 0;
  readonly cachedBlocks = 0;
  readonly evictions = 0;
  readonly cachesComputed = false;

  cachedPrefix(): number {
    return 0;
  }

  admit(): boolean {
    return true;
  }

  grow(): boolean {
    return true;
  }

  computed(): void {}

  release(): void {}

  heldBlocks(): number {
    return 0;
  }

  check(): string | null {
    return null;
  }
}

/**
 * A paged pool without prefix caching: a request holds ceil(tokens / block_size) blocks for
 * its computed and scheduled tokens (`books.held`), and only the count of free blocks is kept.
 */
export class PagedKvStore implements KvStore {
  freeBlocks: number;
  readonly cachedBlocks = 0;
  readonly evictions = 0;
  readonly cachesComputed = false;

  constructor(
    readonly totalBlocks: number,
    private readonly blockSize: number,
    private readonly books: KvRequestBooks = new KvRequestBooks(),
  ) {
    this.freeBlocks = totalBlocks;
  }

  get usedBlocks(): number {
    return this.totalBlocks - this.freeBlocks;
  }

  cachedPrefix(): number {
    return 0;
  }

  admit(id: number, _cachedTokens: number, totalTokens: number): boolean {
    const need = ((totalTokens + this.blockSize - 1) / this.blockSize) | 0;
    if (need > this.freeBlocks) return false;
    this.freeBlocks -= need;
    this.books.ensure(id);
    this.books.held[id] = need;
    return true;
  }

  grow(id: number, totalTokens: number): boolean {
    const held = this.books.held;
    // Most calls (a decode step inside its last block) need nothing: no division for those.
    if (totalTokens <= held[id] * this.blockSize) return true;
    const need = (((totalTokens + this.blockSize - 1) / this.blockSize) | 0) - held[id];
    if (need > this.freeBlocks) return false;
    if (need > 0) {
      this.freeBlocks -= need;
      held[id] += need;
    }
    return true;
  }

  computed(): void {}

  release(id: number): void {
    const held = this.books.held;
    this.freeBlocks += held[id];
    held[id] = 0;
  }

  heldBlocks(id: number): number {
    return this.books.held[id];
  }

  check(running: Int32Array, runningCount: number): string | null {
    let held = 0;
    for (let i = 0; i < runningCount; i++) held += this.books.held[running[i]];
    if (this.freeBlocks < 0 || held + this.freeBlocks !== this.totalBlocks) {
      return `holds ${held} blocks with ${this.freeBlocks} free of ${this.totalBlocks}`;
    }
    return null;
  }
}
