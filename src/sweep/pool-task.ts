/**
 * Pool-thread entry (Piscina `filename`): runs one sweep point with the replay core and returns
 * its summary. Synchronous and pure apart from reading a trace file, so a thread can be reused for
 * the next point: the replay keeps no state between runs.
 *
 * When the pool passes primer runs (`workerData.primer`, see jit-primer.ts), the thread replays
 * them once as it loads, before its first point.
 */
import { workerData } from 'node:worker_threads';
import type { RunConfig } from '../config/types.js';
import { replay } from '../replay.js';
import { runPointTask, type PointTask, type PointTaskResult } from './point-task.js';

// Piscina hands its `workerData` option to each thread as the Worker's own.
const primer = (workerData as { primer?: RunConfig[] } | null | undefined)?.primer ?? [];
for (const config of primer) {
  try {
    replay(config, { baseDir: '.' });
  } catch {
    // A primer run only warms the JIT; each point reports its own errors.
  }
}

export default function poolTask(task: PointTask): PointTaskResult {
  return runPointTask(task, (config, opts) => replay(config, opts));
}
