/**
 * Pool-thread entry (Piscina `filename`): runs one sweep point with the replay core and returns
 * its summary. Synchronous and pure (the point arrives resolved, its trace already read), so a
 * thread can be reused for the next point: the replay keeps no state between runs. This module is
 * loaded once per thread, so its runner, and whether it has primed, is the thread's own.
 */
import { replayPrepared } from '../replay-run.js';
import { createPointRunner, type PointTask, type PointTaskResult } from './point-task.js';

const runPoint = createPointRunner((config, run, opts) => replayPrepared(config, run, opts));

export default function poolTask(task: PointTask): PointTaskResult {
  return runPoint(task);
}
