/**
 * Plans run end to end on the real pool (compiled dist/src/sweep/pool-task.js and the real
 * replay): byte identity across pool sizes, resume after an interruption, the best deployment's
 * run config replayed by the CLI, the search's guarantees on every candidate, and the command's
 * output and exit codes. Needs `npm run build` first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { PlanJson } from '../src/plan/plan-output.js';
import { runPlan, type RunPlanOptions } from '../src/plan/run-plan.js';
import { REPO, RUN_CLI, requireBuild, useTempDirs } from './fixtures/sweep/helpers.js';

beforeAll(requireBuild);
const dir = useTempDirs();

const TINY = join(REPO, 'test', 'fixtures', 'plan', 'tiny-plan.yaml');
/** Where the report check looks for Chromium (scripts/check-report-html.mjs). */
const CHROMIUM = '/usr/bin/chromium';
const quiet = { note: () => {} } satisfies Partial<RunPlanOptions>;

/** Every file a plan writes that must not depend on threads or resumption: name -> bytes. */
function outputs(outDir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of ['plan.json', 'plan.csv', 'points.jsonl', 'report.html']) files[name] = readFileSync(join(outDir, name), 'utf8');
  for (const name of readdirSync(join(outDir, 'configs'))) files[`configs/${name}`] = readFileSync(join(outDir, 'configs', name), 'utf8');
  return files;
}

function planJsonOf(outDir: string): PlanJson {
  return JSON.parse(readFileSync(join(outDir, 'plan.json'), 'utf8')) as PlanJson;
}

describe('servesim plan', () => {
  it('writes the same bytes with 1 and 2 pool threads and in this thread', async () => {
    const d = dir();
    const one = await runPlan({ ...quiet, planFile: TINY, outDir: join(d, 'one'), poolThreads: 1 });
    const two = await runPlan({ ...quiet, planFile: TINY, outDir: join(d, 'two'), poolThreads: 2 });
    const here = await runPlan({ ...quiet, planFile: TINY, outDir: join(d, 'here'), inProcess: true });
    expect(one.best?.id).toBeDefined();
    expect(one.counts.replays).toBeGreaterThan(20);
    const expected = outputs(join(d, 'one'));
    expect(Object.keys(expected).length).toBeGreaterThan(5);
    expect(outputs(join(d, 'two'))).toEqual(expected);
    expect(outputs(join(d, 'here'))).toEqual(expected);
    expect(two.counts).toEqual(one.counts);
    expect(here.best).toEqual(one.best);
  });

  it('an interrupted plan leaves its replays and no result; the rerun continues and writes what one run writes', async () => {
    const d = dir();
    const whole = await runPlan({ ...quiet, planFile: TINY, outDir: join(d, 'whole'), poolThreads: 2 });
    const stop = new AbortController();
    const stopped = await runPlan({
      ...quiet,
      planFile: TINY,
      outDir: join(d, 'resumed'),
      poolThreads: 2,
      stopSignal: stop.signal,
      progress: (line) => {
        if (line.startsWith('round 2:')) stop.abort();
      },
    });
    expect(stopped.interrupted).toBe(true);
    expect(existsSync(join(d, 'resumed', 'plan.json'))).toBe(false);
    const kept = readFileSync(join(d, 'resumed', 'points.jsonl'), 'utf8')
      .trim()
      .split('\n').length;
    expect(stopped.logged).toBe(kept);
    expect(kept).toBeLessThan(whole.counts.replays);

    const resumed = await runPlan({ ...quiet, planFile: TINY, outDir: join(d, 'resumed'), poolThreads: 1 });
    expect(resumed.interrupted).toBe(false);
    expect(resumed.reused).toBe(kept);
    expect(resumed.counts.replays).toBe(whole.counts.replays);
    expect(outputs(join(d, 'resumed'))).toEqual(outputs(join(d, 'whole')));

    // A finished plan rerun replays nothing.
    const again = await runPlan({ ...quiet, planFile: TINY, outDir: join(d, 'whole'), poolThreads: 2 });
    expect(again.reused).toBe(again.counts.replays);
  });

  it('every searched candidate: its max rate met the SLOs, the next tested rate above it did not, and they are within the tolerance', async () => {
    const d = dir();
    await runPlan({ ...quiet, planFile: TINY, outDir: d, poolThreads: 2 });
    const plan = planJsonOf(d);
    const tolerance = plan.rates.tolerance;
    const searched = plan.candidates.filter((c) => c.status === 'searched');
    expect(searched.length).toBeGreaterThan(2);
    for (const c of searched) {
      const max = c.max_rate_rps as number;
      const atMax = c.tested.find((t) => t.rate_rps === max);
      expect(atMax?.meets, c.id).toBe(true);
      for (const t of c.tested.filter((t) => t.rate_rps <= max)) expect(t.meets, `${c.id} at ${t.rate_rps}`).toBe(true);
      const above = c.tested.filter((t) => t.rate_rps > max).sort((a, b) => a.rate_rps - b.rate_rps)[0];
      expect(above.meets, c.id).toBe(false);
      expect(above.rate_rps).toBe(c.rate_hi_rps);
      expect(above.rate_rps / max).toBeLessThanOrEqual(1 + tolerance);
      // Each SLO value at the max rate is within its limit (both bounds of this plan are upper bounds).
      for (const [name, slo] of Object.entries(c.slo)) expect(slo.value as number, `${c.id} ${name}`).toBeLessThanOrEqual(slo.limit);
    }
    for (const c of plan.candidates.filter((c) => c.status === 'pruned')) {
      const by = plan.candidates.find((o) => o.id === c.dominated_by)!;
      expect(by.cost_per_hour).toBeLessThanOrEqual(c.cost_per_hour);
      expect(by.rate_lo_rps).toBeGreaterThanOrEqual(c.rate_hi_rps as number);
    }
  });

  it('the best deployment replayed at its reported rate meets every SLO', () => {
    const d = dir();
    const planned = spawnSync(process.execPath, [RUN_CLI, 'plan', TINY, '--out', d, '--workers', '2'], { encoding: 'utf8' });
    expect(planned.status, planned.stderr).toBe(0);
    const plan = planJsonOf(d);
    const best = plan.best!;
    const config = parse(readFileSync(join(d, best.config), 'utf8')) as { traffic: { load: { requests_per_second: number } } };
    expect(config.traffic.load.requests_per_second).toBe(best.max_rate_rps);
    const replayed = spawnSync(process.execPath, [RUN_CLI, 'replay', join(d, best.config), '--json'], { encoding: 'utf8' });
    expect(replayed.status, replayed.stderr).toBe(0);
    const summary = JSON.parse(replayed.stdout) as {
      metrics: Record<string, Record<string, number>>;
      run: { error_request_count: number; incomplete_request_count: number };
    };
    // The plan's SLOs, read from the plan file: TTFT p90 <= 300 ms, ITL p90 <= 25 ms.
    expect(summary.metrics.time_to_first_token.p90).toBeLessThanOrEqual(300);
    expect(summary.metrics.inter_token_latency.p90).toBeLessThanOrEqual(25);
    expect(summary.run.error_request_count + summary.run.incomplete_request_count).toBe(0);
    // And it is the very replay the plan logged at that rate.
    const row = plan.candidates.find((c) => c.id === best.id)!;
    const id = row.tested.find((t) => t.rate_rps === best.max_rate_rps)!.id;
    const logged = readFileSync(join(d, 'points.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; summary: { metrics: unknown } })
      .find((p) => p.id === id)!;
    expect(summary.metrics).toEqual(logged.summary.metrics);
  });

  it('prints the top five and why the best won; --json prints plan.json; a bad plan exits 2 and writes nothing', () => {
    const d = dir();
    const text = spawnSync(process.execPath, [RUN_CLI, 'plan', TINY, '--out', join(d, 'a'), '--workers', '1'], { encoding: 'utf8' });
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/^plan tiny: 12 candidates, 0 do not fit, \d+ searched, \d+ pruned as dominated; \d+ replays in /);
    expect(text.stdout).toContain('#  candidate');
    expect(text.stdout).toMatch(/\nBest: \S+, the cheapest of the \d+ candidates that sustain 8 rps within every SLO/);
    expect(text.stdout).toContain('replay it: npx servesim replay ');
    const rows = text.stdout.split('\n').filter((line) => /^\d\s/.test(line));
    // The top five of the candidates searched to the end (the pruned ones have no max rate).
    const searched = planJsonOf(join(d, 'a')).candidates.filter((c) => c.status === 'searched').length;
    expect(searched).toBeGreaterThanOrEqual(2);
    expect(rows).toHaveLength(Math.min(5, searched));

    // report.html: one frontier chart per SLO (TTFT p90, ITL p90) and max rate against cost, whole in
    // headless Chromium with the network cut off (skipped where there is no Chromium).
    const html = readFileSync(join(d, 'a', 'report.html'), 'utf8');
    expect(html.match(/<svg /g)?.length).toBe(3);
    expect(html).toContain('data-slo="time_to_first_token.p90"');
    expect(html).toContain('data-slo="inter_token_latency.p90"');
    if (existsSync(CHROMIUM)) {
      const checked = spawnSync(process.execPath, [join(REPO, 'scripts', 'check-report-html.mjs'), join(d, 'a', 'report.html')], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(checked.stderr).toBe('');
      expect(checked.status).toBe(0);
      expect(checked.stdout).toContain('ok, 3 charts rendered without network');
    } else {
      console.log(`skipped the headless-browser check of report.html: no ${CHROMIUM}`);
    }

    const json = spawnSync(process.execPath, [RUN_CLI, 'plan', TINY, '--out', join(d, 'a'), '--json'], { encoding: 'utf8' });
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(planJsonOf(join(d, 'a')));
    expect(json.stderr).toContain('Best: ');

    const bad = join(d, 'bad.yaml');
    writeFileSync(bad, readFileSync(TINY, 'utf8').replace('p90: 300', 'p90: -3'));
    const refused = spawnSync(process.execPath, [RUN_CLI, 'plan', bad, '--out', join(d, 'b')], { encoding: 'utf8' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(`error: ${bad}: slo.time_to_first_token.p90: must be a positive finite number, got -3\n`);
    expect(existsSync(join(d, 'b'))).toBe(false);
  });

  it('drops candidates whose weights or longest request do not fit before any replay', async () => {
    const d = dir();
    const file = join(d, 'big.yaml');
    writeFileSync(
      file,
      [
        'model: meta-llama/Llama-3.1-70B',
        'hardware: {h100_sxm: {price_per_gpu_hour: 2}}',
        'traffic: {source: {input_tokens: 40000, output_tokens: 100}}',
        'slo: {time_to_first_token: {p90: 1000}}',
        'search: {tensor: [1, 2], max_sequences: [16]}',
      ].join('\n'),
    );
    const result = await runPlan({ ...quiet, planFile: file, outDir: join(d, 'out') });
    expect(result.counts).toMatchObject({ candidates: 2, does_not_fit: 2, replays: 0 });
    const [tp1, tp2] = result.rows;
    // TP 1: 80 x (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x 28672) x 2 bytes + 2 x 128256 x 8192 x 2 bytes = 131.4 GiB of weights.
    expect(tp1.reason).toMatch(/^leaves no room for the KV cache: llama-3\.1-70b \(bf16\) needs 131\.4 GiB of weights/);
    // TP 2 holds the weights, but its KV cache is smaller than one 40,100-token request.
    expect(tp2.reason).toMatch(/^the KV cache holds \d+ tokens per rank, fewer than the longest request \(40100 tokens\)/);
    expect(tp2.kv_cache_tokens_per_rank).toBeLessThan(40100);
    expect(result.best).toBeNull();
    expect(result.why).toContain('No candidate meets the SLOs at any tested rate');

    // Knobs vLLM refuses to start with are a candidate that cannot run, not a bad plan: the other candidates go on.
    const knobs = join(d, 'knobs.yaml');
    writeFileSync(
      knobs,
      [
        'model: Qwen/Qwen3-8B',
        'hardware: {h100_sxm: {price_per_gpu_hour: 2}}',
        'traffic: {source: {input_tokens: 256, output_tokens: 16}}',
        'slo: {time_to_first_token: {p90: 1000}}',
        'search: {max_batched_tokens: [64, 8192], max_sequences: [128]}',
        'rates: {duration_s: 10, min_requests: 100}',
      ].join('\n'),
    );
    const mixed = await runPlan({ ...quiet, planFile: knobs, outDir: join(d, 'knobs'), inProcess: true });
    expect(mixed.rows.map((r) => r.status)).toEqual(['does_not_fit', 'searched']);
    expect(mixed.rows[0].reason).toMatch(/^is 64, below max_sequences \(128\); vLLM refuses to start/);
    expect(mixed.rows[0].replays).toBe(0);
    expect(mixed.best?.id).toBe('h100_sxm-tp1-r1-mbt8192-seq128');
  });
});
