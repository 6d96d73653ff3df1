/** bench/environment.ts: the commit and machine every bench writes with its figures. */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchEnvironment, describeEnvironment, ownCommit, startupEnvironment } from '../bench/environment.js';

const repo = mkdtempSync(join(tmpdir(), 'servesim-bench-env-'));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

function git(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' }).trim();
}

describe('the bench environment', () => {
  git('init', '-q');
  writeFileSync(join(repo, 'a.txt'), 'one\n');
  git('add', 'a.txt');
  git('commit', '-q', '-m', 'first');
  const head = git('rev-parse', 'HEAD');
  mkdirSync(join(repo, 'node_modules', 'servesim'), { recursive: true });

  it('names the commit of the checkout, and says when tracked files changed', () => {
    const clean = benchEnvironment(repo);
    expect(clean.commit).toBe(head);
    expect(clean.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(clean.uncommitted_changes).toBe(false);
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    const dirty = benchEnvironment(repo);
    expect(dirty.uncommitted_changes).toBe(true);
    expect(describeEnvironment(dirty)).toContain(`commit ${head.slice(0, 12)} (uncommitted changes)`);
    git('checkout', '-q', 'a.txt');
  });

  it('names no commit for a copy installed inside another repository', () => {
    expect(ownCommit(join(repo, 'node_modules', 'servesim'))).toBeNull();
    expect(benchEnvironment(join(repo, 'node_modules', 'servesim')).commit).toBeNull();
    expect(benchEnvironment(tmpdir()).commit).toBeNull();
  });

  it('describes the machine', () => {
    const env = benchEnvironment(repo);
    expect(env.node).toBe(process.version);
    expect(env.cores).toBe(availableParallelism());
    expect(env.cpu_model.length).toBeGreaterThan(0);
    expect(env.memory_gib).toBeGreaterThan(0);
    expect(Number.isFinite(env.load_average_1min)).toBe(true);
    expect(Date.parse(env.started_at)).not.toBeNaN();
  });

  it('times start-ups without the extra certificates Node.js would read at every start', () => {
    // Node.js reads the file NODE_EXTRA_CA_CERTS names when it starts (and warns when it cannot).
    const given = { ...process.env, NODE_EXTRA_CA_CERTS: join(repo, 'no-such-bundle.pem') };
    const start = (env: NodeJS.ProcessEnv) => spawnSync(process.execPath, ['-e', '0'], { env, encoding: 'utf8' }).stderr;
    expect(start(given)).toContain('no-such-bundle.pem');
    const { env, unset } = startupEnvironment(given);
    expect(unset).toEqual(['NODE_EXTRA_CA_CERTS']);
    expect(env.NODE_EXTRA_CA_CERTS).toBeUndefined();
    expect(env.PATH).toBe(process.env.PATH);
    expect(start(env)).toBe('');
    expect(given.NODE_EXTRA_CA_CERTS).toBe(join(repo, 'no-such-bundle.pem'));
    expect(startupEnvironment({ PATH: '/bin' })).toEqual({ env: { PATH: '/bin' }, unset: [] });
  });
});
