/**
 * Pool-thread entry (Piscina `filename`) of the engine fit: one task is one complete fit from
 * one start (`engine-fit.ts`), run synchronously in the thread. Several starts (or several
 * deployments, in the accuracy benchmark) run side by side on the pool's threads.
 */
import { fitEngine, type EngineFitResult, type EngineFitTask } from './engine-fit.js';

export default function fitTask(task: EngineFitTask): EngineFitResult {
  return fitEngine(task);
}
