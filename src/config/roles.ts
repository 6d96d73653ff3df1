/**
 * The worker roles of an engine config (`engine.workers`): the one place that knows how a
 * role's block is spelled and where it sits. Each role becomes one pool of the run description
 * (`ResolvedRun.pools`, in `WORKER_ROLES` order); everything else reads a role's block, its
 * dotted path (for messages and `--set`) or the list of roles through the functions here.
 *
 * An engine has either `aggregated` workers (each prefills and decodes) or a `prefill` and a
 * `decode` pool (disaggregated serving, with `engine.kv_transfer` between them).
 */
import type { ResolvedPool, ResolvedRun } from '../core/run.js';
import type { WorkerRoleConfig } from './types.js';

/** The roles an engine config can have, in pool order. */
export const WORKER_ROLES = ['aggregated', 'prefill', 'decode'] as const;
export type WorkerRoleName = (typeof WORKER_ROLES)[number];

/** Worker roles of a disaggregated deployment, in pool order. */
export const DISAGGREGATED_ROLES = ['prefill', 'decode'] as const;

/** Where the roles' blocks are: `engine.workers` of a config, whether or not its defaults are filled yet. */
interface WorkersOf<R> {
  workers: Partial<Record<WorkerRoleName, R>>;
}

/** One role of a config: its name, the dotted path of its block, and the block. */
export interface WorkerRole<R = WorkerRoleConfig> {
  name: WorkerRoleName;
  path: string;
  config: R;
}

/** The dotted path of role `name`'s block, as messages and `--set` write it: `engine.workers.aggregated`. */
export function rolePath(name: WorkerRoleName): string {
  return `engine.workers.${name}`;
}

/** The block of role `name`, which the config must have (the loader fills `aggregated` when no role is written). */
export function roleOf<R>(engine: WorkersOf<R>, name: WorkerRoleName): R {
  const role = engine.workers[name];
  if (role === undefined) throw new Error(`${rolePath(name)} is absent`);
  return role;
}

/** Whether the config has prefill and decode workers. */
export function isDisaggregated<R>(engine: WorkersOf<R>): boolean {
  return engine.workers.prefill !== undefined || engine.workers.decode !== undefined;
}

/** The role requests enter (the first in pool order: aggregated, or prefill). */
export function entryRole<R>(engine: WorkersOf<R>): WorkerRole<R> {
  const roles = workerRoles(engine);
  if (roles.length === 0) throw new Error('engine.workers has no role');
  return roles[0];
}

/** Every role the config has, in pool order. */
export function workerRoles<R>(engine: WorkersOf<R>): WorkerRole<R>[] {
  const roles: WorkerRole<R>[] = [];
  for (const name of WORKER_ROLES) {
    const config = engine.workers[name];
    if (config !== undefined) roles.push({ name, path: rolePath(name), config });
  }
  return roles;
}

/** A copy of `config` whose role `name` has the block `role`; nothing else is copied. */
export function withRoleConfig<C extends { engine: { workers: object } }, R>(config: C, name: WorkerRoleName, role: R): C {
  return { ...config, engine: { ...config.engine, workers: { ...config.engine.workers, [name]: role } } };
}

/** The pool of role `name` in a run description (`resolveRun` builds one pool per role the config has). */
export function poolOf(run: ResolvedRun, name: WorkerRoleName): ResolvedPool {
  const pool = run.pools.find((p) => p.role === name);
  if (pool === undefined) throw new Error(`the run has no ${name} pool`);
  return pool;
}
