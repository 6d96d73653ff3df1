/**
 * What `calibrate engine` prints: with held-out points, their MAPE beside the training one and the
 * score report written; with none (`--train all`), the training MAPE alone, no held-out line with
 * an empty value and no report that was never written.
 */
import { describe, expect, it } from 'vitest';
import { formatEngineText } from '../src/calibrate/engine-command.js';
import { parseMetricList } from '../src/score/metric-names.js';
import type { ScorePoint } from '../src/score/points.js';
import type { ScoreResult } from '../src/score/score-result.js';

const metrics = parseMetricList(['time_to_first_token.avg']);
const point = (concurrency: number, ttft: number): ScorePoint => ({
  source: `c${concurrency}`,
  key: { concurrency },
  metrics: { time_to_first_token: { avg: ttft } },
});
// Measured 100 and 200 ms, simulated 110 and 190: 10 % and 5 % off.
const measured = [point(4, 100), point(8, 200)];
const simulated = [point(4, 110), point(8, 190)];
const score = (mape: number) => ({ metrics: { 'time_to_first_token.avg': { mape } } }) as unknown as ScoreResult;
const headline = { form: 'roofline', replays: 12, constantLines: ['  (constants)'] };

describe('formatEngineText', () => {
  it('prints the held-out MAPE and the score report when points are held out', () => {
    const text = formatEngineText(
      {
        train: [measured[0]],
        holdout: [measured[1]],
        simulated,
        holdoutMape: { 'time_to_first_token.avg': 5 },
        trainScore: score(10),
        wallMs: 1000,
      },
      metrics,
      headline,
      'out/fit',
    );
    expect(text).toContain('held-out MAPE time_to_first_token.avg: 5 %   (training: 10 %)');
    expect(text).toContain('points.csv and out/fit/score/report.html');
  });

  it('prints the training MAPE alone, and no score report, when no point is held out', () => {
    const text = formatEngineText(
      { train: measured, holdout: [], simulated, holdoutMape: { 'time_to_first_token.avg': null }, trainScore: score(7.5), wallMs: 1000 },
      metrics,
      headline,
      'out/fit',
    );
    expect(text).toContain('training MAPE time_to_first_token.avg: 7.5 %');
    expect(text).toContain('no point held out');
    expect(text).not.toContain('held-out MAPE');
    expect(text).not.toContain('report.html');
    expect(text).toMatch(/wrote out\/fit\/fit\.json, fitted-config\.yaml, snippet\.yaml, points\.csv\n$/);
  });
});
