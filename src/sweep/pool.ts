/**
 * The pool of threads that run sweep points (Piscina). Each point is one task; the outcome of a
 * task is always one of ok / failed (the point threw, or its pool thread died) / timeout (past
 * `--point-timeout`: its pool thread is terminated and Piscina starts a fresh one) / stopped (the
 * sweep was interrupted before the point finished; nothing is recorded for it).
 *
 * The task module is the compiled `dist/src/sweep/pool-task.js`, also when this file runs from
 * TypeScript sources (vitest): build first (`npm run build`). The threads are a `WorkerPool`
 * (`worker-pool.ts`); this adds the outcomes, the per-point timeout and the stop.
 */
import type { PointTask, PointTaskResult } from './point-task.js';
import { compiledModule, WorkerPool } from './worker-pool.js';

export { defaultPoolThreadCount } from './worker-pool.js';

/** The compiled pool-task module. */
export function defaultPoolTaskFilename(): string {
  return compiledModule('sweep/pool-task.js');
}

export type PointOutcome =
  | { status: 'ok'; result: PointTaskResult; wallMs: number }
  | { status: 'failed'; error: string; wallMs: number }
  | { status: 'timeout'; error: string; wallMs: number }
  | { status: 'stopped'; wallMs: number };

export interface PointPoolOptions {
  poolThreads: number;
  /** Module whose default export runs one point; the shipped pool task by default. */
  taskFilename?: string;
  /** Per-point limit in seconds; none when undefined. */
  pointTimeoutS?: number;
}

/** Text of a point's error (thrown in the main thread or crossed from a pool thread): its message, prefixed with its class when not plain Error. */
export function describeError(err: unknown): string {
  if (err instanceof Error || (err !== null && typeof err === 'object' && 'message' in err)) {
    const e = err as { name?: unknown; message?: unknown };
    const message = String(e.message);
    const exited = /^worker exited with code: (-?\d+)$/.exec(message);
    if (exited !== null) return `pool thread exited with code ${exited[1]}`;
    const name = typeof e.name === 'string' ? e.name : 'Error';
    return name === 'Error' ? message : `${name}: ${message}`;
  }
  return String(err);
}

export class PointPool {
  readonly poolThreads: number;
  readonly #threads: WorkerPool<PointTask, PointTaskResult>;
  readonly #timeoutMs: number | undefined;
  readonly #running = new Set<AbortController>();
  #stopping = false;

  constructor(options: PointPoolOptions) {
    this.#timeoutMs = options.pointTimeoutS === undefined ? undefined : options.pointTimeoutS * 1000;
    this.#threads = new WorkerPool({ filename: options.taskFilename ?? defaultPoolTaskFilename(), threads: options.poolThreads });
    this.poolThreads = this.#threads.threads;
  }

  /** Runs one point; never rejects. */
  async run(task: PointTask): Promise<PointOutcome> {
    const started = performance.now();
    const wallMs = () => performance.now() - started;
    if (this.#stopping) return { status: 'stopped', wallMs: 0 };
    const controller = new AbortController();
    this.#running.add(controller);
    let timedOut = false;
    const timer =
      this.#timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            controller.abort('point timeout');
          }, this.#timeoutMs);
    try {
      const result = await this.#threads.run(task, controller.signal);
      return { status: 'ok', result, wallMs: wallMs() };
    } catch (err) {
      if (timedOut) {
        return { status: 'timeout', error: `timed out after ${this.#timeoutMs! / 1000} s (--point-timeout)`, wallMs: wallMs() };
      }
      if (this.#stopping) return { status: 'stopped', wallMs: wallMs() };
      return { status: 'failed', error: describeError(err), wallMs: wallMs() };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      this.#running.delete(controller);
    }
  }

  /** Stops every running point (their outcome is `stopped`) and refuses new ones. */
  stop(): void {
    this.#stopping = true;
    for (const controller of this.#running) controller.abort('sweep interrupted');
  }

  /** Stops the threads; a second call waits for the first. */
  destroy(): Promise<void> {
    return this.#threads.destroy();
  }
}
