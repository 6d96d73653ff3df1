/** The engine fit's saturation notes: what limit would make the replay saturate where the measurements do. */
import { describe, expect, it } from 'vitest';
import { saturationNotes } from '../src/calibrate/saturation-notes.js';
import { loadRunConfigFromObject } from '../src/config/load.js';
import type { ScorePoint } from '../src/score/points.js';

const point = (concurrency: number, ttft: number): ScorePoint => ({
  source: 'test',
  key: { concurrency, isl: 1000, osl: 200 },
  metrics: { time_to_first_token: { avg: ttft } },
});
const base = loadRunConfigFromObject({ engine: { workers: { aggregated: { parallelism: { replicas: 2 } } } } }, 'run.yaml');

describe('saturation notes', () => {
  it('bracket the KV capacity and sequence cap between the last calm and the first saturated concurrency', () => {
    // Measured: 100 -> 120 ms from 8 to 16 clients (calm), then x5 from 16 to 32 (5 > 1.5 x 2).
    const measured = [point(8, 100), point(16, 120), point(32, 600), point(64, 1300)];
    const simulated = [point(8, 100), point(16, 120), point(32, 150), point(64, 200)];
    const [note] = saturationNotes(measured, simulated, base);
    // 2 ranks: 16 / 2 = 8 and 32 / 2 = 16 requests per rank of 1000 + 200 / 2 = 1100 tokens each.
    expect(note).toContain('saturates from concurrency 32');
    expect(note).toContain('a KV capacity between 8,800 and 17,600 tokens per rank');
    expect(note).toContain('a sequence cap between 8 and 16 per rank');
    expect(note).toContain('unlimited KV');
  });

  it('say nothing where the replay saturates too, or where nothing saturates', () => {
    const measured = [point(8, 100), point(16, 120), point(32, 600)];
    expect(saturationNotes(measured, [point(8, 100), point(16, 120), point(32, 500)], base)).toEqual([]);
    expect(saturationNotes([point(8, 100), point(16, 150)], [point(8, 100), point(16, 150)], base)).toEqual([]);
  });
});
