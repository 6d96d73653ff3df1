/**
 * Prefix caching (vLLM v1's automatic prefix caching; docs/replay-model.md "Prefix cache"): a
 * KV block whose tokens are all computed gets a key; a later request whose leading blocks have
 * the same keys reuses those blocks instead of computing them; blocks no request holds stay
 * cached in an LRU free queue until an allocation needs them.
 *
 * Keys are (group, index) pairs computed by arithmetic from the run description (run.ts
 * `PrefixKeySpec`): no hashing of tokens anywhere. The books are kept per group, not per block:
 * a trace replay allocates, caches and evicts millions of blocks, so each of those touches a
 * couple of array slots and every other step walks whole runs of blocks.
 */
import { KvRequestBooks, type KvStore } from './kv-store.js';
import type { RequestTable } from './request-table.js';
import type { PrefixKeySpec } from './run.js';

/**
 * Where a request's blocks' keys are: `locate(id, j)` sets `group`, `index` and `run` so that
 * blocks j .. j + run - 1 have keys (group, index) .. (group, index + run - 1); `group` -1 when
 * block j and every later block have no key (their tokens are not known to be shared).
 */
export interface BlockKeys {
  /** Keys per group: indexes are below it. */
  readonly groupWidth: number;
  group: number;
  index: number;
  run: number;
  locate(id: number, j: number): void;
}

/**
 * Trace rows: engine block j covers tokens [j b, (j + 1) b). Its key is the group of the trace
 * block holding its last token, k = floor(((j + 1) b - 1) / B), and its index among the engine
 * blocks that end in trace block k, j - floor(k B / b). A hash id stands for the whole prompt up
 * to the end of its trace block (Mooncake's hash ids are chained), so equal keys mean equal
 * tokens in the engine block and before it, also for a block that straddles two trace blocks.
 * Only blocks wholly inside the prompt have keys (a trace says nothing of its outputs); a group
 * also fixes the row's token count in its trace block, so a partial last block matches only one
 * with as many tokens.
 */
export class TraceBlockKeys implements BlockKeys {
  readonly groupWidth: number;
  group = -1;
  index = 0;
  run = 0;

  constructor(
    private readonly spec: Extract<PrefixKeySpec, { kind: 'trace' }>,
    private readonly blockSize: number,
    private readonly table: RequestTable,
  ) {
    this.groupWidth = Math.ceil(spec.traceBlockTokens / blockSize);
  }

  locate(id: number, j: number): void {
    const b = this.blockSize;
    const prompt = this.table.prompt[id];
    const last = (j + 1) * b;
    if (last > prompt) {
      this.group = -1;
      return;
    }
    const traceBlock = this.spec.traceBlockTokens;
    const k = Math.floor((last - 1) / traceBlock);
    const first = Math.floor((k * traceBlock) / b);
    const end = Math.floor(Math.min((k + 1) * traceBlock, prompt) / b);
    this.group = this.spec.groups[this.spec.rowOffsets[id] + k];
    this.index = j - first;
    this.run = end - j;
  }
}

/** Synthetic sessions: every turn of session s is a prefix of one stream, so block j is the same in each. */
export class SessionBlockKeys implements BlockKeys {
  group = -1;
  index = 0;
  run = 0;

  constructor(
    readonly groupWidth: number,
    private readonly table: RequestTable,
  ) {}

  locate(id: number, j: number): void {
    this.group = this.table.sessionId[id];
    this.index = j;
    this.run = this.groupWidth - j;
  }
}

export function createBlockKeys(spec: PrefixKeySpec, blockSize: number, table: RequestTable): BlockKeys {
  return spec.kind === 'trace' ? new TraceBlockKeys(spec, blockSize, table) : new SessionBlockKeys(spec.blocksPerSession, table);
}

/** A key's state: not cached. */
const ABSENT = -1;
/** A key's state once its block is free: its stamp (the release that freed it), encoded below -1. */
const freeState = (stamp: number): number => -2 - stamp;

/**
 * The cached keys of one rank, by group: a group with any cached key has a slot of
 * `groupWidth` entries, one state per key: ABSENT, the number of running requests holding its
 * block (>= 1), or, for a free block, `freeState(stamp)` of the release that freed it (the
 * unlimited store, which has no free queue, uses 0). One int per key, so the stores' loops read
 * one array. Slots are reused once a group has no cached key left.
 */
class KeySlabs {
  /** Slot of each group, or -1. Grows with the group ids seen (sessions have no fixed count). */
  slotOf: Int32Array;
  state = new Int32Array(0);
  /** Cached keys per slot. */
  private live = new Int32Array(0);
  private readonly freeSlots: number[] = [];
  private slots = 0;
  /** Cached keys in all. */
  cached = 0;

  constructor(
    private readonly width: number,
    groups: number,
  ) {
    this.slotOf = new Int32Array(Math.max(16, groups)).fill(-1);
  }

  /** The slot of `group`, or -1 when it has no cached key. */
  slot(group: number): number {
    return group < this.slotOf.length ? this.slotOf[group] : -1;
  }

  /** The slot of `group`, made when it has none. */
  slotFor(group: number): number {
    if (group >= this.slotOf.length) {
      let n = this.slotOf.length * 2;
      while (n <= group) n *= 2;
      const grown = new Int32Array(n).fill(-1);
      grown.set(this.slotOf);
      this.slotOf = grown;
    }
    let slot = this.slotOf[group];
    if (slot >= 0) return slot;
    slot = this.freeSlots.length > 0 ? (this.freeSlots.pop() as number) : this.newSlot();
    this.state.fill(ABSENT, slot * this.width, (slot + 1) * this.width);
    this.live[slot] = 0;
    this.slotOf[group] = slot;
    return slot;
  }

  /** Caches the `count` keys from entry `at` of `slot`, each in state `value`. */
  addRun(slot: number, at: number, count: number, value: number): void {
    this.state.fill(value, at, at + count);
    this.live[slot] += count;
    this.cached += count;
  }

  /**
   * Counts `count` keys of `group`'s `slot` out of the cache (their entries already set to
   * ABSENT); frees the slot when they were the group's last. Returns whether it did.
   */
  evict(group: number, slot: number, count: number): boolean {
    this.cached -= count;
    this.live[slot] -= count;
    if (this.live[slot] > 0) return false;
    this.slotOf[group] = -1;
    this.freeSlots.push(slot);
    return true;
  }

  private newSlot(): number {
    const slot = this.slots++;
    if (slot >= this.live.length) {
      const n = Math.max(64, this.live.length * 2);
      const state = new Int32Array(n * this.width);
      state.set(this.state);
      this.state = state;
      const live = new Int32Array(n);
      live.set(this.live);
      this.live = live;
    }
    return slot;
  }
}

/** Cached prefix, in blocks, of request `id`: its leading blocks whose keys are cached, at most `maxBlocks`. */
function cachedBlocksOf(keys: BlockKeys, slabs: KeySlabs, id: number, maxBlocks: number): number {
  const width = keys.groupWidth;
  let j = 0;
  while (j < maxBlocks) {
    keys.locate(id, j);
    if (keys.group < 0) break;
    const slot = slabs.slot(keys.group);
    if (slot < 0) break;
    const state = slabs.state;
    const base = slot * width + keys.index;
    const n = Math.min(keys.run, maxBlocks - j);
    let q = 0;
    while (q < n && state[base + q] !== ABSENT) q++;
    j += q;
    if (q < n) break;
  }
  return j;
}

function grown(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/** Free-queue entry kinds: a run of keyed blocks of one group, or blocks without a key. */
const NO_GROUP = -1;

/**
 * A limited pool with prefix caching, with vLLM v1's block pool semantics. Each cached block
 * has a reference count (the running requests holding it); blocks no request holds are in the
 * free queue, least recently freed first; a request frees its blocks in reverse order, so its
 * tail blocks, the least likely to be shared, are evicted first; an allocation takes blocks
 * from the head, evicting the cached ones.
 *
 * The queue holds runs, not blocks: a run of one group's keys freed together (index
 * descending), or a count of blocks without a key. A cached block taken back by a hit before it
 * is reused stays in its run and is skipped when the run reaches the head (its count is above
 * 0, or its release stamp is a later one): the blocks the queue gives out, in order, are the
 * ones vLLM's doubly linked queue would.
 *
 * A request's blocks are positions 0 .. held - 1 of its sequence (`KvRequestBooks`); it records which of them
 * are keyed blocks it references (its cache hits, and the blocks it computed first), as
 * ascending [start, end) runs. The others are blocks without a key: not yet full or computed, a
 * second copy of a block another request computed at the same time, or outputs of a trace row.
 */
export class PrefixKvStore implements KvStore {
  freeBlocks: number;
  evictions = 0;
  readonly cachesComputed = true;
  private readonly slabs: KeySlabs;
  private releases = 0;
  // The free queue: a ring of runs (group or NO_GROUP, lowest index, highest index or count, stamp).
  private qGroup = new Int32Array(1024);
  private qLow = new Int32Array(1024);
  private qHigh = new Int32Array(1024);
  private qStamp = new Float64Array(1024);
  private qHead = 0;
  private qSize = 0;
  /** Group runs of a release: (group, first index, last index) triples. */
  private scratch = new Int32Array(96);

  constructor(
    readonly totalBlocks: number,
    private readonly blockSize: number,
    private readonly keys: BlockKeys,
    groups: number,
    private readonly books = new KvRequestBooks(),
  ) {
    this.freeBlocks = totalBlocks;
    this.slabs = new KeySlabs(keys.groupWidth, groups);
    this.push(NO_GROUP, 0, totalBlocks, 0);
  }

  get usedBlocks(): number {
    return this.totalBlocks - this.freeBlocks;
  }

  get cachedBlocks(): number {
    return this.slabs.cached;
  }

  cachedPrefix(id: number, maxTokens: number): number {
    return cachedBlocksOf(this.keys, this.slabs, id, Math.floor(maxTokens / this.blockSize)) * this.blockSize;
  }

  admit(id: number, cachedTokens: number, totalTokens: number): boolean {
    const b = this.blockSize;
    const hits = cachedTokens / b;
    const blocks = Math.ceil(totalTokens / b);
    const keys = this.keys;
    const slabs = this.slabs;
    const width = keys.groupWidth;
    // Cached blocks no one holds are free: taking them back leaves fewer to allocate from.
    let touched = 0;
    for (let j = 0; j < hits;) {
      keys.locate(id, j);
      const base = slabs.slot(keys.group) * width + keys.index;
      const n = Math.min(keys.run, hits - j);
      for (let q = 0; q < n; q++) if (slabs.state[base + q] < ABSENT) touched++;
      j += n;
    }
    if (blocks - hits > this.freeBlocks - touched) return false;
    for (let j = 0; j < hits;) {
      keys.locate(id, j);
      const state = slabs.state;
      const base = slabs.slot(keys.group) * width + keys.index;
      const n = Math.min(keys.run, hits - j);
      for (let q = 0; q < n; q++) {
        const v = state[base + q];
        state[base + q] = v < ABSENT ? 1 : v + 1;
      }
      j += n;
    }
    this.freeBlocks -= touched;
    this.take(blocks - hits);
    this.books.ensure(id);
    this.books.held[id] = blocks;
    const runs = this.runsFor(id);
    if (hits > 0) {
      runs[0] = 0;
      runs[1] = hits;
      this.books.keyedPairs[id] = 1;
    } else {
      this.books.keyedPairs[id] = 0;
    }
    return true;
  }

  grow(id: number, totalTokens: number): boolean {
    // Small enough to be inlined where the policy calls it: most calls need no new block.
    if (totalTokens <= this.books.held[id] * this.blockSize) return true;
    return this.growBlocks(id, totalTokens);
  }

  private growBlocks(id: number, totalTokens: number): boolean {
    const held = this.books.held;
    const have = held[id];
    const blocks = Math.ceil(totalTokens / this.blockSize);
    if (blocks - have > this.freeBlocks) return false;
    this.take(blocks - have);
    held[id] = blocks;
    return true;
  }

  computed(id: number, fromTokens: number, toTokens: number): void {
    // Most passes fill no block (a decode step inside a block): one comparison for those, in a
    // method small enough to be inlined at the pass end. The next block fills at the first
    // block boundary above `fromTokens`.
    if (toTokens >= fromTokens - (fromTokens % this.blockSize) + this.blockSize) this.cacheFull(id, fromTokens, toTokens);
  }

  /** Caches the blocks that tokens [fromTokens, toTokens) of request `id` filled. */
  private cacheFull(id: number, fromTokens: number, toTokens: number): void {
    const b = this.blockSize;
    const end = Math.floor(toTokens / b);
    let j = Math.floor(fromTokens / b);
    const keys = this.keys;
    const slabs = this.slabs;
    const width = keys.groupWidth;
    while (j < end) {
      keys.locate(id, j);
      if (keys.group < 0) return;
      const n = Math.min(keys.run, end - j);
      const slot = slabs.slotFor(keys.group);
      const base = slot * width + keys.index;
      const state = slabs.state;
      let q = 0;
      while (q < n) {
        // Blocks whose key is not cached yet become cached, held by this request; a block
        // whose key another request cached first (both computed it at once) keeps no key.
        const start = q;
        while (q < n && state[base + q] === ABSENT) q++;
        if (q > start) {
          slabs.addRun(slot, base + start, q - start, 1);
          this.addKeyed(id, j + start, j + q);
        }
        while (q < n && state[base + q] !== ABSENT) q++;
      }
      j += n;
    }
  }

  release(id: number): void {
    const held = this.books.held;
    const count = held[id];
    if (count === 0) return;
    const stamp = ++this.releases;
    const runs = this.books.keyed[id] as Int32Array;
    // In reverse block order: the blocks without a key above each keyed run, then the run.
    let top = count;
    for (let r = this.books.keyedPairs[id] - 1; r >= 0; r--) {
      const start = runs[2 * r];
      const end = runs[2 * r + 1];
      if (top > end) this.freeUnkeyed(top - end);
      this.freeKeyed(id, start, end, stamp);
      top = start;
    }
    if (top > 0) this.freeUnkeyed(top);
    held[id] = 0;
    this.books.keyed[id] = null;
    this.books.spare.push(runs);
  }

  heldBlocks(id: number): number {
    return this.books.held[id];
  }

  check(running: Int32Array, runningCount: number): string | null {
    const slabs = this.slabs;
    const keys = this.keys;
    const width = keys.groupWidth;
    // References each cached key should have: one per running request whose keyed runs hold it.
    const expected = new Map<number, number>();
    let keyedHeld = 0;
    let held = 0;
    for (let i = 0; i < runningCount; i++) {
      const id = running[i];
      held += this.books.held[id];
      const runs = this.books.keyed[id] as Int32Array;
      for (let r = 0; r < this.books.keyedPairs[id]; r++) {
        for (let j = runs[2 * r]; j < runs[2 * r + 1]; j++) {
          keys.locate(id, j);
          const slot = slabs.slot(keys.group);
          if (slot < 0 || slabs.state[slot * width + keys.index] < 1) return `request ${id} holds block ${j} whose key is not held`;
          const at = slot * width + keys.index;
          expected.set(at, (expected.get(at) ?? 0) + 1);
          keyedHeld++;
        }
      }
    }
    let cached = 0;
    let referenced = 0;
    for (let group = 0; group < slabs.slotOf.length; group++) {
      const slot = slabs.slotOf[group];
      if (slot < 0) continue;
      for (let at = slot * width; at < (slot + 1) * width; at++) {
        const v = slabs.state[at];
        if (v === ABSENT) continue;
        cached++;
        // A free key counts no reference.
        const refs = v < ABSENT ? 0 : v;
        if (v === 0) return `key ${group}/${at - slot * width} is free without a stamp`;
        if (refs !== (expected.get(at) ?? 0)) {
          return `key ${group}/${at - slot * width} has reference count ${refs}, held by ${expected.get(at) ?? 0} running requests`;
        }
        if (refs > 0) referenced++;
      }
    }
    if (cached !== slabs.cached) return `counts ${slabs.cached} cached keys, holds ${cached}`;
    // Blocks in use: each referenced key once, plus every held block without a key.
    const inUse = referenced + (held - keyedHeld);
    let queued = 0;
    for (let e = 0; e < this.qSize; e++) {
      const at = (this.qHead + e) & (this.qGroup.length - 1);
      const group = this.qGroup[at];
      if (group === NO_GROUP) {
        queued += this.qHigh[at];
        continue;
      }
      const slot = slabs.slot(group);
      if (slot < 0) continue;
      for (let index = this.qHigh[at]; index >= this.qLow[at]; index--) {
        const k = slot * width + index;
        if (slabs.state[k] === freeState(this.qStamp[at])) queued++;
      }
    }
    if (this.freeBlocks < 0 || queued !== this.freeBlocks || inUse + this.freeBlocks !== this.totalBlocks) {
      return `holds ${inUse} blocks with ${this.freeBlocks} free (${queued} queued) of ${this.totalBlocks}`;
    }
    return null;
  }

  /** Takes `count` blocks (the caller checked they are free) from the head of the queue, evicting cached ones. */
  private take(count: number): void {
    if (count <= 0) return;
    this.freeBlocks -= count;
    const slabs = this.slabs;
    const width = this.keys.groupWidth;
    const mask = this.qGroup.length - 1;
    while (count > 0) {
      // Callers check the free count first; an empty queue here is a broken invariant, not a wait.
      if (this.qSize === 0) throw new Error(`KV store: ${count} more blocks taken than the free queue holds`);
      const at = this.qHead;
      const group = this.qGroup[at];
      if (group === NO_GROUP) {
        const n = Math.min(count, this.qHigh[at]);
        count -= n;
        this.qHigh[at] -= n;
        if (this.qHigh[at] === 0) this.pop(mask);
        continue;
      }
      const slot = slabs.slot(group);
      if (slot < 0) {
        this.pop(mask);
        continue;
      }
      const low = this.qLow[at];
      const state = slabs.state;
      const free = freeState(this.qStamp[at]);
      const base = slot * width;
      let index = this.qHigh[at];
      let evicted = 0;
      for (; index >= low && evicted < count; index--) {
        if (state[base + index] === free) {
          state[base + index] = ABSENT;
          evicted++;
        }
      }
      count -= evicted;
      this.evictions += evicted;
      // When the group's last cached key went with these, the rest of this run is stale.
      if (slabs.evict(group, slot, evicted) || index < low) this.pop(mask);
      else this.qHigh[at] = index;
    }
  }

  /** Releases the keyed blocks [start, end) of request `id`, last first; those no one else holds join the queue. */
  private freeKeyed(id: number, start: number, end: number, stamp: number): void {
    const keys = this.keys;
    const slabs = this.slabs;
    const width = keys.groupWidth;
    // The group runs in block order, then released from the last.
    let runs = 0;
    for (let j = start; j < end;) {
      keys.locate(id, j);
      const n = Math.min(keys.run, end - j);
      if (3 * runs + 3 > this.scratch.length) this.scratch = grown(this.scratch);
      this.scratch[3 * runs] = keys.group;
      this.scratch[3 * runs + 1] = keys.index;
      this.scratch[3 * runs + 2] = keys.index + n - 1;
      runs++;
      j += n;
    }
    const state = slabs.state;
    const free = freeState(stamp);
    for (let r = runs - 1; r >= 0; r--) {
      const group = this.scratch[3 * r];
      const first = this.scratch[3 * r + 1];
      const last = this.scratch[3 * r + 2];
      const base = slabs.slot(group) * width;
      // The queue run spans the keys this release frees (others still hold the rest).
      let low = last + 1;
      let high = first - 1;
      let freed = 0;
      for (let index = last; index >= first; index--) {
        const v = state[base + index] - 1;
        if (v === 0) {
          state[base + index] = free;
          if (index > high) high = index;
          low = index;
          freed++;
        } else {
          state[base + index] = v;
        }
      }
      if (freed > 0) {
        this.freeBlocks += freed;
        this.push(group, low, high, stamp);
      }
    }
  }

  private freeUnkeyed(count: number): void {
    this.freeBlocks += count;
    const tail = (this.qHead + this.qSize - 1) & (this.qGroup.length - 1);
    if (this.qSize > 0 && this.qGroup[tail] === NO_GROUP) this.qHigh[tail] += count;
    else this.push(NO_GROUP, 0, count, 0);
  }

  /** Records blocks [start, end) as keyed blocks `id` references. */
  private addKeyed(id: number, start: number, end: number): void {
    let runs = this.runsFor(id);
    const pairs = this.books.keyedPairs[id];
    if (pairs > 0 && runs[2 * pairs - 1] === start) {
      runs[2 * pairs - 1] = end;
      return;
    }
    if (2 * pairs + 2 > runs.length) {
      const grown = new Int32Array(runs.length * 2);
      grown.set(runs);
      runs = grown;
      this.books.keyed[id] = runs;
    }
    runs[2 * pairs] = start;
    runs[2 * pairs + 1] = end;
    this.books.keyedPairs[id] = pairs + 1;
  }

  /** Request `id`'s keyed runs, made (empty) when it has none. */
  private runsFor(id: number): Int32Array {
    if (id >= this.books.keyedPairs.length) {
      const n = Math.max(1024, id + 1, this.books.keyedPairs.length * 2);
      const pairs = new Int32Array(n);
      pairs.set(this.books.keyedPairs);
      this.books.keyedPairs = pairs;
      const keyed: (Int32Array | null)[] = new Array<Int32Array | null>(n).fill(null);
      for (let i = 0; i < this.books.keyed.length; i++) keyed[i] = this.books.keyed[i];
      this.books.keyed = keyed;
    }
    let runs = this.books.keyed[id];
    if (runs === null) {
      runs = this.books.spare.pop() ?? new Int32Array(8);
      this.books.keyed[id] = runs;
      this.books.keyedPairs[id] = 0;
    }
    return runs;
  }

  private push(group: number, low: number, high: number, stamp: number): void {
    if (this.qSize === this.qGroup.length) this.growQueue();
    const at = (this.qHead + this.qSize) & (this.qGroup.length - 1);
    this.qGroup[at] = group;
    this.qLow[at] = low;
    this.qHigh[at] = high;
    this.qStamp[at] = stamp;
    this.qSize++;
  }

  private pop(mask: number): void {
    this.qHead = (this.qHead + 1) & mask;
    this.qSize--;
  }

  private growQueue(): void {
    const n = this.qGroup.length * 2;
    const group = new Int32Array(n);
    const low = new Int32Array(n);
    const high = new Int32Array(n);
    const stamp = new Float64Array(n);
    for (let e = 0; e < this.qSize; e++) {
      const at = (this.qHead + e) & (this.qGroup.length - 1);
      group[e] = this.qGroup[at];
      low[e] = this.qLow[at];
      high[e] = this.qHigh[at];
      stamp[e] = this.qStamp[at];
    }
    this.qGroup = group;
    this.qLow = low;
    this.qHigh = high;
    this.qStamp = stamp;
    this.qHead = 0;
  }
}

/**
 * An unlimited pool with prefix caching: nothing is ever evicted, so a block's key, once its
 * tokens are computed, stays cached for the rest of the run. No blocks are counted.
 */
export class UnlimitedPrefixKvStore implements KvStore {
  readonly totalBlocks = 0;
  readonly freeBlocks = Infinity;
  readonly usedBlocks = 0;
  readonly evictions = 0;
  readonly cachesComputed = true;
  private readonly slabs: KeySlabs;

  constructor(
    private readonly blockSize: number,
    private readonly keys: BlockKeys,
    groups: number,
  ) {
    this.slabs = new KeySlabs(keys.groupWidth, groups);
  }

  get cachedBlocks(): number {
    return this.slabs.cached;
  }

  cachedPrefix(id: number, maxTokens: number): number {
    return cachedBlocksOf(this.keys, this.slabs, id, Math.floor(maxTokens / this.blockSize)) * this.blockSize;
  }

  admit(): boolean {
    return true;
  }

  grow(): boolean {
    return true;
  }

  computed(id: number, fromTokens: number, toTokens: number): void {
    if (toTokens >= fromTokens - (fromTokens % this.blockSize) + this.blockSize) this.cacheFull(id, fromTokens, toTokens);
  }

  private cacheFull(id: number, fromTokens: number, toTokens: number): void {
    const b = this.blockSize;
    const end = Math.floor(toTokens / b);
    const keys = this.keys;
    const slabs = this.slabs;
    for (let j = Math.floor(fromTokens / b); j < end;) {
      keys.locate(id, j);
      if (keys.group < 0) return;
      const n = Math.min(keys.run, end - j);
      const slot = slabs.slotFor(keys.group);
      const base = slot * keys.groupWidth + keys.index;
      for (let q = 0; q < n; q++) if (slabs.state[base + q] === ABSENT) slabs.addRun(slot, base + q, 1, 0);
      j += n;
    }
  }

  release(): void {}

  heldBlocks(): number {
    return 0;
  }

  check(): string | null {
    return null;
  }
}
