import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IntDeque } from '../src/core/int-deque.js';

describe('IntDeque', () => {
  it('behaves like an array under any mix of operations, across wrap-around and growth', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('pushBack' as const), value: fc.integer() }),
      fc.record({ kind: fc.constant('pushFront' as const), value: fc.integer() }),
      fc.record({ kind: fc.constant('popFront' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const deque = new IntDeque(4);
        const model: number[] = [];
        for (const o of ops) {
          if (o.kind === 'pushBack') {
            deque.pushBack(o.value);
            model.push(o.value);
          } else if (o.kind === 'pushFront') {
            deque.pushFront(o.value);
            model.unshift(o.value);
          } else if (model.length > 0) expect(deque.popFront()).toBe(model.shift());
          expect(deque.size).toBe(model.length);
        }
        expect(Array.from({ length: deque.size }, (_, i) => deque.at(i))).toEqual(model);
      }),
      { numRuns: 300, seed: 13 },
    );
  });
});
