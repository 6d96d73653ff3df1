/**
 * A plain reference of vLLM v1's block pool with prefix caching, one object per block, written
 * from vllm/docs/design/prefix_caching.md and nothing else: blocks with a key and a reference
 * count, a free queue (least recently freed first; a request frees its blocks last first), a
 * key -> block map, allocation from the head evicting cached blocks, caching of a block once
 * its tokens are computed (a second copy of a cached key stays without one). The store under
 * test (src/core/prefix-cache.ts) keeps runs of blocks instead; the two must agree on every
 * observable: cached prefixes, whether an allocation succeeds, free, used and cached blocks,
 * evictions.
 */
export class ReferenceKv {
  private readonly key: (number | null)[];
  private readonly refs: number[];
  /** Free blocks, head first. */
  private free: number[];
  private readonly cache = new Map<number, number>();
  private readonly tables = new Map<number, number[]>();
  evictions = 0;

  constructor(
    readonly totalBlocks: number,
    private readonly blockSize: number,
    /** The key of block j of request id, or null. */
    private readonly keyOf: (id: number, j: number) => number | null,
  ) {
    this.key = new Array<number | null>(totalBlocks).fill(null);
    this.refs = new Array<number>(totalBlocks).fill(0);
    this.free = Array.from({ length: totalBlocks }, (_, b) => b);
  }

  get freeBlocks(): number {
    return this.free.length;
  }

  get cachedBlocks(): number {
    return this.cache.size;
  }

  heldBy(id: number): number {
    return this.tables.get(id)?.length ?? 0;
  }

  cachedPrefix(id: number, maxTokens: number): number {
    let h = 0;
    while ((h + 1) * this.blockSize <= maxTokens) {
      const k = this.keyOf(id, h);
      if (k === null || !this.cache.has(k)) break;
      h++;
    }
    return h * this.blockSize;
  }

  admit(id: number, cachedTokens: number, totalTokens: number): boolean {
    const hits: number[] = [];
    for (let j = 0; j < cachedTokens / this.blockSize; j++) hits.push(this.cache.get(this.keyOf(id, j) as number) as number);
    const blocks = Math.ceil(totalTokens / this.blockSize);
    const touched = hits.filter((b) => this.refs[b] === 0).length;
    if (blocks - hits.length > this.free.length - touched) return false;
    for (const b of hits) {
      if (this.refs[b] === 0) this.free.splice(this.free.indexOf(b), 1);
      this.refs[b]++;
    }
    const table = [...hits];
    for (let j = hits.length; j < blocks; j++) table.push(this.allocate());
    this.tables.set(id, table);
    return true;
  }

  grow(id: number, totalTokens: number): boolean {
    const table = this.tables.get(id) as number[];
    const blocks = Math.ceil(totalTokens / this.blockSize);
    if (blocks - table.length > this.free.length) return false;
    while (table.length < blocks) table.push(this.allocate());
    return true;
  }

  computed(id: number, fromTokens: number, toTokens: number): void {
    const table = this.tables.get(id) as number[];
    for (let j = Math.floor(fromTokens / this.blockSize); j < Math.floor(toTokens / this.blockSize); j++) {
      const b = table[j];
      const k = this.keyOf(id, j);
      if (this.key[b] !== null || k === null || this.cache.has(k)) continue;
      this.key[b] = k;
      this.cache.set(k, b);
    }
  }

  release(id: number): void {
    const table = this.tables.get(id) ?? [];
    for (let j = table.length - 1; j >= 0; j--) {
      const b = table[j];
      if (--this.refs[b] === 0) this.free.push(b);
    }
    this.tables.delete(id);
  }

  private allocate(): number {
    const b = this.free.shift() as number;
    const k = this.key[b];
    if (k !== null) {
      this.cache.delete(k);
      this.key[b] = null;
      this.evictions++;
    }
    this.refs[b] = 1;
    return b;
  }
}
