/**
 * KV stores: the blocks of one attention-DP rank (docs/replay-model.md, "Engine"). A store is chosen once
 * per run (`createKvStore`) so every call site in the loop sees one class. The batch policy
 * decides what to allocate and whom to preempt; the store only answers whether blocks can be
 * had, and keeps the books. Request ids index the request table's columns (`blocksHeld`).
 *
 * The interface is what a scheduler needs from a KV pool: free and used blocks (admission
 * rules that reserve room for expected outputs), the cached prefix of a request, admission of
 * a waiting request (with its cached prefix, or with KV computed elsewhere, as a decode worker
 * receives it), growth of a running one, and release.
 */
import type { RequestTable } from './request-table.js';

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

  check(): string | null {
    return null;
  }
}

/**
 * A paged pool without prefix caching: a request holds ceil(tokens / block_size) blocks for
 * its computed and scheduled tokens (`blocksHeld`), and only the count of free blocks is kept.
 */
export class PagedKvStore implements KvStore {
  freeBlocks: number;
  readonly cachedBlocks = 0;
  readonly evictions = 0;
  readonly cachesComputed = false;

  constructor(
    readonly totalBlocks: number,
    private readonly blockSize: number,
    private readonly table: RequestTable,
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
    this.table.blocksHeld[id] = need;
    return true;
  }

  grow(id: number, totalTokens: number): boolean {
    const held = this.table.blocksHeld;
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
    const held = this.table.blocksHeld;
    this.freeBlocks += held[id];
    held[id] = 0;
  }

  check(running: Int32Array, runningCount: number): string | null {
    let held = 0;
    for (let i = 0; i < runningCount; i++) held += this.table.blocksHeld[running[i]];
    if (this.freeBlocks < 0 || held + this.freeBlocks !== this.totalBlocks) {
      return `holds ${held} blocks with ${this.freeBlocks} free of ${this.totalBlocks}`;
    }
    return null;
  }
}
