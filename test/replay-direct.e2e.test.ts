/**
 * The built command line sends a plain replay line straight to the replay command
 * (src/cli/replay-arguments.ts) and every other line through yargs: the two paths print the same
 * bytes and exit with the same status. `--no-aiperf` (what a plain line means already) sends a
 * line through yargs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const CONFIG = join(ROOT, 'sweeps', 'configs', 'qwen3-32b-h100-tp2.yaml');

/** The command's status and output, without the line of the host's own timing (it differs run to run). */
function servesim(cwd: string, args: string[]) {
  const run = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });
  const stdout = run.stdout
    .split('\n')
    .filter((line) => !line.startsWith('simulated '))
    .join('\n')
    .replace(/"(wall_time_ms|us_per_output_token)": [\d.e+-]+/g, '"$1": 0');
  return { status: run.status, stdout, stderr: run.stderr };
}

describe('a plain replay line, straight to the replay command or through yargs', () => {
  it('prints the same and exits the same, for a good config and for bad ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-direct-'));
    try {
      writeFileSync(join(dir, 'bad.yaml'), 'engine:\n  workers:\n    aggregated:\n      parallelism: {tensor: 0}\n');
      writeFileSync(join(dir, 'broken.yaml'), 'engine: [\n');
      const lines = [
        [CONFIG, '--set', 'traffic.stop={requests: 1}'],
        [CONFIG, '--set', 'traffic.stop={requests: 2}', '--json'],
        [CONFIG, '--set', 'traffic.stop={requests: 1}', '--set', 'engine.workers.aggregated.parallelism.tensor=0'],
        [CONFIG, '--set', 'traffic.stop={requests: 1}', '--set', 'no.such.key=1'],
        ['bad.yaml'],
        ['broken.yaml'],
        ['missing.yaml'],
      ];
      for (const line of lines) {
        const direct = servesim(dir, ['replay', ...line]);
        expect(servesim(dir, ['replay', ...line, '--no-aiperf']), line.join(' ')).toEqual(direct);
      }
      expect(servesim(dir, ['replay', CONFIG, '--set', 'traffic.stop={requests: 1}']).status).toBe(0);
      expect(servesim(dir, ['replay', 'bad.yaml'])).toMatchObject({ status: 2, stdout: '' });
      expect(servesim(dir, ['replay', 'bad.yaml']).stderr).toMatch(/^error: bad\.yaml: engine\.workers\.aggregated\.parallelism\.tensor: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes the same files with --out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-direct-'));
    try {
      const args = ['replay', CONFIG, '--set', 'traffic.stop={requests: 3}', '--per-request', '--out'];
      const direct = servesim(dir, [...args, 'direct']);
      const viaYargs = servesim(dir, [...args, 'yargs', '--no-aiperf']);
      expect(direct.status).toBe(0);
      expect(viaYargs.stdout).toBe(direct.stdout.replace('direct/', 'yargs/').replace('direct/', 'yargs/'));
      expect(readdirSync(join(dir, 'direct')).sort()).toEqual(['requests.jsonl', 'summary.json']);
      for (const file of ['requests.jsonl', 'summary.json']) {
        const strip = (text: string) => text.replace(/"(wall_time_ms|us_per_output_token)": [\d.e+-]+/g, '');
        expect(strip(readFileSync(join(dir, 'yargs', file), 'utf8'))).toBe(strip(readFileSync(join(dir, 'direct', file), 'utf8')));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends without an error when nobody reads its output any more, on both paths', async () => {
    for (const args of [
      ['replay', CONFIG, '--set', 'traffic.stop={requests: 1}'],
      ['replay', CONFIG, '--set=traffic.stop={requests: 1}', '--json'],
    ]) {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      // The reader goes before the command writes (it starts in tens of milliseconds).
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const status = await new Promise<number | null>((done) => child.on('close', (code) => done(code)));
      expect({ args: args.join(' '), status, stderr }).toEqual({ args: args.join(' '), status: 0, stderr: '' });
    }
  });
});
