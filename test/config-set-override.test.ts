import { roleOf } from '../src/config/roles.js';
import { describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../src/config/errors.js';
import { loadRunConfig, loadRunConfigFromObject } from '../src/config/load.js';
import { applySet, parseSetAssignment } from '../src/config/set-override.js';
import { thrownBy } from './helpers/errors.js';

const errorOf = (fn: () => unknown): ConfigError => thrownBy(fn, ConfigError);

describe('applySet', () => {
  it('parses the value as YAML: numbers, booleans, strings and mappings', () => {
    expect(applySet({}, 'a=512')).toEqual({ a: 512 });
    expect(applySet({}, 'a=0.25')).toEqual({ a: 0.25 });
    expect(applySet({}, 'a=true')).toEqual({ a: true });
    expect(applySet({}, 'a=max')).toEqual({ a: 'max' });
    expect(applySet({}, "a='512'")).toEqual({ a: '512' });
    expect(applySet({}, 'a={type: fixed, blocks: 100}')).toEqual({ a: { type: 'fixed', blocks: 100 } });
    expect(applySet({}, 'a=')).toEqual({ a: null });
  });

  it('splits at the first = only', () => {
    expect(applySet({}, 'engine.model=a=b')).toEqual({ engine: { model: 'a=b' } });
  });

  it('creates missing intermediate mappings and keeps the siblings', () => {
    expect(applySet({ engine: { model: 'm' } }, 'engine.workers.aggregated.scheduler.max_sequences=512')).toEqual({
      engine: { model: 'm', workers: { aggregated: { scheduler: { max_sequences: 512 } } } },
    });
  });

  it('replaces a null intermediate (an empty YAML block) with a mapping', () => {
    expect(applySet({ engine: { tokenization: null } }, 'engine.tokenization.workers=2')).toEqual({
      engine: { tokenization: { workers: 2 } },
    });
  });

  it('does not modify the object it is given', () => {
    const raw = { engine: { model: 'm' } };
    applySet(raw, 'engine.model=n');
    expect(raw).toEqual({ engine: { model: 'm' } });
  });

  it('rejects setting a key inside a non-mapping, naming the path', () => {
    const err = errorOf(() => applySet({ engine: { model: 'm' } }, 'engine.model.name=x'));
    expect(err.message).toBe('--set: engine.model: is "m", not a mapping, so engine.model.name=x cannot set a key inside it');
    expect(err.path).toBe('engine.model');
  });

  it('rejects an assignment without =', () => {
    expect(errorOf(() => applySet({}, 'engine.model')).message).toBe('--set: "engine.model" has no "=": write path=value');
  });

  it('rejects an empty path segment', () => {
    expect(errorOf(() => applySet({}, 'engine..model=x')).message).toBe(
      '--set: "engine..model=x": the path must be dotted keys, like a.b.c',
    );
  });

  it('rejects a value that is not valid YAML', () => {
    const err = errorOf(() => parseSetAssignment('a.b={x: 1'));
    expect(err.path).toBe('a.b');
    expect(err.message).toMatch(/^--set: a\.b: the value is not valid YAML: /);
  });

  it('refuses a tag on the value, naming the override, and writes nothing to stderr', () => {
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      for (const [assignment, tag] of [
        ['engine.model=!!js/function "x"', '!!js/function'],
        ['engine.model=!foo x', '!foo'],
        ['engine.model=!!binary aGVsbG8=', '!!binary'],
        ['traffic.load=!load {type: poisson}', '!load'],
      ]) {
        const err = errorOf(() => parseSetAssignment(assignment));
        expect(err.message).toBe(
          `--set: ${assignment.slice(0, assignment.indexOf('='))}: the value is not valid YAML: the tag ${tag} is not supported;` +
            ' write a plain value (a string, number, boolean, list or mapping) without a tag',
        );
      }
      expect(warned).not.toHaveBeenCalled();
    } finally {
      warned.mockRestore();
    }
    // The core tags are plain values.
    expect(parseSetAssignment('engine.model=!!str 512').value).toBe('512');
  });

  it('rejects keys that would reach the object prototype', () => {
    expect(errorOf(() => applySet({}, '__proto__.x=1')).message).toBe('--set: __proto__.x: key "__proto__" is not allowed');
  });
});

describe('loadRunConfig with --set', () => {
  it('applies overrides before validation, in order', () => {
    const { config } = loadRunConfig('test/fixtures/config/full.yaml', [
      'engine.workers.aggregated.scheduler.max_sequences=512',
      'traffic.load={type: concurrency, concurrency: 4}',
      'traffic.stop={requests: 50}',
      'engine.context_length=max',
    ]);
    expect(roleOf(config.engine, 'aggregated').scheduler.max_sequences).toBe(512);
    expect(config.traffic.load).toEqual({ type: 'concurrency', concurrency: 4, ramp_up_ms: 0 });
    expect(config.traffic.stop).toEqual({ requests: 50 });
    expect(config.engine.context_length).toBe('max');
  });

  it('names the override in an error at the field it set', () => {
    const err = errorOf(() => loadRunConfigFromObject({}, 'run.yaml', ['engine.detokenization.workers=0']));
    expect(err.message).toBe(
      'run.yaml (with --set engine.detokenization.workers=0): engine.detokenization.workers: must be a positive integer, got 0',
    );
    expect(err.file).toBe('run.yaml');
    expect(err.issues[0].setBy).toBe('engine.detokenization.workers=0');
  });

  it('names the override in an error inside the mapping it set', () => {
    const err = errorOf(() => loadRunConfigFromObject({}, 'run.yaml', ['traffic.load={type: poisson}']));
    expect(err.message).toBe(
      'run.yaml (with --set traffic.load={type: poisson}): traffic.load.requests_per_second: is required with type' +
        ' poisson (must be a positive finite number)',
    );
  });

  it('does not name an override in an error elsewhere', () => {
    const err = errorOf(() => loadRunConfigFromObject({ report: { warmup_requests: -1 } }, 'run.yaml', ['engine.model=x']));
    expect(err.message).toBe('run.yaml: report.warmup_requests: must be a non-negative integer, got -1');
  });

  it('names the override that put an unknown key', () => {
    const err = errorOf(() => loadRunConfigFromObject({}, 'run.yaml', ['engine.workers.aggregated.schedule.max_sequences=8']));
    expect(err.message).toMatch(
      /^run\.yaml \(with --set engine\.workers\.aggregated\.schedule\.max_sequences=8\): engine\.workers\.aggregated\.schedule: unknown key/,
    );
  });

  it('says that prefill workers need decode workers, in an override and in a file', () => {
    const set = errorOf(() => loadRunConfigFromObject({}, 'run.yaml', ['engine.workers.prefill.parallelism.tensor=2']));
    expect(set.exitCode).toBe(2);
    expect(set.message).toBe(
      'run.yaml: engine.workers.decode: is required with prefill workers (disaggregated serving needs both pools; write aggregated workers otherwise)',
    );
    const file = errorOf(() => loadRunConfigFromObject({ engine: { workers: { decode: {} } } }, 'run.yaml'));
    expect(file.message).toMatch(/^run\.yaml: engine\.workers\.prefill: is required with decode workers/);
    // Both, by override: a disaggregated run.
    const both = loadRunConfigFromObject({}, 'run.yaml', [
      'engine.workers.prefill.parallelism.tensor=2',
      'engine.workers.decode.parallelism.replicas=2',
      'engine.kv_transfer.kv_bytes_per_token=100',
      'engine.kv_transfer.bandwidth_gb_per_s=10',
    ]);
    expect(Object.keys(both.engine.workers)).toEqual(['prefill', 'decode']);
    // A misspelt role is still an unknown key.
    const typo = errorOf(() => loadRunConfigFromObject({ engine: { workers: { agregated: {} } } }, 'run.yaml'));
    expect(typo.message).toBe('run.yaml: engine.workers.agregated: unknown key (allowed: aggregated, prefill, decode)');
  });

  it('names the override when a later one makes a rule fail', () => {
    const err = errorOf(() =>
      loadRunConfigFromObject({ traffic: { stop: { requests: 5 } } }, 'run.yaml', ['traffic.stop.max_virtual_time_seconds=9']),
    );
    expect(err.message).toBe(
      'run.yaml (with --set traffic.stop.max_virtual_time_seconds=9): traffic.stop: must set exactly one of requests,' +
        ' requests_per_load_unit, max_virtual_time_seconds, got requests, max_virtual_time_seconds',
    );
  });
});
