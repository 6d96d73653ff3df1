import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSelection, matchesSelection, parseSelection } from '../src/io/selection.js';
import { selectPoints } from '../src/score/pair.js';
import type { ScorePoint } from '../src/score/points.js';

describe('--select conditions', () => {
  it('parses the forms calibrate --train takes', () => {
    expect(parseSelection('source=hardware')).toEqual({ column: 'source', value: 'hardware' });
    expect(parseSelection('concurrency=10|50|100')).toEqual({ column: 'concurrency', value: '10|50|100' });
    expect(parseSelection('isl!=8192')).toEqual({ column: 'isl', op: '!=', value: '8192' });
    expect(parseSelection(' concurrency <= 16 ')).toEqual({ column: 'concurrency', op: '<=', value: '16' });
    expect(parseSelection('model_path=MiniMaxAI/MiniMax-M2.5')).toEqual({ column: 'model_path', value: 'MiniMaxAI/MiniMax-M2.5' });
    for (const bad of ['concurrency', 'concurrency=', '=4', 'concurrency<fast', 'concurrency<4|8']) expect(parseSelection(bad)).toBeNull();
    expect(formatSelection({ column: 'c', op: '>=', value: '8' })).toBe('c>=8');
    expect(formatSelection({ column: 'c', value: '4|8' })).toBe('c=4|8');
  });

  it('compares numbers as numbers and text as text', () => {
    expect(matchesSelection('1024.0', { column: 'isl', value: '1024' })).toBe(true);
    expect(matchesSelection(1024, { column: 'isl', value: '1024.0' })).toBe(true);
    expect(matchesSelection('vllm', { column: 'backend', value: 'vllm|sglang' })).toBe(true);
    expect(matchesSelection('trtllm', { column: 'backend', value: 'vllm|sglang' })).toBe(false);
    expect(matchesSelection('trtllm', { column: 'backend', op: '!=', value: 'vllm|sglang' })).toBe(true);
    expect(matchesSelection(32, { column: 'c', op: '<', value: '32' })).toBe(false);
    expect(matchesSelection(32, { column: 'c', op: '<=', value: '32' })).toBe(true);
    expect(matchesSelection('n/a', { column: 'c', op: '>', value: '1' })).toBe(false);
  });

  it('laws: a list is the union of its values, != is the complement of =, <= and > split every number', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 5 }),
        (x, list) => {
          const value = list.join('|');
          const union = list.some((v) => matchesSelection(x, { column: 'k', value: String(v) }));
          expect(matchesSelection(x, { column: 'k', value })).toBe(union);
          expect(matchesSelection(x, { column: 'k', op: '!=', value })).toBe(!union);
          const t = String(list[0]);
          expect(matchesSelection(x, { column: 'k', op: '<=', value: t })).toBe(!matchesSelection(x, { column: 'k', op: '>', value: t }));
          expect(matchesSelection(x, { column: 'k', op: '<', value: t })).toBe(x < list[0]);
          expect(matchesSelection(String(x), { column: 'k', op: '>=', value: t })).toBe(x >= list[0]);
        },
      ),
    );
  });

  it('selects points by their keys; a condition on a key a point lacks leaves it in', () => {
    const point = (c: number, extra: Record<string, string> = {}): ScorePoint => ({
      source: `c${c}`,
      key: { concurrency: c, ...extra },
      metrics: {},
    });
    const points = [point(4), point(8), point(16), point(32), point(64, { isl: '1024' })];
    const kept = (text: string) => selectPoints(points, [parseSelection(text) ?? { column: '', value: '' }]).map((p) => p.source);
    expect(kept('concurrency=8|32|64')).toEqual(['c8', 'c32', 'c64']);
    expect(kept('concurrency>16')).toEqual(['c32', 'c64']);
    expect(kept('isl=2048')).toEqual(['c4', 'c8', 'c16', 'c32']);
  });
});
