/**
 * A sweep's pool threads load the replay core and what writes a point's results, nothing of the
 * config layer: the main thread parses configs, reads traces and looks up the catalog, and posts
 * each point as a run description (docs/sweeps.md, "On one machine"). Loading zod, the YAML
 * parser or the catalog would cost every thread its start-up time and memory.
 */
import { describe, expect, it } from 'vitest';
import { loadedBy } from './helpers/imports.js';

describe('a pool thread', () => {
  it('loads no config parser, zod, YAML or catalog', () => {
    const { modules, packages } = loadedBy('sweep/pool-task.ts');
    expect(modules).toContain('replay-run.ts');
    expect(modules).toContain('core/simulation.ts');
    // Of the config layer, only modules of plain functions and constants without imports of their
    // own beyond types: the errors, the limits, the request count (the AIPerf export states it) and the
    // cost arithmetic (a point's summary states its cost).
    const light = new Set(['config/cost.ts', 'config/errors.ts', 'config/limits.ts', 'config/stop.ts']);
    const configLayer = modules.filter((m) => m.startsWith('catalog/') || (m.startsWith('config/') && !light.has(m)));
    expect(configLayer).toEqual([]);
    expect(packages.filter((p) => p === 'zod' || p === 'yaml')).toEqual([]);
  });
});
