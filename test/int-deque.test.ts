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

describe('IntDeque.insertAt and popBack', () => {
  it('keep the order of an array under random operations, across wrap-around and growth', () => {
    const deque = new IntDeque(16);
    const model: number[] = [];
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let step = 0; step < 5000; step++) {
      const op = rand(5);
      if (op === 0 && model.length > 0) expect(deque.popFront()).toBe(model.shift());
      else if (op === 1 && model.length > 0) expect(deque.popBack()).toBe(model.pop());
      else if (op === 2) {
        deque.pushFront(step);
        model.unshift(step);
      } else {
        const pos = rand(model.length + 1);
        deque.insertAt(pos, step);
        model.splice(pos, 0, step);
      }
      expect(deque.size).toBe(model.length);
    }
    expect(Array.from({ length: deque.size }, (_, i) => deque.at(i))).toEqual(model);
  });
});
