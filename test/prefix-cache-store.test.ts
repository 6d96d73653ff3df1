/**
 * The prefix-caching KV store (src/core/prefix-cache.ts) keeps runs of blocks and lazily skips
 * stale free-queue entries; a plain per-block model of vLLM v1's block pool
 * (helpers/reference-kv.ts) keeps one object per block. Over random sequences of admissions,
 * growth, computed tokens and releases (finishes and preemptions) of requests whose prompts
 * share prefixes, both must give the same cached prefixes, the same allocation outcomes and the
 * same free, used and cached block counts and evictions, and the store's own books must balance.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PrefixKvStore, TraceBlockKeys, SessionBlockKeys, type BlockKeys } from '../src/core/prefix-cache.js';
import { RequestTable } from '../src/core/request-table.js';
import { ReferenceKv } from './helpers/reference-kv.js';

interface Scenario {
  blockSize: number;
  traceBlock: number;
  totalBlocks: number;
  /** Per request: prompt tokens and hash ids (one per trace block). */
  requests: { prompt: number; hashes: number[] }[];
  ops: { kind: number; pick: number; tokens: number }[];
}

/** Prompts that share prefixes: each request extends a prefix of an earlier one with fresh ids. */
const arbScenario = fc
  .record({
    blockSize: fc.constantFrom(1, 3, 4, 16),
    traceBlock: fc.constantFrom(4, 7, 16, 32),
    totalBlocks: fc.integer({ min: 4, max: 60 }),
    shapes: fc.array(fc.record({ parent: fc.nat(), keep: fc.nat({ max: 6 }), extra: fc.nat({ max: 4 }), tail: fc.nat({ max: 40 }) }), {
      minLength: 2,
      maxLength: 10,
    }),
    ops: fc.array(fc.record({ kind: fc.nat({ max: 9 }), pick: fc.nat(), tokens: fc.integer({ min: 1, max: 40 }) }), {
      minLength: 20,
      maxLength: 160,
    }),
  })
  .map(({ blockSize, traceBlock, totalBlocks, shapes, ops }): Scenario => {
    let nextHash = 1;
    const requests: Scenario['requests'] = [];
    for (const s of shapes) {
      const parent = requests.length > 0 ? requests[s.parent % requests.length].hashes : [];
      // A prefix of the parent's full trace blocks, then new ones; the last block may be partial.
      const kept = parent.slice(0, Math.min(s.keep, Math.max(0, parent.length - 1)));
      const hashes = [...kept, ...Array.from({ length: s.extra + 1 }, () => nextHash++)];
      const prompt = (hashes.length - 1) * traceBlock + 1 + (s.tail % traceBlock);
      requests.push({ prompt, hashes });
    }
    return { blockSize, traceBlock, totalBlocks, requests, ops };
  });

/** Keys as the reference sees them: (hash of the trace block holding the block's last token, its position, the row's tokens in it, the block's index). */
function referenceKeys(s: Scenario): (id: number, j: number) => number | null {
  const ids = new Map<string, number>();
  return (id, j) => {
    const { prompt, hashes } = s.requests[id];
    const last = (j + 1) * s.blockSize;
    if (last > prompt) return null;
    const k = Math.floor((last - 1) / s.traceBlock);
    const tokens = Math.min(s.traceBlock, prompt - k * s.traceBlock);
    const key = `${hashes[k]}|${k}|${tokens}|${j}`;
    if (!ids.has(key)) ids.set(key, ids.size);
    return ids.get(key) as number;
  };
}

/** The store's keys: the resolver's grouping rule, (hash id, position, tokens in the block) -> dense group. */
function storeKeys(s: Scenario, table: RequestTable): BlockKeys {
  const groups = new Map<string, number>();
  const rowOffsets = new Int32Array(s.requests.length + 1);
  const flat: number[] = [];
  s.requests.forEach((r, id) => {
    r.hashes.forEach((h, k) => {
      const key = `${h}|${k}|${Math.min(s.traceBlock, r.prompt - k * s.traceBlock)}`;
      if (!groups.has(key)) groups.set(key, groups.size);
      flat.push(groups.get(key) as number);
    });
    rowOffsets[id + 1] = flat.length;
  });
  const spec = {
    kind: 'trace' as const,
    traceBlockTokens: s.traceBlock,
    rowOffsets,
    groups: Int32Array.from(flat),
    groupCount: groups.size,
  };
  return new TraceBlockKeys(spec, s.blockSize, table);
}

/** Runs the ops on both models: the first disagreement (or null), and how much the run hit and evicted. */
function replayOps(s: Scenario): { problem: string | null; hitTokens: number; evictions: number } {
  let hitTokens = 0;
  const fail = (problem: string) => ({ problem, hitTokens, evictions: 0 });
  const table = new RequestTable(s.requests.length);
  s.requests.forEach((r, id) => (table.prompt[id] = r.prompt));
  const keys = storeKeys(s, table);
  const groupCount = (keys as unknown as { spec: { groupCount: number } }).spec.groupCount;
  const store = new PrefixKvStore(s.totalBlocks, s.blockSize, keys, groupCount);
  const ref = new ReferenceKv(s.totalBlocks, s.blockSize, referenceKeys(s));
  const computed = new Array<number>(s.requests.length).fill(0);
  const running: number[] = [];
  for (const [step, op] of s.ops.entries()) {
    const where = `op ${step} (${JSON.stringify(op)})`;
    const id = op.pick % s.requests.length;
    const isRunning = running.includes(id);
    if (!isRunning && op.kind < 5) {
      // Admission: the cached prefix (at most the prompt minus one), then blocks for a chunk.
      const prompt = s.requests[id].prompt;
      const cached = store.cachedPrefix(id, prompt - 1);
      if (cached !== ref.cachedPrefix(id, prompt - 1))
        return fail(`${where}: cached prefix ${cached} vs ${ref.cachedPrefix(id, prompt - 1)}`);
      const total = Math.min(prompt, cached + op.tokens);
      const ok = store.admit(id, cached, total);
      if (ok !== ref.admit(id, cached, total)) return fail(`${where}: admit ${ok}`);
      if (ok) {
        hitTokens += cached;
        running.push(id);
        store.computed(id, cached, total);
        ref.computed(id, cached, total);
        computed[id] = total;
      }
    } else if (isRunning && op.kind < 8) {
      // Growth by a chunk (prompt or outputs, which have no keys), then its tokens computed.
      const total = computed[id] + op.tokens;
      const ok = store.grow(id, total);
      if (ok !== ref.grow(id, total)) return fail(`${where}: grow ${ok}`);
      if (ok) {
        store.computed(id, computed[id], total);
        ref.computed(id, computed[id], total);
        computed[id] = total;
      }
    } else if (isRunning) {
      // Finish or preemption: the blocks go back.
      store.release(id);
      ref.release(id);
      running.splice(running.indexOf(id), 1);
      computed[id] = 0;
    }
    if (store.freeBlocks !== ref.freeBlocks) return fail(`${where}: free ${store.freeBlocks} vs ${ref.freeBlocks}`);
    if (store.cachedBlocks !== ref.cachedBlocks) return fail(`${where}: cached ${store.cachedBlocks} vs ${ref.cachedBlocks}`);
    if (store.evictions !== ref.evictions) return fail(`${where}: evictions ${store.evictions} vs ${ref.evictions}`);
    for (const r of running) if (store.heldBlocks(r) !== ref.heldBy(r)) return fail(`${where}: request ${r} holds ${store.heldBlocks(r)}`);
    const problem = store.check(Int32Array.from(running), running.length);
    if (problem !== null) return fail(`${where}: ${problem}`);
  }
  return { problem: null, hitTokens, evictions: store.evictions };
}

describe('prefix-caching KV store', () => {
  it('agrees with a per-block model of vLLM v1 block pool on random shared-prefix workloads', () => {
    let evicting = 0;
    let hitting = 0;
    fc.assert(
      fc.property(arbScenario, (s) => {
        const { problem, hitTokens, evictions } = replayOps(s);
        expect(problem).toBeNull();
        if (evictions > 0) evicting++;
        if (hitTokens > 0) hitting++;
      }),
      { numRuns: 400, seed: 20261202 },
    );
    // Coverage guards: the workloads evict and hit, so the agreement is not vacuous.
    expect(evicting).toBeGreaterThan(50);
    expect(hitting).toBeGreaterThan(50);
  });

  it('keys every turn of a synthetic session alike, block by block', () => {
    const table = new RequestTable(4);
    table.sessionId[0] = 0;
    table.sessionId[1] = 0;
    table.sessionId[2] = 1;
    const keys = new SessionBlockKeys(10, table);
    keys.locate(1, 3);
    expect([keys.group, keys.index, keys.run]).toEqual([0, 3, 7]);
    keys.locate(2, 0);
    expect([keys.group, keys.index, keys.run]).toEqual([1, 0, 10]);
  });
});
