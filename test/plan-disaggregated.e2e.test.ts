/**
 * The shipped plan of both layouts (sweeps/plans/qwen3-8b-long-prompts.yaml) run end to end on
 * the real pool: it picks a disaggregated deployment, and two replays outside the planner confirm
 * why (the winner meets the SLOs at its max rate; the aggregated deployment of the same GPUs
 * breaks the inter-token latency at the target). Needs `npm run build` first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../src/plan/plan-output.js';
import { REPO, RUN_CLI, requireBuild, useTempDirs } from './fixtures/sweep/helpers.js';

beforeAll(requireBuild);
const dir = useTempDirs();

const PLAN = join(REPO, 'sweeps', 'plans', 'qwen3-8b-long-prompts.yaml');
/** Where the report check looks for Chromium (scripts/check-report-html.mjs). */
const CHROMIUM = '/usr/bin/chromium';

interface Summary {
  metrics: Record<string, Record<string, number>>;
  run: { error_request_count: number; incomplete_request_count: number };
  deployment: { gpus: number };
  pools?: Array<{ role: string; gpus: number }>;
}

function replay(config: string, ...sets: string[]): Summary {
  const args = [RUN_CLI, 'replay', config, '--json', ...sets.flatMap((s) => ['--set', s])];
  const done = spawnSync(process.execPath, args, { encoding: 'utf8' });
  expect(done.status, done.stderr).toBe(0);
  return JSON.parse(done.stdout) as Summary;
}

describe('a plan of aggregated and disaggregated candidates', () => {
  it('picks disaggregation for long prompts and short outputs, and says what aggregated workers would need', () => {
    const d = dir();
    const planned = spawnSync(process.execPath, [RUN_CLI, 'plan', PLAN, '--out', d, '--workers', '2'], { encoding: 'utf8' });
    expect(planned.status, planned.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(d, 'plan.json'), 'utf8')) as PlanJson;
    const best = plan.best!;
    const winner = plan.candidates.find((c) => c.id === best.id)!;
    expect(winner.layout).toBe('disaggregated');
    expect(winner.pools?.map((p) => [p.role, p.workers, p.gpus])).toEqual([
      ['prefill', winner.knobs.prefill_workers, winner.knobs.prefill_workers],
      ['decode', winner.knobs.decode_workers, winner.knobs.decode_workers],
    ]);

    // Both frontiers are listed, cheapest first, each candidate costlier and faster than the one before.
    expect(plan.frontiers.map((f) => f.layout)).toEqual(['aggregated', 'disaggregated']);
    for (const { candidates } of plan.frontiers) {
      expect(candidates.length).toBeGreaterThan(1);
      for (let i = 1; i < candidates.length; i++) {
        expect(candidates[i].cost_per_hour).toBeGreaterThan(candidates[i - 1].cost_per_hour);
        expect(candidates[i].max_rate_rps).toBeGreaterThan(candidates[i - 1].max_rate_rps);
      }
    }
    // Every aggregated candidate that reaches the target costs more than the winner.
    const aggregatedMeeting = plan.candidates.filter((c) => c.layout === 'aggregated' && c.meets_target === true);
    expect(aggregatedMeeting.length).toBeGreaterThan(0);
    for (const c of aggregatedMeeting) expect(c.cost_per_hour).toBeGreaterThan(best.cost_per_hour);
    const cheapest = [...aggregatedMeeting].sort((a, b) => a.cost_per_hour - b.cost_per_hour)[0];
    expect(planned.stdout).toContain('aggregated frontier');
    expect(planned.stdout).toContain('disaggregated frontier');
    expect(planned.stdout).toContain(`aggregated needs ${cheapest.id}`);
    const csv = readFileSync(join(d, 'plan.csv'), 'utf8').split('\n')[0].split(',');
    expect(csv).toEqual(expect.arrayContaining(['workers', 'ratio', 'prefill_workers', 'decode_tensor', 'on_frontier']));
    expect(readFileSync(join(d, 'report.html'), 'utf8')).toContain('aggregated and disaggregated frontiers');
    if (existsSync(CHROMIUM)) {
      // Every chart (the layouts' one among them) renders whole in a headless browser.
      const checked = spawnSync(process.execPath, [join(REPO, 'scripts', 'check-report-html.mjs'), join(d, 'report.html')], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(checked.stderr).toBe('');
      expect(checked.stdout).toContain('4 charts rendered');
    }

    // Outside the planner: the winner's run config meets the plan's SLOs (TTFT p90 <= 1000 ms,
    // ITL p90 <= 15 ms) at its max rate, on prefill and decode pools of the candidate's GPUs ...
    const atMax = replay(join(d, best.config));
    expect(atMax.metrics.time_to_first_token.p90).toBeLessThanOrEqual(1000);
    expect(atMax.metrics.inter_token_latency.p90).toBeLessThanOrEqual(15);
    expect(atMax.run.error_request_count + atMax.run.incomplete_request_count).toBe(0);
    expect(atMax.deployment.gpus).toBe(best.gpus);
    expect(atMax.pools?.map((p) => p.role)).toEqual(['prefill', 'decode']);
    // ... while aggregated workers on as many GPUs, at the target rate, break the inter-token latency.
    const aggregated = plan.candidates.find((c) => c.layout === 'aggregated' && c.gpus === best.gpus)!;
    const sameGpus = replay(
      join(d, cheapest.config!),
      `engine.workers.aggregated.parallelism.replicas=${aggregated.knobs.replicas}`,
      'traffic.load.requests_per_second=10',
    );
    expect(sameGpus.deployment.gpus).toBe(best.gpus);
    expect(sameGpus.metrics.inter_token_latency.p90).toBeGreaterThan(15);
  });
});
