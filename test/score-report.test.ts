import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMetricList } from '../src/score/metric-names.js';
import { pairPoints } from '../src/score/pair.js';
import type { PointKey, ScorePoint } from '../src/score/points.js';
import {
  escapeHtml,
  formatMarkdownReport,
  formatScoresJson,
  formatTerminalTable,
  markdownText,
  writeScoreReport,
} from '../src/score/score-report.js';
import { buildScore, checkLimits, type ScoreResult } from '../src/score/score-result.js';
import { readSweepPoints } from '../src/score/score-inputs.js';
import { parseRunConfig } from '../src/config/load.js';
import { replay } from '../src/replay.js';

const CHROMIUM = '/usr/bin/chromium';

function point(source: string, key: PointKey, ttft: number, itl: number): ScorePoint {
  return { source, key, metrics: { time_to_first_token: { avg: ttft, p90: ttft * 1.5 }, inter_token_latency: { avg: itl } } };
}

/** A small score with a baseline: 2 curves x 3 loads, one measured point unmatched. */
function sampleResult(): ScoreResult {
  const loads = [1, 2, 4];
  const curves = [128, 1024];
  const measured = curves.flatMap((isl) => loads.map((c) => point(`m-${isl}-${c}`, { concurrency: c, isl }, 50 * c + isl / 10, 10 + c)));
  measured.push(point('m-extra', { concurrency: 8, isl: 128 }, 500, 20));
  const sim = curves.flatMap((isl) => loads.map((c) => point(`s-${isl}-${c}`, { concurrency: c, isl }, 55 * c + isl / 10, 10 + 1.1 * c)));
  const before = curves.flatMap((isl) => loads.map((c) => point(`b-${isl}-${c}`, { concurrency: c, isl }, 70 * c + isl / 10, 12 + c)));
  return buildScore({
    paired: pairPoints(sim, measured),
    metrics: parseMetricList(['ttft,ttft.p90,itl']),
    groupBy: ['isl'],
    skippedSim: [{ key: {}, source: 'sweep/points.jsonl:9 (abc)', reason: 'status failed: boom <b>' }],
    baseline: { paired: pairPoints(before, measured), skipped: [] },
    inputs: {
      sim: 'after',
      sim_label: 'after <new>',
      measured: ['runs/'],
      measured_notes: ['runs/: AIPerf'],
      baseline: 'before',
      baseline_label: 'before',
    },
  });
}

describe('a simulated side on placeholder pass times', () => {
  it('is read from the points’ summaries and said in every report', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-score-placeholder-'));
    mkdirSync(join(dir, 'sweep'));
    const summaryOf = (engine: object) =>
      replay(parseRunConfig({ engine, traffic: { stop: { requests: 4 } } }, 'run.yaml'), { baseDir: '.' }).summary;
    const records = [
      { id: 'a', overrides: {}, status: 'ok', summary: summaryOf({ model: 'acme/unlisted-7b', hardware: 'h100_sxm' }), error: null },
      {
        id: 'b',
        overrides: {},
        status: 'ok',
        summary: summaryOf({
          model: 'acme/unlisted-7b',
          workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 } } },
        }),
        error: null,
      },
    ];
    writeFileSync(join(dir, 'sweep', 'points.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const side = readSweepPoints(join(dir, 'sweep'));
    expect(side.points.map((p) => p.placeholder)).toEqual([
      'placeholder pass times (fixed 10 ms with prefill work, 2 ms otherwise): model acme/unlisted-7b is not in the catalog',
      undefined,
    ]);

    const result = sampleResult();
    result.inputs.sim_placeholder = {
      points: 3,
      reason: 'placeholder pass times (fixed 10 ms with prefill work, 2 ms otherwise): no GPU is named',
    };
    const said =
      '3 simulated points ran on placeholder pass times (fixed 10 ms with prefill work, 2 ms otherwise): no GPU is named; the MAPEs score those placeholders, not a prediction';
    expect(formatTerminalTable(result).split('\n')[1]).toBe(`note: ${said}`);
    expect(formatMarkdownReport(result)).toContain(`- ${said}\n`);
    expect(formatTerminalTable(sampleResult())).not.toMatch(/placeholder/);
  });
});

describe('score report files', () => {
  it('prints the MAPE table with the baseline beside, groups, unmatched points and limits', () => {
    const result = sampleResult();
    const limits = checkLimits(result, [
      { metric: 'time_to_first_token.avg', maxMape: 1 },
      { metric: 'inter_token_latency.avg', maxMape: 50 },
    ]);
    const text = formatTerminalTable(result, limits);
    const lines = text.split('\n');
    expect(lines[0]).toBe('servesim score: after <new> against 6 measured points, matched on concurrency, isl');
    expect(lines[1]).toMatch(
      /^metric\s+unit\s+points\s+MAPE % before\s+MAPE % after <new>\s+change\s+shape % before\s+shape % after <new>$/,
    );
    const ttft = result.metrics['time_to_first_token.avg'];
    expect(text).toContain(`${(ttft.baseline_mape as number).toFixed(2)}`);
    expect(text).toMatch(/time_to_first_token\.avg\s+ms\s+6\s+[\d.]+\s+[\d.]+\s+-[\d.]+/);
    expect(text).toContain('by isl:');
    expect(text).toContain('unmatched simulated points (1): sweep/points.jsonl:9 (abc) (status failed: boom <b>)');
    expect(text).toContain('unmatched measured points (1): concurrency=8, isl=128');
    expect(text).toContain(`FAIL: time_to_first_token.avg: MAPE ${(ttft.mape as number).toFixed(2)} % is above the limit 1 %`);
    expect(text).toMatch(/ok: inter_token_latency\.avg: MAPE [\d.]+ % <= 50 %/);
  });

  it('writes report.md with every label escaped as report.html escapes it: a <script> label stays text', () => {
    const result = sampleResult();
    result.inputs.sim_label = '<script>alert(1)</script>';
    result.inputs.sim = 'out/`sim`';
    result.inputs.measured_notes = ['[click](javascript:alert(1)) & *bold*'];
    const markdown = formatMarkdownReport(result);
    expect(markdown).not.toMatch(/<script|<b>|<new>/);
    expect(markdown.split('\n')[0]).toBe('# Score of &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(markdown).toContain('- simulated: `` out/`sim` ``');
    expect(markdown).toContain('  - \\[click\\](javascript:alert(1)) &amp; \\*bold\\*');
    // The failed sim point's reason, `boom <b>`, in the unmatched list; the table header names the label too.
    expect(markdown).toContain('(status failed: boom &lt;b&gt;)');
    expect(markdown).toContain('MAPE % &lt;script&gt;alert(1)&lt;/script&gt;');
    // The HTML report escapes the same texts.
    expect(escapeHtml('<script>alert(1)</script>')).toBe('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(markdownText('a | b')).toBe('a | b');
  });

  it('writes JSON in the documented shape, with non-finite numbers as null', () => {
    const result = sampleResult();
    result.points[0].error = Infinity;
    const json = JSON.parse(formatScoresJson(result)) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(['metrics', 'points', 'unmatched', 'match', 'inputs']);
    const metrics = json.metrics as Record<string, Record<string, unknown>>;
    expect(Object.keys(metrics)).toEqual(['time_to_first_token.avg', 'time_to_first_token.p90', 'inter_token_latency.avg']);
    expect(metrics['time_to_first_token.avg']).toMatchObject({ mape: expect.any(Number), shape_error: expect.any(Number), points: 6 });
    const points = json.points as Array<Record<string, unknown>>;
    expect(Object.keys(points[0]).slice(0, 6)).toEqual(['key', 'metric', 'sim', 'measured', 'error', 'ape']);
    expect(points[0].error).toBeNull();
    expect(Object.keys(json.unmatched as object)).toEqual(['sim', 'measured', 'baseline']);
  });

  it('writes a self-contained HTML page that Chromium renders without network', async (context) => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-report-'));
    const result = sampleResult();
    await writeScoreReport(dir, result, checkLimits(result, [{ metric: 'time_to_first_token.avg', maxMape: 1 }]));
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    // 3 metrics against load + APE per point, both sides in one chart.
    expect(html.match(/<svg /g)?.length).toBe(4);
    expect(html).toContain('after &lt;new&gt;');
    expect(html).not.toContain('boom <b>');
    expect(html).toContain('class="fail"');
    if (!existsSync(CHROMIUM)) {
      console.log(`skipped the headless-browser check: no ${CHROMIUM} (Debian: apt-get install -y chromium)`);
      context.skip();
      return;
    }
    const screenshot = join(dir, 'report.png');
    const run = spawnSync(process.execPath, ['scripts/check-report-html.mjs', join(dir, 'report.html'), screenshot], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('ok, 4 charts rendered without network');
    expect(statSync(screenshot).size).toBeGreaterThan(20_000);
  });
});
