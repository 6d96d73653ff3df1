/**
 * What a bench figure was measured on, written into every bench's JSON (`environment`) and
 * printed with its table, so that figures can be compared across commits and machines: the
 * commit (and whether the tree had uncommitted changes), Node.js, the CPU, the cores, the memory
 * and the load average when the bench started.
 */
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { packageRoot } from '../src/catalog/load.js';

export interface BenchEnvironment {
  /** `git rev-parse HEAD` of the checkout the bench ran from; null when servesim is not a git checkout (an installed package). */
  commit: string | null;
  /** Tracked files differed from the commit: the figures are not the commit's alone. */
  uncommitted_changes: boolean | null;
  node: string;
  platform: string;
  cpu_model: string;
  cores: number;
  memory_gib: number;
  load_average_1min: number;
  /** When the bench started (UTC, ISO 8601). */
  started_at: string;
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** HEAD of the git checkout at `root`; null when `root` is not the top of one (an installed copy inside another repository's node_modules). */
export function ownCommit(root: string): string | null {
  const top = git(root, ['rev-parse', '--show-toplevel']);
  if (top === null || realpathSync(top) !== realpathSync(root)) return null;
  return git(root, ['rev-parse', 'HEAD']);
}

export function benchEnvironment(root = packageRoot()): BenchEnvironment {
  const commit = ownCommit(root);
  const status = commit === null ? null : git(root, ['status', '--porcelain', '--untracked-files=no']);
  return {
    commit,
    uncommitted_changes: status === null ? null : status !== '',
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu_model: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    load_average_1min: Math.round(loadavg()[0] * 100) / 100,
    started_at: new Date().toISOString(),
  };
}

/** One line for a bench's text output: `commit 1a2b3c4d5e6f (uncommitted changes), node v20.19.0, 2 x AMD EPYC 7B13, 23.4 GiB, load 1.20`. */
export function describeEnvironment(env: BenchEnvironment): string {
  const commit =
    env.commit === null ? 'no git commit' : `commit ${env.commit.slice(0, 12)}${env.uncommitted_changes ? ' (uncommitted changes)' : ''}`;
  return `${commit}, node ${env.node}, ${env.cores} x ${env.cpu_model}, ${env.memory_gib} GiB, load ${env.load_average_1min.toFixed(2)}`;
}

/** `--json`: the bench's one JSON document goes to stdout, and its text to stderr. */
export const JSON_OUTPUT = process.argv.includes('--json');

/** Writes bench text: to stdout, or with `--json` to stderr so that stdout holds only the JSON. */
export function say(text: string): void {
  (JSON_OUTPUT ? process.stderr : process.stdout).write(text);
}

/**
 * Environment variables a bench's whole-process timings run without: Node.js reads the
 * certificates NODE_EXTRA_CA_CERTS names when it starts, whether or not the process makes a TLS
 * connection (servesim makes none). A system bundle of a few hundred certificates costs several
 * times what the rest of `node -e 0` does: a fixed cost added to every process timed, which pulls
 * a start-up's ratio to `node -e 0` towards 1 by an amount that depends on the machine's bundle,
 * not on servesim.
 */
export const STARTUP_UNSET = ['NODE_EXTRA_CA_CERTS'];

/** `env` without STARTUP_UNSET's variables, and the names of those it had. */
export function startupEnvironment(env: NodeJS.ProcessEnv = process.env): { env: NodeJS.ProcessEnv; unset: string[] } {
  const out = { ...env };
  for (const name of STARTUP_UNSET) delete out[name];
  return { env: out, unset: STARTUP_UNSET.filter((name) => env[name] !== undefined) };
}
