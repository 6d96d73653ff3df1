/**
 * What a new user meets on the command line, through the compiled CLI: commands without their
 * argument list what they take, `--json` prints what the command writes, a replay explains its
 * rejected requests, and its table names units as the written files do.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

function servesim(args: string[], cwd = ROOT) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
}

describe('the servesim command for a new user', () => {
  it('lists the shipped sweep files and an example when sweep has no file', () => {
    const r = servesim(['sweep']);
    expect(r.status).toBe(2);
    const names = readdirSync(join(ROOT, 'sweeps')).filter((n) => n.endsWith('.yaml'));
    for (const name of names) expect(r.stderr).toContain(`sweeps/${name}`);
    // Each description is whole: its sentence ends (one that runs over a line of its file is not cut).
    const listing = r.stderr.slice(0, r.stderr.indexOf('\n\n'));
    const descriptions = listing.split(/^\s+sweeps\/\S+\.yaml\s+/m).slice(1);
    expect(descriptions).toHaveLength(names.length);
    for (const description of descriptions) expect(description.replace(/\s+/g, ' ').trim()).toMatch(/\.$/);
    expect(r.stderr).toContain('npx servesim sweep sweeps/concurrency-grid.yaml');
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('says that merging is servesim sweep merge when asked for servesim merge', () => {
    const help = servesim(['merge', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('servesim sweep merge DIR... --out DIR');
    expect(help.stdout).not.toContain('Commands:');
    const run = servesim(['merge', 'out/a', 'out/b', '--out', 'out/all']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^error: .*servesim sweep merge DIR\.\.\. --out DIR/);
  });

  it('lists the calibration targets with an example of each when calibrate has none, and names an unknown one', () => {
    const r = servesim(['calibrate']);
    expect(r.status).toBe(2);
    for (const target of ['detokenization', 'response-overhead', 'pass-time', 'engine']) {
      expect(r.stderr).toContain(`  ${target} `);
      expect(r.stderr).toContain(`npx servesim calibrate ${target} `);
    }
    const unknown = servesim(['calibrate', 'passtime']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^error: unknown target passtime\nservesim calibrate needs a target:/);
  });

  it('prints with --json the objects sweep and calibrate write', () => {
    const out = mkdtempSync(join(tmpdir(), 'servesim-json-'));
    const sweep = servesim(['sweep', 'sweeps/minimax-b200-fitted.yaml', '--out', join(out, 'sweep'), '--workers', '1', '--json']);
    expect(sweep.status, sweep.stderr).toBe(0);
    const printed = JSON.parse(sweep.stdout) as { plan: unknown; points: unknown[] };
    expect(printed.plan).toEqual(JSON.parse(readFileSync(join(out, 'sweep', 'plan.json'), 'utf8')));
    const lines = readFileSync(join(out, 'sweep', 'points.jsonl'), 'utf8')
      .trimEnd()
      .split('\n');
    expect(printed.points).toEqual(lines.map((line) => JSON.parse(line) as unknown));
    expect(sweep.stderr).toContain('5/5 points ok');

    const fit = servesim([
      ...['calibrate', 'response-overhead', '--aiperf', 'calibration/aiperf-mlx-qwen3-0.6b-c1'],
      ...['--out', join(out, 'ro'), '--json'],
    ]);
    expect(fit.status, fit.stderr).toBe(0);
    expect(JSON.parse(fit.stdout)).toEqual(JSON.parse(readFileSync(join(out, 'ro', 'fit.json'), 'utf8')));
  });

  it('explains rejected requests by the limit that rejected them', () => {
    // The first 2000 rows of the conversation trace, replayed with context_length 40960: a row is
    // rejected when its prompt has 40960 tokens or more. Counted here from the trace itself.
    const rows = readFileSync(join(ROOT, 'data/traces/mooncake_fast25_conversation_trace.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(0, 2000)
      .map((line) => JSON.parse(line) as { input_length: number });
    const tooLong = rows.filter((row) => row.input_length >= 40960).length;
    expect(tooLong).toBeGreaterThan(0);
    const r = servesim(['replay', 'sweeps/configs/mooncake-conversation.yaml']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `Error Request Count \\(requests\\)\\s+${tooLong.toLocaleString('en-US')} rejected: prompt of context_length 40,960 tokens or more`,
      ),
    );

    // A pool of 4 blocks of 16 tokens holds prompts of at most 64 tokens: the two 100-token rows of
    // the trace are rejected, the 30-token one is served. (A synthetic source none of whose
    // requests fit is refused before the run, as vLLM refuses to start with such a pool.)
    const dir = mkdtempSync(join(tmpdir(), 'servesim-reject-'));
    const traceRow = (timestamp: number, input: number) =>
      JSON.stringify({ timestamp, input_length: input, output_length: 4, hash_ids: [timestamp] });
    writeFileSync(join(dir, 'trace.jsonl'), `${[traceRow(0, 100), traceRow(1, 30), traceRow(2, 100)].join('\n')}\n`);
    writeFileSync(
      join(dir, 'run.yaml'),
      'engine: {workers: {aggregated: {kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 4}}}}}\n' +
        'traffic: {source: {type: trace, path: trace.jsonl}, stop: {requests: 3}}\n',
    );
    const pool = servesim(['replay', join(dir, 'run.yaml')]);
    expect(pool.status, pool.stderr).toBe(0);
    expect(pool.stdout).toContain('2 rejected: prompt of 65 tokens or more, more than the KV pool of a rank holds (4 blocks of 16 tokens)');
  });

  it('names units in the console table as the AIPerf files it writes do', () => {
    const out = mkdtempSync(join(tmpdir(), 'servesim-units-'));
    const r = servesim(['replay', 'sweeps/configs/qwen3-32b-h100-tp2.yaml', '--out', out, '--aiperf']);
    expect(r.status, r.stderr).toBe(0);
    const [folder] = readdirSync(out).filter((name) => name.startsWith('servesim-'));
    const csv = readFileSync(join(out, folder, 'profile_export_aiperf.csv'), 'utf8');
    for (const header of ['Output Token Throughput Per User (tokens/sec/user)', 'E2E Output Token Throughput (tokens/sec/user)']) {
      expect(csv).toContain(header);
      expect(r.stdout).toContain(header);
    }
  });
});
