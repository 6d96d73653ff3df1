import { describe, expect, it } from 'vitest';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { expectedCost, expectedCosts } from '../src/sweep/point-cost.js';

const config = (raw: unknown) => loadRunConfigFromObject(raw, 'test.yaml');

describe('expected cost of a sweep point', () => {
  it('is requests times the mean output tokens of a request', () => {
    // 10 requests a slot at concurrency 64 = 640 requests; outputs uniform in [128, 256], mean 192.
    const closed = config({
      traffic: {
        source: { type: 'synthetic', input_tokens: 1024, output_tokens: 256, random_range_ratio: 0.5 },
        load: { type: 'concurrency', concurrency: 64 },
        stop: { requests_per_load_unit: 10 },
      },
    });
    expect(expectedCost(closed)).toBe(640 * 192);
    // A Poisson load of 5 requests/s for 60 s sends about 300 requests of 128 tokens.
    const open = config({ traffic: { load: { type: 'poisson', requests_per_second: 5 }, stop: { max_virtual_time_seconds: 60 } } });
    expect(expectedCost(open)).toBe(300 * 128);
    // Sessions: a request is a turn.
    const sessions = config({
      traffic: {
        source: { type: 'synthetic-session', turns: 3, new_input_tokens_per_turn: 100, output_tokens_per_turn: 50 },
        stop: { requests: 30 },
      },
    });
    expect(expectedCost(sessions)).toBe(30 * 50);
  });

  it('is unknown before the replay for a time cap on a closed loop, and then the mean of the known ones', () => {
    const capped = config({ traffic: { stop: { max_virtual_time_seconds: 60 } } });
    expect(expectedCost(capped)).toBeNull();
    const a = config({ traffic: { stop: { requests: 10 } } });
    const b = config({ traffic: { stop: { requests: 30 } } });
    // The default source sends 128 output tokens a request: 1280 and 3840, mean 2560.
    expect(expectedCosts([a, capped, b])).toEqual([1280, 2560, 3840]);
    expect(expectedCosts([capped])).toEqual([1]);
  });
});
