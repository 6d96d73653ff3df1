/**
 * The engine defaults' version match without the PEP 440 parser (`releaseSatisfies`): for release
 * versions and clauses of release versions it must decide as the parser does, and it must leave
 * every other version or specifier to the parser (undefined).
 */
import { satisfies } from '@renovatebot/pep440';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { releaseSatisfies } from '../src/catalog/engine-defaults.js';

const release = fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.'));
const clause = fc.tuple(fc.constantFrom('>=', '<=', '==', '>', '<'), release).map(([op, v]) => `${op}${v}`);
const specifier = fc.array(clause, { minLength: 1, maxLength: 3 }).map((clauses) => clauses.join(','));

describe('release versions matched without the PEP 440 parser', () => {
  it('decides as the parser does, for release versions and release clauses', () => {
    fc.assert(
      fc.property(release, specifier, (version, spec) => {
        expect(releaseSatisfies(version, spec), `${version} ${spec}`).toBe(satisfies(version, spec, { prereleases: true }));
      }),
      { numRuns: 3000 },
    );
  });

  it('worked examples: zero padding, both ends of a range', () => {
    expect(releaseSatisfies('0.19.0', '>=0.9.0')).toBe(true);
    expect(releaseSatisfies('0.9', '>=0.9.0')).toBe(true);
    expect(releaseSatisfies('0.9.0', '>=0.8.4,<0.9.0')).toBe(false);
    expect(releaseSatisfies('0.8.4', '>=0.8.4,<0.9.0')).toBe(true);
    expect(releaseSatisfies('1.0.0', '==1')).toBe(true);
    expect(releaseSatisfies('0.10.0', '<0.9.0')).toBe(false);
  });

  it('leaves anything else to the parser', () => {
    for (const [version, spec] of [
      ['0.9.0rc1', '>=0.9.0'],
      ['v0.9.0', '>=0.9.0'],
      ['0.9.0.post1', '>0.9.0'],
      ['0.9.0', '~=0.9'],
      ['0.9.0', '==0.9.*'],
      ['0.9.0', '!=0.9.1'],
      ['0.9.0', '>= 0.9.0'],
      ['0.9.0', '>=0.9.0rc1'],
    ])
      expect(releaseSatisfies(version, spec), `${version} ${spec}`).toBeUndefined();
  });
});
