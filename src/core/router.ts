/**
 * Routers: which attention-DP rank a request is placed on when it reaches the scheduler
 * (after tokenization). Ranks are numbered worker x ranks per worker + rank in worker. A
 * router is chosen once per run (`createRouter`); it hears of each request's prefill end and
 * departure (`RequestLifecycle`) so that it can keep its own view of each rank's load, as a
 * router in front of real engines does.
 */
import type { RequestLifecycle } from './engine-rank.js';
import type { ResolvedRun } from './run.js';

export interface Router extends RequestLifecycle {
  /** The rank request `id` is placed on. */
  route(id: number): number;
}

/** Replicas in turn, in the order requests reach the scheduler; within a replica, its ranks in turn. */
export class RoundRobinRouter implements Router {
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

/** The run's router. */
export function createRouter(run: ResolvedRun): Router {
  switch (run.router.type) {
    case 'round_robin':
      return new RoundRobinRouter(run.replicas, run.ranksPerWorker);
  }
}
