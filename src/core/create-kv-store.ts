/**
 * The KV seam's factory: a rank's store, the same class for every rank of a pool so the calls
 * in the loop stay monomorphic. A limited pool (`blocksPerRank` > 0) is paged, an unlimited one
 * counts nothing; with block keys each caches prefixes. The stores of one pool share its
 * `KvRequestBooks`.
 */
import { PagedKvStore, UnlimitedKvStore, type KvRequestBooks, type KvStore } from './kv-store.js';
import { PrefixKvStore, UnlimitedPrefixKvStore, type BlockKeys } from './prefix-cache.js';
import type { PoolKv } from './run.js';

/**
 * One rank's store. `keys` are the prefix cache's block keys (null: no prefix cache) and
 * `groups` how many trace-block groups they have (0 for sessions, whose count grows as they come).
 */
export function createKvStore(spec: PoolKv, keys: BlockKeys | null, groups: number, books: KvRequestBooks): KvStore {
  if (spec.blocksPerRank > 0) {
    return keys === null
      ? new PagedKvStore(spec.blocksPerRank, spec.blockSize, books)
      : new PrefixKvStore(spec.blocksPerRank, spec.blockSize, keys, groups, books);
  }
  return keys === null ? new UnlimitedKvStore() : new UnlimitedPrefixKvStore(spec.blockSize, keys, groups);
}
