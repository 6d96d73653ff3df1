/**
 * Routers: which attention-DP rank a request is placed on when it reaches the scheduler
 * (after tokenization). Ranks are numbered within a pool: worker x ranks per worker + rank in
 * worker. A router is chosen once per pool (`createRouter`); it hears of each request's prefill end and
 * departure (`RequestLifecycle`) so that it can keep its own view of each rank's load, as a
 * router in front of real engines does.
 *
 * `least_loaded` and `kv_aware` compare every rank and break ties by candidate order: first
 * rank of each replica in replica order, then the second rank of each, and so on, so that
 * equal ranks are spread over replicas before a replica gets a second request.
 */
import type { EngineRank, RequestLifecycle } from './engine-rank.js';
import type { RequestTable } from './request-table.js';
import type { PrefixKeySpec, ResolvedPool } from './run.js';

export interface Router extends RequestLifecycle {
  /** The rank request `id` is placed on. */
  route(id: number): number;
}

/** Replicas in turn, in the order requests reach the scheduler; within a replica, its ranks in turn. */
export class RoundRobinRouter implements Router {
  readonly listens = false;
  private nextWorker = 0;
  private readonly nextRank: Int32Array;

  constructor(
    private readonly replicas: number,
    private readonly ranksPerWorker: number,
  ) {
    this.nextRank = new Int32Array(replicas);
  }

  route(): number {
    const worker = this.nextWorker;
    this.nextWorker = worker + 1 === this.replicas ? 0 : worker + 1;
    const ranks = this.ranksPerWorker;
    const k = this.nextRank[worker];
    this.nextRank[worker] = k + 1 === ranks ? 0 : k + 1;
    return worker * ranks + k;
  }

  prefillDone(): void {}

  finished(): void {}
}

/** Candidate order: rank k of every replica before rank k + 1 of any. */
function candidateOrder(replicas: number, ranksPerWorker: number): Int32Array {
  const order = new Int32Array(replicas * ranksPerWorker);
  for (let c = 0; c < order.length; c++) order[c] = (c % replicas) * ranksPerWorker + Math.floor(c / replicas);
  return order;
}

/**
 * The rank with the fewest requests on it: waiting plus running (routed there and not yet
 * finished), plus, on a decode pool, those whose KV is on its way there.
 */
export class LeastLoadedRouter implements Router {
  readonly listens = false;
  private readonly order: Int32Array;

  constructor(
    private readonly ranks: readonly EngineRank[],
    replicas: number,
    ranksPerWorker: number,
  ) {
    this.order = candidateOrder(replicas, ranksPerWorker);
  }

  route(): number {
    const order = this.order;
    let best = order[0];
    let bestLoad = Infinity;
    for (let c = 0; c < order.length; c++) {
      const rank = this.ranks[order[c]];
      const load = rank.waiting.size + rank.runningCount + rank.incoming;
      if (load < bestLoad) {
        bestLoad = load;
        best = order[c];
      }
    }
    return best;
  }

  prefillDone(): void {}

  finished(): void {}
}

/**
 * Dynamo's KV router cost (ai-dynamo/dynamo, lib/llm/src/kv_router/scheduler.rs,
 * `DefaultWorkerSelector`, at commit db19bd2a): for each rank,
 *
 *   cost = overlap_score_weight x prefill_blocks + decode_blocks
 *   prefill_blocks = (active prefill tokens + prompt - cached prefix blocks x block_size) / block_size
 *   decode_blocks  = active blocks + the request's prompt blocks not among them
 *
 * and the lowest cost wins (router temperature 0). Active prefill tokens: over the requests
 * routed to the rank whose first token is not out yet, the prompt tokens each did not find
 * cached there when it was routed. Active blocks: the distinct full prompt blocks of the
 * requests routed to the rank and not yet finished. The cached prefix is the rank's prefix
 * cache as it is (Dynamo learns it from the engines' KV events). Ties: the rank with fewer
 * cached blocks (Dynamo's smaller tree), then candidate order.
 */
export class KvAwareRouter implements Router {
  readonly listens = true;
  private readonly order: Int32Array;
  private readonly rankCount: number;
  private readonly prefillTokens: Float64Array;
  private readonly activeBlocks: Float64Array;
  /**
   * For trace keys: how many active requests hold each trace-block group, per rank, group-major
   * (group g's counts at g x ranks .. + ranks), so one request's groups are read once for all ranks.
   */
  private readonly groupRefs: Int32Array | null;
  private readonly trace: Extract<PrefixKeySpec, { kind: 'trace' }> | null;
  /** Per request: its prompt tokens counted in its rank's active prefill tokens (-1 once counted out). */
  private newTokens = new Float64Array(1024);
  /** Per rank, for the request being routed: its new tokens and its prompt blocks no active request holds. */
  private readonly candidateNewTokens: Float64Array;
  private readonly candidateNewBlocks: Float64Array;
  /** The request being routed or finished: its full prompt blocks per trace block. */
  private groupBlocks = new Int32Array(64);

  constructor(
    private readonly ranks: readonly EngineRank[],
    private readonly table: RequestTable,
    replicas: number,
    ranksPerWorker: number,
    private readonly blockSize: number,
    private readonly overlapWeight: number,
    keys: PrefixKeySpec | null,
  ) {
    this.order = candidateOrder(replicas, ranksPerWorker);
    const n = replicas * ranksPerWorker;
    this.rankCount = n;
    this.prefillTokens = new Float64Array(n);
    this.activeBlocks = new Float64Array(n);
    this.candidateNewTokens = new Float64Array(n);
    this.candidateNewBlocks = new Float64Array(n);
    const trace = keys !== null && keys.kind === 'trace' ? keys : null;
    this.trace = trace;
    this.groupRefs = trace === null ? null : new Int32Array(trace.groupCount * n);
  }

  route(id: number): number {
    const prompt = this.table.prompt[id];
    const b = this.blockSize;
    const order = this.order;
    this.countNewBlocks(id, prompt);
    let best = order[0];
    let bestCost = Infinity;
    let bestCached = Infinity;
    for (let c = 0; c < order.length; c++) {
      const r = order[c];
      const store = this.ranks[r].store;
      const newTokens = prompt - store.cachedPrefix(id, prompt);
      this.candidateNewTokens[r] = newTokens;
      const cost = this.overlapWeight * ((this.prefillTokens[r] + newTokens) / b) + this.activeBlocks[r] + this.candidateNewBlocks[r];
      if (cost < bestCost || (cost === bestCost && store.cachedBlocks < bestCached)) {
        best = r;
        bestCost = cost;
        bestCached = store.cachedBlocks;
      }
    }
    if (id >= this.newTokens.length) {
      const grown = new Float64Array(Math.max(id + 1, this.newTokens.length * 2));
      grown.set(this.newTokens);
      this.newTokens = grown;
    }
    const newTokens = this.candidateNewTokens[best];
    this.newTokens[id] = newTokens;
    this.prefillTokens[best] += newTokens;
    this.holdBlocks(best, id, prompt, 1);
    return best;
  }

  prefillDone(rank: number, id: number): void {
    const tokens = this.newTokens[id];
    if (tokens < 0) return;
    this.prefillTokens[rank] -= tokens;
    this.newTokens[id] = -1;
  }

  finished(rank: number, id: number): void {
    this.prefillDone(rank, id);
    const prompt = this.table.prompt[id];
    if (this.trace !== null) this.countGroupBlocks(id, prompt);
    this.holdBlocks(rank, id, prompt, -1);
  }

  /** Full engine blocks of request `id`'s prompt per trace block, into `groupBlocks`; returns the trace blocks. */
  private countGroupBlocks(id: number, prompt: number): number {
    const { rowOffsets, traceBlockTokens } = this.trace as NonNullable<KvAwareRouter['trace']>;
    const blocks = rowOffsets[id + 1] - rowOffsets[id];
    if (blocks > this.groupBlocks.length) this.groupBlocks = new Int32Array(Math.max(blocks, this.groupBlocks.length * 2));
    const b = this.blockSize;
    // Blocks whose last token falls in trace block k: those ending in (k B, min((k + 1) B, prompt)].
    let before = 0;
    for (let k = 0; k < blocks; k++) {
      const end = Math.floor(Math.min((k + 1) * traceBlockTokens, prompt) / b);
      this.groupBlocks[k] = end - before;
      before = end;
    }
    return blocks;
  }

  /** Per rank, request `id`'s full prompt blocks that no active request there holds, into `candidateNewBlocks`. */
  private countNewBlocks(id: number, prompt: number): void {
    const n = this.rankCount;
    const news = this.candidateNewBlocks;
    if (this.trace === null) {
      news.fill(Math.floor(prompt / this.blockSize));
      return;
    }
    news.fill(0);
    const blocks = this.countGroupBlocks(id, prompt);
    const refs = this.groupRefs as Int32Array;
    const groups = this.trace.groups;
    const first = this.trace.rowOffsets[id];
    const counts = this.groupBlocks;
    for (let k = 0; k < blocks; k++) {
      const base = groups[first + k] * n;
      for (let r = 0; r < n; r++) if (refs[base + r] === 0) news[r] += counts[k];
    }
  }

  /** Counts request `id`'s prompt blocks in (`sign` 1) or out of (-1) rank `r`'s active blocks (`groupBlocks` filled). */
  private holdBlocks(r: number, id: number, prompt: number, sign: 1 | -1): void {
    if (this.trace === null) {
      // Without trace keys, no two requests active at once share prompt blocks (a session's
      // turns follow one another), so the distinct count is a plain sum.
      this.activeBlocks[r] += sign * Math.floor(prompt / this.blockSize);
      return;
    }
    const n = this.rankCount;
    const refs = this.groupRefs as Int32Array;
    const groups = this.trace.groups;
    const first = this.trace.rowOffsets[id];
    const blocks = this.trace.rowOffsets[id + 1] - first;
    const counts = this.groupBlocks;
    for (let k = 0; k < blocks; k++) {
      const at = groups[first + k] * n + r;
      const before = refs[at];
      refs[at] = before + sign;
      if ((sign === 1 && before === 0) || (sign === -1 && before === 1)) this.activeBlocks[r] += sign * counts[k];
    }
  }
}

/** A pool's router; `ranks` (the pool's) may still be empty (it is read when requests are routed). */
export function createRouter(pool: ResolvedPool, ranks: readonly EngineRank[], table: RequestTable): Router {
  switch (pool.router.type) {
    case 'round_robin':
      return new RoundRobinRouter(pool.replicas, pool.ranksPerWorker);
    case 'least_loaded':
      return new LeastLoadedRouter(ranks, pool.replicas, pool.ranksPerWorker);
    case 'kv_aware':
      return new KvAwareRouter(
        ranks,
        table,
        pool.replicas,
        pool.ranksPerWorker,
        pool.kv.blockSize,
        pool.router.overlapScoreWeight,
        pool.kv.prefixCache,
      );
  }
}
