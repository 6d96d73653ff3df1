/**
 * The console's number format is Intl's en-US format written out (Intl's first use costs every
 * command its locale data's start-up): it must print what `toLocaleString('en-US', ...)` prints,
 * digit for digit, including ties (1.005 -> 1.01: the shortest decimal is rounded, not the binary
 * value) and carries (999.995 -> 1,000.00).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCount } from '../src/config/limits.js';
import { formatDecimal, formatInteger, formatNumber } from '../src/io/format-number.js';

const intl = (x: number, min: number, max: number) => x.toLocaleString('en-US', { minimumFractionDigits: min, maximumFractionDigits: max });
const DIGITS: [number, number][] = [
  [2, 2],
  [2, 9],
  [0, 0],
  [0, 3],
];

describe('formatDecimal', () => {
  it.each([
    [1.005, 2, 2, '1.01'],
    [2.675, 2, 2, '2.68'],
    [999.995, 2, 2, '1,000.00'],
    [-0.001, 2, 2, '-0.00'],
    [1234567.891, 2, 2, '1,234,567.89'],
    [0.000123, 2, 9, '0.000123'],
    [1e21, 0, 0, '1,000,000,000,000,000,000,000'],
    [5e-8, 2, 2, '0.00'],
    [-1234567, 0, 0, '-1,234,567'],
  ])('%s with %i to %i fraction digits is %s', (x, min, max, want) => {
    expect(formatDecimal(x, min, max)).toBe(want);
    expect(intl(x, min, max)).toBe(want);
  });

  it("prints what Intl's en-US format prints for any finite number", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(...DIGITS), (x, [min, max]) => {
        expect(formatDecimal(x, min, max)).toBe(intl(x, min, max));
      }),
      { numRuns: 20_000 },
    );
  });

  it('rounds ties of short decimals as Intl does', () => {
    // Values with a 5 just past the kept digits: the case where the binary value and its shortest decimal round apart.
    const tie = fc
      .tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 12 }))
      .map(([n, scale]) => (n * 10 + 5) / 10 ** scale);
    fc.assert(
      fc.property(tie, fc.constantFrom(...DIGITS), (x, [min, max]) => {
        expect(formatDecimal(x, min, max)).toBe(intl(x, min, max));
      }),
      { numRuns: 20_000 },
    );
  });

  it('formatNumber, formatInteger and formatCount keep their formats', () => {
    expect(formatNumber(1234.5)).toBe('1,234.50');
    expect(formatNumber(0.0012345)).toBe('0.00123');
    expect(formatNumber(3e-7)).toBe('0.00');
    expect(formatInteger(337296)).toBe('337,296');
    expect(formatCount(1_000_000_000)).toBe('1,000,000,000');
    expect(formatCount(2.5)).toBe('2.5');
  });
});
