/**
 * A vLLM request log replayed and compared with itself (docs/request-logs.md): the engine of its
 * meta.json, its requests at their queue times, and optionally a pass-time model built in memory
 * (`calibrate pass-time --profile DIR --log LOG`, `npm run bench:engine-runs`).
 */
import { loadVllmLogRunConfig } from '../config/vllm-log-config.js';
import type { ProfileTiming } from '../core/timing/timing-spec.js';
import { replay } from '../replay.js';
import { compareWithLog, type LogComparison } from '../score/log-compare.js';

export interface LogReplayOutcome {
  comparison: LogComparison;
  /** Passes the replay ran and its virtual end, ms. */
  passes: number;
  virtualEndMs: number;
}

/** Replays the log at `path` (its folder or requests.jsonl), with `profile` as its pass time when given. */
export function replayLog(path: string, options: { profile?: ProfileTiming; sets?: readonly string[] } = {}): LogReplayOutcome {
  const loaded = loadVllmLogRunConfig(path, options.sets ?? [], {
    timing: options.profile === undefined ? undefined : { type: 'profile', path: 'pass-time.json' },
  });
  const result = replay(loaded.config, {
    baseDir: loaded.baseDir,
    perRequest: true,
    label: loaded.file,
    profileTiming: options.profile,
  });
  return {
    comparison: compareWithLog(loaded.log, result.requests ?? []),
    passes: result.summary.simulator.passes,
    virtualEndMs: result.summary.simulator.virtual_end_ms,
  };
}
