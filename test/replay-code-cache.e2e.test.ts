/**
 * The built replay command runs its bundled file with the code cache the build wrote
 * (src/cli/code-cache.ts, scripts/bundle-cli.mjs): V8 takes that cache, and a replay prints the
 * same with it, without it, with a damaged one, and with one made before the file was edited (the
 * edited file is what runs). Run on copies of the built package, each in processes of their own.
 * A one-request replay also loads none of the Node.js modules it needs only for other work.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const CONFIG = join(ROOT, 'sweeps', 'configs', 'qwen3-32b-h100-tp2.yaml');

/**
 * A copy of the built package's command line, with its data files and node_modules linked. The
 * copied cache names the build's file, not the copy, so the copy's cache is written again as the
 * build writes it: after a replay.
 */
function builtCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'servesim-code-cache-'));
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  cpSync(join(ROOT, 'dist', 'src', 'cli'), join(dir, 'dist', 'src', 'cli'), { recursive: true });
  symlinkSync(join(ROOT, 'data'), join(dir, 'data'), 'dir');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  expect(replay(dir).cache).toBe('stale');
  const module = pathToFileURL(join(dir, 'dist', 'src', 'cli', 'replay-action.js')).href;
  const script = `const m = await import(${JSON.stringify(module)}); await m.runReplayCommand(${JSON.stringify(ARGS)}); m.writeReplayCodeCache();`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return dir;
}

const ARGS = {
  config: CONFIG,
  set: ['traffic.stop={requests: 1}'],
  perRequest: false,
  json: false,
  aiperf: false,
  skipInvalidRows: false,
};

/** A one-request replay through the built replay module of `dir`: its table (without the host's timing line) and what became of the cache. */
function replay(dir: string, nodeOptions: string[] = []): { table: string; cache: string } {
  const module = pathToFileURL(join(dir, 'dist', 'src', 'cli', 'replay-action.js')).href;
  const script = `const m = await import(${JSON.stringify(module)}); await m.runReplayCommand(${JSON.stringify(ARGS)}); process.stderr.write(m.replayCodeCache);`;
  const run = spawnSync(process.execPath, [...nodeOptions, '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  const table = run.stdout
    .split('\n')
    .filter((line) => !line.startsWith('simulated '))
    .join('\n');
  return { table, cache: run.stderr };
}

describe("the built replay's code cache", () => {
  it('is taken by V8, and a replay prints the same with it, without it, and with one refused or damaged', () => {
    const dir = builtCopy();
    try {
      const cacheFile = join(dir, 'dist', 'src', 'cli', 'replay-action.code-cache');
      const cached = replay(dir);
      expect(cached.cache).toBe('accepted');
      expect(cached.table).toMatch(/^Request Count \(requests\) +1$/m);
      // V8 refuses a cache made under other V8 flags, and compiles the file.
      expect(replay(dir, ['--no-opt'])).toEqual({ table: cached.table, cache: 'rejected' });
      // One copy of V8's data damaged: not used (V8 would not notice, and would end the process).
      const bytes = readFileSync(cacheFile);
      const damaged = Buffer.from(bytes);
      for (let i = bytes.length - 4096; i < bytes.length - 2048; i++) damaged[i] ^= 0x5a;
      writeFileSync(cacheFile, damaged);
      expect(replay(dir)).toEqual({ table: cached.table, cache: 'stale' });
      writeFileSync(cacheFile, bytes.subarray(0, bytes.length - 1));
      expect(replay(dir)).toEqual({ table: cached.table, cache: 'stale' });
      rmSync(cacheFile);
      expect(replay(dir)).toEqual({ table: cached.table, cache: 'absent' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is not used for a file edited after the build, even to the same length: the edited file runs', () => {
    const dir = builtCopy();
    try {
      const script = join(dir, 'dist', 'src', 'cli', 'replay-action.cjs');
      const text = readFileSync(script, 'latin1');
      const edited = text.replace('["Request Count (requests)"', '["Request Cxunt (requests)"');
      expect(edited.length).toBe(text.length);
      expect(edited).not.toBe(text);
      writeFileSync(script, edited, 'latin1');
      const run = replay(dir);
      expect(run.cache).toBe('stale');
      expect(run.table).toMatch(/^Request Cxunt \(requests\) +1$/m);
      expect(run.table).not.toMatch(/^Request Count/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a one-request replay loads no node:perf_hooks, node:crypto, node:os, node:v8, nor the stream and socket modules', () => {
    // The list is taken before process.stderr is first used (building it loads the stream modules).
    const probe = "process.on('exit', () => { const list = process.moduleLoadList.join(','); process.stderr.write('\\nLOADED ' + list); })";
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        `data:text/javascript,${encodeURIComponent(probe)}`,
        join(ROOT, 'bin', 'servesim.js'),
        'replay',
        CONFIG,
        '--set',
        'traffic.stop={requests: 1}',
      ],
      { encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    const loaded = (/LOADED (.*)$/.exec(run.stderr)?.[1] ?? '').split(',');
    expect(loaded).toContain('NativeModule fs');
    // Standard output is a pipe here: the table is written to it without Node.js's stream (src/cli/stdout.ts).
    for (const name of ['perf_hooks', 'crypto', 'os', 'v8', 'stream', 'net']) expect(loaded).not.toContain(`NativeModule ${name}`);
  });

  it('the servesim command runs a plain replay line without an ES module, and other lines with', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-module-list-'));
    try {
      // Required before the command (a CommonJS probe: an ES module one would start the ES module loader itself).
      const probe = join(dir, 'probe.cjs');
      writeFileSync(probe, "process.on('exit', () => process.stderr.write('\\nLOADED ' + process.moduleLoadList.join(',')));\n");
      const loadedBy = (args: string[]) => {
        const run = spawnSync(process.execPath, ['--require', probe, join(ROOT, 'bin', 'servesim.js'), ...args], { encoding: 'utf8' });
        expect(run.status, run.stderr).toBe(0);
        return (/LOADED (.*)$/.exec(run.stderr)?.[1] ?? '').split(',');
      };
      // An ES module, any, is run by a module job.
      const JOB = 'NativeModule internal/modules/esm/module_job';
      const plain = loadedBy(['replay', CONFIG, '--set', 'traffic.stop={requests: 1}']);
      expect(plain).toContain('NativeModule vm');
      expect(plain).not.toContain(JOB);
      expect(loadedBy(['replay', CONFIG, '--set=traffic.stop={requests: 1}'])).toContain(JOB);
      // yargs and the commands' options are CommonJS too (cli.cjs): --help runs no ES module, a command's work does.
      expect(loadedBy(['--help'])).not.toContain(JOB);
      expect(loadedBy(['schema'])).toContain(JOB);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--help and --version print through a pipe without building process.stdout, and exit 0', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-help-streams-'));
    try {
      // The probe reports, at exit, whether process.stdout or process.stderr was ever built (their getters, wrapped).
      const probe = join(dir, 'probe.cjs');
      writeFileSync(
        probe,
        [
          'const built = [];',
          "for (const name of ['stdout', 'stderr']) {",
          '  const d = Object.getOwnPropertyDescriptor(process, name);',
          '  Object.defineProperty(process, name, { configurable: true, enumerable: d.enumerable, get() { built.push(name); return d.get.call(process); } });',
          '}',
          "process.on('exit', () => require('node:fs').writeSync(2, '\\nBUILT ' + [...new Set(built)].join(',') + '\\nLOADED ' + process.moduleLoadList.join(',')));",
          '',
        ].join('\n'),
      );
      for (const args of [['--help'], ['sweep', '--help'], ['--version']]) {
        const run = spawnSync(process.execPath, ['--require', probe, join(ROOT, 'bin', 'servesim.js'), ...args], { encoding: 'utf8' });
        expect(run.status, run.stderr).toBe(0);
        expect(/BUILT (.*)$/m.exec(run.stderr)?.[1], args.join(' ')).toBe('');
        const loaded = (/LOADED (.*)$/m.exec(run.stderr)?.[1] ?? '').split(',');
        for (const name of ['net', 'tty']) expect(loaded, args.join(' ')).not.toContain(`NativeModule ${name}`);
        // The whole text, as console.log prints it.
        expect(run.stdout.endsWith('\n'), args.join(' ')).toBe(true);
        if (args[0] === '--version') expect(run.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`);
        else expect(run.stdout).toMatch(/--help +Show help/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the command line's yargs part (cli.cjs) runs with the build's code cache, and the same without it", () => {
    const dir = builtCopy();
    try {
      const entry = pathToFileURL(join(dir, 'dist', 'src', 'cli', 'cli-entry.js')).href;
      const help = (): { text: string; cache: string } => {
        const script = `const m = await import(${JSON.stringify(entry)}); process.exitCode = await m.main(['sweep', '--help']); process.stderr.write(m.cliCodeCache);`;
        const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
        expect(run.status, run.stderr).toBe(0);
        return { text: run.stdout, cache: run.stderr };
      };
      // The copy's cache names the build's file: stale until written again for the copy.
      const stale = help();
      expect(stale.cache).toBe('stale');
      expect(stale.text).toMatch(/^servesim sweep/);
      const write = `const m = await import(${JSON.stringify(entry)}); await m.main(['--help']); m.writeCliCodeCache();`;
      expect(spawnSync(process.execPath, ['--input-type=module', '-e', write], { encoding: 'utf8' }).status).toBe(0);
      expect(help()).toEqual({ text: stale.text, cache: 'accepted' });
      rmSync(join(dir, 'dist', 'src', 'cli', 'cli.code-cache'));
      expect(help()).toEqual({ text: stale.text, cache: 'absent' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
