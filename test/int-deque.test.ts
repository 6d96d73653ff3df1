import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IntDeque } from '../src/core/int-deque.js';

describe('IntDeque', () => {
  it('behaves like an array under any mix of single and bulk operations, across wrap-around and growth', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('pushBack' as const), value: fc.integer() }),
      fc.record({ kind: fc.constant('pushFront' as const), value: fc.integer() }),
      fc.record({ kind: fc.constant('popFront' as const) }),
      fc.record({ kind: fc.constant('pushBackRange' as const), values: fc.array(fc.integer(), { maxLength: 40 }) }),
      fc.record({ kind: fc.constant('takeFront' as const), count: fc.nat(40) }),
      fc.record({ kind: fc.constant('reserveWrite' as const), values: fc.array(fc.integer(), { maxLength: 40 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const deque = new IntDeque(4);
        const model: number[] = [];
        for (const o of ops) {
          if (o.kind === 'pushBack') (deque.pushBack(o.value), model.push(o.value));
          else if (o.kind === 'pushFront') (deque.pushFront(o.value), model.unshift(o.value));
          else if (o.kind === 'popFront') {
            if (model.length > 0) expect(deque.popFront()).toBe(model.shift());
          } else if (o.kind === 'pushBackRange') {
            const src = Int32Array.from([7, ...o.values, 9]);
            deque.pushBackRange(src, 1, o.values.length);
            model.push(...o.values);
          } else if (o.kind === 'reserveWrite') {
            deque.reserve(o.values.length);
            const ring = deque.ring;
            const at = deque.backIndex;
            o.values.forEach((v, k) => (ring[(at + k) & deque.ringMask] = v));
            deque.commitBack(o.values.length);
            model.push(...o.values);
          } else {
            const count = Math.min(o.count, model.length);
            const dst = new Int32Array(count + 2);
            deque.takeFront(count, dst);
            expect(Array.from(dst.subarray(0, count))).toEqual(model.splice(0, count));
          }
          expect(deque.size).toBe(model.length);
        }
        expect(Array.from({ length: deque.size }, (_, i) => deque.at(i))).toEqual(model);
      }),
      { numRuns: 300, seed: 13 },
    );
  });
});
