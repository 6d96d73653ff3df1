/**
 * A Piscina pool of engine fits (one task = one fit, `fit-task.ts`), alongside the sweep pool
 * of single replays (`sweep/pool.ts`). The task module is the compiled
 * `dist/src/calibrate/fit-task.js`, also when this file runs from TypeScript sources (vitest):
 * build first (`npm run build`).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { compileOnPoolThreads } from '../sweep/pool.js';
import type { EngineFitResult, EngineFitTask } from './engine-fit.js';

export function compiledModule(name: string): string {
  const here = fileURLToPath(import.meta.url);
  const folder = dirname(here);
  const file = here.endsWith('.ts') ? resolve(folder, `../../dist/src/calibrate/${name}`) : resolve(folder, name);
  if (!existsSync(file)) throw new Error(`the compiled module ${file} is missing; run \`npm run build\` first`);
  return file;
}

export class FitPool {
  readonly threads: number;
  readonly #piscina: Piscina<EngineFitTask, EngineFitResult>;

  constructor(threads: number = availableParallelism()) {
    this.threads = Math.max(1, Math.floor(threads));
    compileOnPoolThreads();
    this.#piscina = new Piscina<EngineFitTask, EngineFitResult>({
      filename: compiledModule('fit-task.js'),
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
