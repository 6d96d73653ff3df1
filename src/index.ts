/**
 * servesim's public API: what `import ... from 'servesim'` gives (docs/api.md). The same
 * functions the `servesim` command runs, one per job: load a run config and replay it, run a
 * sweep, plan capacity, fit constants, score simulated points against measured ones. Everything else in the
 * package is internal and may change between versions.
 */

// Run configs: load (YAML or an object, with --set overrides), validate, describe.
export { loadRunConfig, loadRunConfigFromObject, parseRunConfig, type LoadedRunConfig } from './config/load.js';
export { runConfigJsonSchema } from './config/json-schema.js';
export { ConfigError, InputError, type ConfigIssue } from './config/errors.js';
export { OutputError } from './io/write-output.js';
export type * from './config/types.js';

// One replay.
export { replay, type ReplayOptions, type ReplayResult } from './replay.js';
export type {
  MetricStats,
  MetricTag,
  ReplaySummary,
  RequestRecord,
  RequestStatus,
  RunStats,
  SimulatorStats,
  TtftStages,
} from './core/report-types.js';
export { writeAiperfArtifacts, aiperfFolderName } from './io/write-aiperf-artifacts.js';

// Measured AIPerf runs, in every export layout (docs/aiperf-files.md).
export { findAiperfRunDirs, readAiperfRun, summarizeAiperfRecords, type AiperfRun, type ReadAiperfRunOptions } from './io/read-aiperf.js';

// Sweeps.
export { runSweep, type RunSweepOptions, type RunSweepResult, type FailedPoint } from './sweep/run-sweep.js';
export { mergeSweeps, type MergeOptions, type MergeResult } from './sweep/merge.js';

// Capacity plans.
export { runPlan, type RunPlanOptions, type RunPlanResult } from './plan/run-plan.js';
export type { PlanJson, PlanCounts } from './plan/plan-output.js';
export type { BestDeployment, CandidateRow } from './plan/plan-result.js';

// Calibration.
export {
  runDetokenizationFit,
  runPassTimeFit,
  runResponseOverheadFit,
  type DirectFitCommon,
  type DirectFitOutcome,
} from './calibrate/direct-fits.js';
export { fitJson, type FitReport } from './calibrate/fit-output.js';
export type { LinearFit, FittedCoefficient } from './calibrate/fit-linear.js';
export { runEngineCalibration, type EngineCommandOptions, type EngineCommandOutcome } from './calibrate/engine-command.js';
export { calibrateEngine, type EngineCalibration, type EngineCalibrationInput } from './calibrate/engine-calibration.js';

// Scoring.
export { runScore, type ScoreOptions, type ScoreOutcome } from './score/run-score.js';
export type { ScoreResult, MetricSummary, PointScoreJson, ScoreCurves, CurvePoint, LimitCheck } from './score/score-result.js';
export { readMeasuredPoints, readSimPoints } from './score/score-inputs.js';

// The whole workflow on the shipped data (`npm start`).
export { runQuickstart, type QuickstartOptions, type QuickstartOutcome } from './workflow/quickstart.js';
