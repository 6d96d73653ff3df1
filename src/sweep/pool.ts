/**
 * The pool of threads that run sweep points (Piscina). Each point is one task; the outcome of a
 * task is always one of ok / failed (the point threw, or its pool thread died) / timeout (past
 * `--point-timeout`: its pool thread is terminated and Piscina starts a fresh one) / stopped (the
 * sweep was interrupted before the point finished; nothing is recorded for it).
 *
 * The task module is the compiled `dist/src/sweep/pool-task.js`, also when this file runs from
 * TypeScript sources (vitest): build first (`npm run build`).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Piscina } from 'piscina';
import { packageRoot } from '../io/paths.js';
import type { PointTask, PointTaskResult } from './point-task.js';

/**
 * Where a compiled module of the pool threads is (`path` relative to `src/`, e.g.
 * `sweep/pool-task.js`): in dist/src, also when this file runs from the TypeScript sources or
 * from the bundled command line.
 */
export function compiledModule(path: string): string {
  const file = resolve(packageRoot(), 'dist', 'src', path);
  if (!existsSync(file)) throw new Error(`the compiled module ${file} is missing; run \`npm run build\` first`);
  return file;
}

/** The compiled pool-task module. */
export function defaultPoolTaskFilename(): string {
  return compiledModule('sweep/pool-task.js');
}

/**
 * A pool keeps every core busy with its threads, so V8's background compiler threads would wait
 * for a core while the pool threads run unoptimized code (each pool thread is its own isolate and
 * optimizes the replay core afresh, and again as points' configs shift its type feedback). Pool
 * threads compile optimized code themselves instead: `--no-concurrent-recompilation`, a
 * process-wide V8 flag that an isolate reads when it is created, so it is set before a pool starts
 * its threads and leaves the main thread's isolate as it was. Measured by `npm run bench:sweep`.
 */
export function compileOnPoolThreads(): void {
  setFlagsFromString('--no-concurrent-recompilation');
}

export function defaultPoolThreadCount(): number {
  return availableParallelism();
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
  readonly #piscina: Piscina<PointTask, PointTaskResult>;
  readonly #timeoutMs: number | undefined;
  readonly #running = new Set<AbortController>();
  #stopping = false;
  #destroyed: Promise<void> | undefined;

  constructor(options: PointPoolOptions) {
    this.poolThreads = Math.max(1, Math.floor(options.poolThreads));
    this.#timeoutMs = options.pointTimeoutS === undefined ? undefined : options.pointTimeoutS * 1000;
    compileOnPoolThreads();
    this.#piscina = new Piscina<PointTask, PointTaskResult>({
      filename: options.taskFilename ?? defaultPoolTaskFilename(),
      minThreads: this.poolThreads,
      maxThreads: this.poolThreads,
      idleTimeout: 60_000,
    });
    // A pool thread that dies with no task on it is reported here rather than thrown.
    this.#piscina.on('error', () => {});
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
      const result = await this.#piscina.run(task, { signal: controller.signal });
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
    this.#destroyed ??= this.#piscina.destroy();
    return this.#destroyed;
  }
}
