/**
 * The one wrapper over Piscina that every pool of threads uses: the sweep's points
 * (`pool.ts`), the engine fit's starts and the physics fit's trajectory recordings
 * (`calibrate/`), the accuracy bench's disaggregated fits. A pool runs one task module (its
 * default export takes a task and returns a result) on a fixed number of threads; a task posted
 * while every thread is busy waits in Piscina's queue.
 *
 * Task modules are compiled JavaScript: `compiledModule` finds one of `src/` in `dist/src`, also
 * when the caller runs from the TypeScript sources (vitest) or from the bundled command line, so
 * build first (`npm run build`).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Piscina } from 'piscina';
import { packageRoot } from '../io/paths.js';

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

/** Threads of a pool when none are asked for: one per core. */
export function defaultPoolThreadCount(): number {
  return availableParallelism();
}

export interface WorkerPoolOptions {
  /** Absolute path of the task module (`compiledModule('calibrate/fit-task.js')` for one of src/). */
  filename: string;
  /** Threads; one per core when absent, at least 1. */
  threads?: number;
}

/** A pool of threads that run one task module; `Task` and `Result` cross threads by structured clone. */
export class WorkerPool<Task, Result> {
  readonly threads: number;
  readonly #piscina: Piscina<Task, Result>;
  #destroyed: Promise<void> | undefined;

  constructor(options: WorkerPoolOptions) {
    this.threads = Math.max(1, Math.floor(options.threads ?? defaultPoolThreadCount()));
    compileOnPoolThreads();
    this.#piscina = new Piscina<Task, Result>({
      filename: options.filename,
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: 60_000,
    });
    // A pool thread that dies with no task on it is reported here rather than thrown (a task's
    // own failure rejects its promise).
    this.#piscina.on('error', () => {});
  }

  /** Runs one task on a free thread; rejects with the task's error, or when `signal` aborts it (its thread is then replaced). */
  run(task: Task, signal?: AbortSignal): Promise<Result> {
    return this.#piscina.run(task, signal === undefined ? {} : { signal });
  }

  /** Stops the threads; a second call waits for the first. */
  destroy(): Promise<void> {
    this.#destroyed ??= this.#piscina.destroy();
    return this.#destroyed;
  }
}
