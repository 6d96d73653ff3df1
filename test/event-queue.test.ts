import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventKind, EventQueue, Phase } from '../src/core/event-queue.js';

const PHASE_OF = [Phase.PassEnd, Phase.Arrival, Phase.Arrival, Phase.Arrival, Phase.Arrival];

describe('EventQueue', () => {
  it('pops in (time, phase, push order) for any interleaving of pushes and pops', () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('push' as const), time: fc.integer({ min: 0, max: 30 }), kind: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ op: fc.constant('pop' as const) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const queue = new EventQueue(2);
        const model: Array<{ time: number; phase: number; seq: number; kind: number; target: number }> = [];
        let seq = 0;
        for (const s of steps) {
          if (s.op === 'push') {
            queue.push(s.time, s.kind, seq);
            model.push({ time: s.time, phase: PHASE_OF[s.kind], seq, kind: s.kind, target: seq });
            seq++;
          } else if (model.length > 0) {
            model.sort((a, b) => a.time - b.time || a.phase - b.phase || a.seq - b.seq);
            const next = model.shift()!;
            expect([queue.peekTimeMs(), queue.peekKind(), queue.peekTarget()]).toEqual([next.time, next.kind, next.target]);
            queue.pop();
          }
          expect(queue.size).toBe(model.length);
        }
      }),
      { numRuns: 400, seed: 17 },
    );
  });

  it('orders pass ends before arrivals at one instant, arrivals in push order', () => {
    const queue = new EventQueue();
    queue.push(5, EventKind.ClientAct, 1);
    queue.push(5, EventKind.Tokenized, 2);
    queue.push(5, EventKind.PassEnd, 3);
    const order: number[] = [];
    while (queue.size > 0) {
      order.push(queue.peekTarget());
      queue.pop();
    }
    expect(order).toEqual([3, 1, 2]);
  });
});
