/**
 * The package as a user installs it: `import ... from 'servesim'` gives the public API of
 * docs/api.md with its types, and the `servesim` command without its compiled files says how to
 * build them instead of failing with a stack.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

/** A project folder with servesim installed in its node_modules (a link to this package). */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'servesim-user-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'servesim'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{"type": "module", "private": true}\n');
  return dir;
}

describe('the servesim package', () => {
  it('is imported by name and replays a config as the command does', () => {
    const dir = project();
    const config = join(ROOT, 'sweeps', 'configs', 'qwen3-32b-h100-tp2.yaml');
    writeFileSync(
      join(dir, 'use.js'),
      `import * as servesim from 'servesim';\n` +
        `const { config, baseDir } = servesim.loadRunConfig(${JSON.stringify(config)}, ['traffic.load.concurrency=8']);\n` +
        `const { summary } = servesim.replay(config, { baseDir });\n` +
        `console.log(JSON.stringify({ names: Object.keys(servesim).sort(), summary }));\n`,
    );
    const run = spawnSync(process.execPath, ['use.js'], { cwd: dir, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const { names, summary } = JSON.parse(run.stdout) as { names: string[]; summary: { simulator: Record<string, unknown> } };
    for (const name of [
      'loadRunConfig',
      'replay',
      'runSweep',
      'mergeSweeps',
      'runScore',
      'runEngineCalibration',
      'calibrateEngine',
      'runDetokenizationFit',
      'runResponseOverheadFit',
      'runPassTimeFit',
      'runConfigJsonSchema',
    ]) {
      expect(names).toContain(name);
    }
    const cli = spawnSync(process.execPath, [CLI, 'replay', config, '--set', 'traffic.load.concurrency=8', '--json'], { encoding: 'utf8' });
    const fromCli = JSON.parse(cli.stdout) as { simulator: Record<string, unknown> };
    // The same replay, byte for byte, but for the two wall-clock fields.
    for (const side of [summary, fromCli]) {
      delete side.simulator.wall_time_ms;
      delete side.simulator.us_per_output_token;
    }
    expect(summary).toEqual(fromCli);
  });

  it('has a servesim command, as npm links it, that prints what the compiled command line prints', () => {
    const dir = project();
    mkdirSync(join(dir, 'node_modules', '.bin'));
    symlinkSync(join('..', 'servesim', 'bin', 'servesim.js'), join(dir, 'node_modules', '.bin', 'servesim'));
    const config = join(ROOT, 'sweeps', 'configs', 'qwen3-32b-h100-tp2.yaml');
    for (const args of [
      ['replay', config, '--set', 'traffic.stop={requests: 1}', '--json'],
      ['replay', config, '--set', 'traffic.stop={requests: 0}'],
      ['replay', config, '--set=traffic.stop={requests: 1}', '--json'],
      ['--help'],
    ]) {
      const command = spawnSync(process.execPath, [join(dir, 'node_modules', '.bin', 'servesim'), ...args], { cwd: dir, encoding: 'utf8' });
      const compiled = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });
      const timeless = (text: string) => text.replace(/"(wall_time_ms|us_per_output_token)": [\d.e+-]+/g, '"$1": 0');
      expect(command.stderr).toBe(compiled.stderr);
      expect(timeless(command.stdout)).toBe(timeless(compiled.stdout));
      expect(command.status).toBe(compiled.status);
    }
  });

  it('gives TypeScript the types of the API and of run configs', () => {
    const dir = project();
    writeFileSync(
      join(dir, 'use.ts'),
      `import { loadRunConfig, replay, type RunConfig, type ReplaySummary } from 'servesim';\n` +
        `const loaded = loadRunConfig('run.yaml');\n` +
        `const config: RunConfig = loaded.config;\n` +
        `const summary: ReplaySummary = replay(config, { baseDir: loaded.baseDir }).summary;\n` +
        `const ttft: number | undefined = summary.metrics.time_to_first_token?.avg;\n` +
        `// @ts-expect-error: a run config has no such block\n` +
        `const wrong = config.gpus;\n` +
        `export { ttft, wrong };\n`,
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const run = spawnSync(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--skipLibCheck',
        'use.ts',
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 60_000);

  it('says how to build when the compiled files are missing (npm ci --ignore-scripts)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-unbuilt-'));
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'scripts'));
    copyFileSync(join(ROOT, 'bin', 'servesim.js'), join(dir, 'bin', 'servesim.js'));
    copyFileSync(join(ROOT, 'bin', 'package.json'), join(dir, 'bin', 'package.json'));
    copyFileSync(join(ROOT, 'scripts', 'check-built.mjs'), join(dir, 'scripts', 'check-built.mjs'));
    writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
    for (const args of [
      ['bin/servesim.js', 'replay', 'x.yaml'],
      ['scripts/check-built.mjs', 'dist/bench/replay-bench.js'],
    ]) {
      const run = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8' });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('npm run build');
      expect(run.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|at .*:\d+:\d+/);
    }
  });
});
