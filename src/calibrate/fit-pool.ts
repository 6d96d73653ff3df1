/**
 * A Piscina pool of engine fits (one task = one fit, `fit-task.ts`), alongside the sweep pool
 * of single replays (`sweep/pool.ts`). The task module is the compiled
 * `dist/src/calibrate/fit-task.js`, also when this file runs from TypeScript sources (vitest):
 * build first (`npm run build`).
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { compileOnPoolThreads, compiledModule } from '../sweep/pool.js';
import type { EngineFitResult, EngineFitTask } from './engine-fit.js';

export class FitPool {
  readonly threads: number;
  readonly #piscina: Piscina<EngineFitTask, EngineFitResult>;

  constructor(threads: number = availableParallelism()) {
    this.threads = Math.max(1, Math.floor(threads));
    compileOnPoolThreads();
    this.#piscina = new Piscina<EngineFitTask, EngineFitResult>({
      filename: compiledModule('calibrate/fit-task.js'),
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: 60_000,
    });
  }

  run(task: EngineFitTask): Promise<EngineFitResult> {
    return this.#piscina.run(task);
  }

  async destroy(): Promise<void> {
    await this.#piscina.destroy();
  }
}
