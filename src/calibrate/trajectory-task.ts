/**
 * Pool-thread entry (Piscina `filename`) of trajectory recordings for the physics and catalog fits
 * (`trajectory.ts`): a config, resolved in the thread, or a run already resolved (a fit's point
 * with its timing swapped: `timing-swap.ts`).
 */
import type { RunConfig } from '../config/types.js';
import type { ResolvedRun } from '../core/run.js';
import { recordRunTrajectory, recordTrajectory, type Trajectory } from './trajectory.js';

export type TrajectoryTask = { config: RunConfig } | { run: ResolvedRun };

export default function trajectoryTask(task: TrajectoryTask): Trajectory {
  return 'run' in task ? recordRunTrajectory(task.run) : recordTrajectory(task.config);
}
