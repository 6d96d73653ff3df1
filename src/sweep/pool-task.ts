/**
 * Pool-thread entry (Piscina `filename`): runs one sweep point with the replay core and returns
 * its summary. Synchronous and pure (the point arrives resolved, its trace already read), so a
 * thread can be reused for the next point: the replay keeps no state between runs.
 */
import { replayPrepared } from '../replay-run.js';
import { runPointTask, type PointTask, type PointTaskResult } from './point-task.js';

export default function poolTask(task: PointTask): PointTaskResult {
  return runPointTask(task, (config, run, opts) => replayPrepared(config, run, opts));
}
