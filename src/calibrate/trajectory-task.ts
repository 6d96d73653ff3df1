/** Pool-thread entry (Piscina `filename`) of trajectory recordings for the catalog fit (`trajectory.ts`). */
import type { RunConfig } from '../config/types.js';
import { recordTrajectory, type Trajectory } from './trajectory.js';

export default function trajectoryTask(task: { config: RunConfig }): Trajectory {
  return recordTrajectory(task.config);
}
