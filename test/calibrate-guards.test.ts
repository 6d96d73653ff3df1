/**
 * A fit that cannot be trusted is refused unless forced (src/calibrate/arguments.ts
 * `refuseUntrusted`): too few rows for its constants, features that are linear combinations of
 * each other, rows of several deployments, an open-loop run; and the flags are checked first.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CalibrateUsageError, checkHoldout } from '../src/calibrate/arguments.js';
import { deploymentMix, runPassTimeFit, runResponseOverheadFit } from '../src/calibrate/direct-fits.js';
import { runEngineCalibration } from '../src/calibrate/engine-command.js';
import { dependentColumn } from '../src/calibrate/fit-linear.js';
import { readTable, selectRows } from '../src/calibrate/read-table.js';
import { thrownBy } from './helpers/errors.js';

const REPO = join(import.meta.dirname, '..');
const SPLITWISE = join(REPO, 'calibration', 'splitwise-perf-model.csv');
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'servesim-guards-'));
  dirs.push(d);
  return d;
}

describe('dependentColumn', () => {
  it('finds none among independent columns', () => {
    const rows = [
      [1, 5],
      [2, 3],
      [3, 9],
      [4, 1],
    ];
    expect(dependentColumn(rows, [null, 0, 1])).toBeNull();
  });

  it('names a duplicated column, a proportional one, and one that is a constant plus another', () => {
    const rows = [1, 2, 3, 4, 5].map((b) => [b, b, 1000 * b, 7 + 2 * b]);
    expect(dependentColumn(rows, [null, 0, 1])).toEqual({ column: 1, of: [null, 0] });
    expect(dependentColumn(rows, [0, 2])).toEqual({ column: 2, of: [0] });
    expect(dependentColumn(rows, [null, 0, 3])).toEqual({ column: 3, of: [null, 0] });
    // A column that is the same in every row is the constant again.
    expect(dependentColumn([[4], [4], [4]], [null, 0])).toEqual({ column: 0, of: [null] });
  });
});

describe('deploymentMix', () => {
  it('names the columns that mix deployments, not the measurement columns', () => {
    const table = readTable(SPLITWISE);
    const roles = ['prompt_size', 'batch_size', 'token_size', 'prompt_time', 'token_time'];
    expect(deploymentMix(selectRows(table, [{ column: 'model', value: 'llama2-70b' }]), roles)).toBe(
      'the rows mix several deployments by hardware (a100-80gb, h100-80gb, h100-80gb-pcap), tensor_parallel (2, 4, 8): one fit over them models none of them; select one with --select hardware=a100-80gb --select tensor_parallel=2',
    );
    const one = selectRows(table, [
      { column: 'model', value: 'llama2-70b' },
      { column: 'hardware', value: 'h100-80gb' },
      { column: 'tensor_parallel', value: '4' },
    ]);
    // peak_power, average_power and e2e_time vary too: they are measurements (fractional), not deployments.
    expect(deploymentMix(one, roles)).toBeNull();
  });
});

describe('direct fits', () => {
  const header = 'duration_ms,prefill_tokens,prefill_pairs,decode_requests,decode_kv_tokens';

  it('refuse a pass-time fit on fewer rows than constants, and write it with --force and a note', async () => {
    const d = tempDir();
    const input = join(d, 'passes.csv');
    writeFileSync(input, `${header}\n12.5,512,131072,4,4000\n`);
    const refused = await runPassTimeFit({ input, layout: 'passes', out: join(d, 'out') }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(CalibrateUsageError);
    expect((refused as Error).message).toBe(
      `${input}: the fit cannot be trusted: fitted on 1 row for 5 constants (base_ms, prefill_token_us, prefill_pair_ns, decode_request_us, decode_kv_token_ns): with no more rows than constants any values fit exactly, and nothing checks them\nfix the input, or pass --force to write the fit anyway`,
    );
    expect(existsSync(join(d, 'out'))).toBe(false);
    const forced = await runPassTimeFit({ input, layout: 'passes', out: join(d, 'out'), force: true });
    expect(forced.report.fit.notes.some((note) => note.startsWith('forced past a check: fitted on 1 row for 5 constants'))).toBe(true);
    expect((JSON.parse(readFileSync(join(d, 'out', 'fit.json'), 'utf8')) as { notes: string[] }).notes).toEqual(forced.report.fit.notes);
  });

  it('fit the shipped example as before: one deployment selected, no guard in the way', async () => {
    const outcome = await runPassTimeFit({
      input: SPLITWISE,
      layout: 'prefill-decode',
      select: [
        { column: 'model', value: 'llama2-70b' },
        { column: 'hardware', value: 'h100-80gb' },
        { column: 'tensor_parallel', value: '4' },
      ],
      holdout: 0.2,
    });
    expect(outcome.report.fit.untrusted).toEqual([]);
    expect(outcome.report.fit.n).toBeGreaterThan(100);
  });

  it('refuse response-overhead on a CSV whose holdout leaves no more rows than constants', async () => {
    const d = tempDir();
    const input = join(d, 'gaps.csv');
    writeFileSync(input, 'output_tokens,gap_ms\n10,1.5\n20,1.6\n30,1.7\n');
    await expect(runResponseOverheadFit({ input, holdout: 0.6 })).rejects.toThrow(/fitted on 2 rows for 2 constants/);
    await expect(runResponseOverheadFit({ input })).resolves.toBeDefined();
  });

  it('refuse response-overhead on gaps that are all at one point, and write it with --force and a note', async () => {
    const d = tempDir();
    const input = join(d, 'gaps.csv');
    writeFileSync(input, 'output_tokens,gap_ms\n128,1.5\n128,1.7\n128,1.2\n');
    const refused = await runResponseOverheadFit({ input, out: join(d, 'out') }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(CalibrateUsageError);
    expect((refused as Error).message).toBe(
      `${input}: the fit cannot be trusted: every gap is at one point (128 output tokens, 0 other requests in flight): the fit would be their mean,` +
        ' and nothing in them shows how the gap changes with output tokens or load; give gaps at several output lengths or concurrencies' +
        '\nfix the input, or pass --force to write the fit anyway',
    );
    expect(existsSync(join(d, 'out'))).toBe(false);
    const forced = await runResponseOverheadFit({ input, out: join(d, 'out'), force: true });
    // The mean of the gaps, (1.5 + 1.7 + 1.2) / 3.
    expect(forced.report.fit.coefficients.base_ms.value).toBeCloseTo(4.4 / 3, 12);
    expect(forced.report.fit.notes.some((note) => note.startsWith('forced past a check: every gap is at one point'))).toBe(true);
    // Two output lengths (or two loads) are two points: fitted as the docs describe.
    writeFileSync(input, 'output_tokens,gap_ms\n127,1.5\n128,1.7\n128,1.2\n');
    await expect(runResponseOverheadFit({ input })).resolves.toBeDefined();
  });

  it('need exactly one input of response-overhead', async () => {
    await expect(runResponseOverheadFit({})).rejects.toThrow(CalibrateUsageError);
    await expect(runResponseOverheadFit({ aiperf: 'a', input: 'b' })).rejects.toThrow('give one of --aiperf and --input, not both');
  });
});

describe('flags', () => {
  it('take a holdout share in [0, 1) only', () => {
    for (const ok of [undefined, 0, 0.2, 0.999]) expect(() => checkHoldout(ok)).not.toThrow();
    for (const bad of [1, 1.5, -0.1, Number.NaN, Infinity]) {
      expect(thrownBy(() => checkHoldout(bad), CalibrateUsageError).message).toBe(
        `--holdout ${bad}: must be the share of rows held out, in [0, 1) (e.g. 0.2)`,
      );
    }
  });

  it('refuse a linear engine fit on one point before fitting, and say what --train found', async () => {
    // That it is refused before any replay runs is timed in the bad-input corpus (bad-inputs.e2e.test.ts,
    // "--train lowest:3 finding one point", under 2 s): wall clocks stay out of the unit suite.
    const error = await runEngineCalibration({
      config: join(REPO, 'calibration', 'minimax-m25-b200-tp4.base.yaml'),
      measured: [join(REPO, 'data', 'silicon', 'dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv')],
      select: ['source=hardware', 'concurrency=4'],
      train: 'lowest:3',
      out: join(tempDir(), 'out'),
      fitClient: true,
      // The physics form holds each factor near the catalog's value (a prior): one point determines it.
      form: 'linear',
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(CalibrateUsageError);
    expect(error?.message).toBe(
      '--train lowest:3: the fit cannot be trusted: --train lowest:3 found 1 of the 1 measured points: 1 x 2 metrics = 2 measured values for 4 constants (base_ms, decode_kv_token_ns, prefill_token_us, client_delay_ms); train on more points (--train lowest:N)\nfix the input, or pass --force to write the fit anyway',
    );
  });

  it('refuse a disaggregated base config, naming engine.workers, before reading the points', async () => {
    const error = await runEngineCalibration({
      config: join(REPO, 'sweeps', 'configs', 'llama-3.1-70b-h100-disagg.yaml'),
      measured: [join(REPO, 'data', 'silicon', 'dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv')],
      train: 'lowest:3',
      out: join(tempDir(), 'out'),
      fitClient: false,
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(
      /llama-3\.1-70b-h100-disagg\.yaml: engine\.workers: has prefill and decode workers; calibrate engine fits aggregated workers/,
    );
  });
});
