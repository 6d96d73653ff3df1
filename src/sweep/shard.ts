/**
 * Slicing a plan over machines (docs/sweeps.md, "On a cluster"). Shard `i` of `n`
 * (0-based) takes the points whose plan index is `i` modulo `n`: disjoint, covering, stable, and
 * balanced when neighbouring points cost alike (a concurrency grid spreads over every shard).
 */

export interface Shard {
  /** 0-based. */
  index: number;
  count: number;
}

export class ShardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShardError';
  }
}

function parseNonNegativeInt(text: string, what: string): number {
  if (!/^\d+$/.test(text.trim())) throw new ShardError(`${what} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text.trim());
}

function checked(index: number, count: number, source: string): Shard {
  if (count < 1) throw new ShardError(`${source}: the shard count must be at least 1, got ${count}`);
  if (index >= count) {
    throw new ShardError(`${source}: shard index ${index} is out of range; indices are 0-based, 0..${count - 1}`);
  }
  return { index, count };
}

/** Parses `I/N` (0-based I). */
export function parseShard(text: string): Shard {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (match === null) throw new ShardError(`--shard: expected I/N (e.g. 0/4), "auto", got ${JSON.stringify(text)}`);
  return checked(Number(match[1]), Number(match[2]), '--shard');
}

/**
 * The shard from the environment, for `--shard auto` or a bare `--shard-count N`:
 * - Slurm job arrays: index = (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP
 *   (MIN 0 and STEP 1 when unset), count = SLURM_ARRAY_TASK_COUNT unless `countOverride` is given;
 * - Kubernetes Indexed Jobs: index = JOB_COMPLETION_INDEX, count = `countOverride` (required).
 */
export function shardFromEnv(env: NodeJS.ProcessEnv, countOverride?: number): Shard {
  const slurmId = env.SLURM_ARRAY_TASK_ID;
  if (slurmId !== undefined && slurmId !== '') {
    const id = parseNonNegativeInt(slurmId, 'SLURM_ARRAY_TASK_ID');
    const min = env.SLURM_ARRAY_TASK_MIN ? parseNonNegativeInt(env.SLURM_ARRAY_TASK_MIN, 'SLURM_ARRAY_TASK_MIN') : 0;
    const step = env.SLURM_ARRAY_TASK_STEP ? parseNonNegativeInt(env.SLURM_ARRAY_TASK_STEP, 'SLURM_ARRAY_TASK_STEP') : 1;
    if (id < min || step < 1 || (id - min) % step !== 0) {
      throw new ShardError(`SLURM_ARRAY_TASK_ID ${id} does not fit SLURM_ARRAY_TASK_MIN ${min} / STEP ${step}`);
    }
    let count = countOverride;
    if (count === undefined) {
      if (!env.SLURM_ARRAY_TASK_COUNT) {
        throw new ShardError('SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; give --shard-count N');
      }
      count = parseNonNegativeInt(env.SLURM_ARRAY_TASK_COUNT, 'SLURM_ARRAY_TASK_COUNT');
    }
    return checked((id - min) / step, count, 'Slurm array');
  }
  const k8sIndex = env.JOB_COMPLETION_INDEX;
  if (k8sIndex !== undefined && k8sIndex !== '') {
    if (countOverride === undefined) {
      throw new ShardError("JOB_COMPLETION_INDEX is set; give the number of shards with --shard-count N (the Job's completions)");
    }
    return checked(parseNonNegativeInt(k8sIndex, 'JOB_COMPLETION_INDEX'), countOverride, 'Indexed Job');
  }
  throw new ShardError(
    'no shard in the environment: expected SLURM_ARRAY_TASK_ID (Slurm job array) or JOB_COMPLETION_INDEX (Kubernetes Indexed Job)',
  );
}

/**
 * The shard to run from the command line: `--shard I/N`, `--shard auto` (environment), or
 * `--shard-count N` alone (environment index, given count). Undefined means the whole plan.
 */
export function resolveShard(shardArg: string | undefined, shardCount: number | undefined, env: NodeJS.ProcessEnv): Shard | undefined {
  if (shardArg === undefined || shardArg === '') {
    return shardCount === undefined ? undefined : shardFromEnv(env, shardCount);
  }
  if (shardArg.trim() === 'auto') return shardFromEnv(env, shardCount);
  const shard = parseShard(shardArg);
  if (shardCount !== undefined && shardCount !== shard.count) {
    throw new ShardError(`--shard ${shardArg} and --shard-count ${shardCount} disagree`);
  }
  return shard;
}

export function isInShard(planIndex: number, shard: Shard | undefined): boolean {
  return shard === undefined || planIndex % shard.count === shard.index;
}

export function formatShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}
