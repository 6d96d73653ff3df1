/**
 * The build's snapshot of the shipped data files (src/catalog/shipped-data.ts): every shipped
 * model, GPU and the engines' defaults are in it with the value a fresh read gives, and a file
 * gets a value from it only when its text is exactly the text the build read.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineScheduler } from '../src/catalog/engine-defaults.js';
import { findHardware, findModel, packageRoot } from '../src/catalog/load.js';
import { parseYamlText } from '../src/config/yaml.js';
import {
  intactEngineDefaults,
  intactShippedFolder,
  shippedValue,
  SNAPSHOT_INDEX,
  type SnapshotIndex,
} from '../src/catalog/shipped-data.js';
import { buildDataSnapshot } from '../src/catalog/snapshot-build.js';

const DATA = join(packageRoot(), 'data');

/** The snapshot of the shipped data/, written to a new folder. */
function writtenSnapshot(dataDir = DATA): string {
  const dir = mkdtempSync(join(tmpdir(), 'servesim-snapshot-'));
  for (const { path, json } of buildDataSnapshot(dataDir)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), json);
  }
  return dir;
}

const yamlFiles = (kind: string) => readdirSync(join(DATA, kind)).filter((name) => name.endsWith('.yaml'));

describe('the snapshot of the shipped data files', () => {
  const dir = writtenSnapshot();

  it('holds every shipped model and GPU, each with the value a fresh read of the catalog gives', () => {
    for (const kind of ['models', 'hardware'] as const) {
      expect(yamlFiles(kind).length).toBeGreaterThan(5);
      for (const name of yamlFiles(kind)) {
        const text = readFileSync(join(DATA, kind, name), 'utf8');
        const id = (parseYamlText(text, name) as { id: string }).id;
        const fresh = kind === 'models' ? findModel(id) : findHardware(id);
        expect(fresh, `${kind}/${name}`).toBeDefined();
        expect(shippedValue(kind, name, text, dir), `${kind}/${name}`).toEqual(fresh);
      }
    }
  });

  it("holds the engines' defaults: the rows the scheduler defaults are read from", () => {
    const text = readFileSync(join(DATA, 'engine-defaults.yaml'), 'utf8');
    const rows = shippedValue('engine-defaults', 'engine-defaults.yaml', text, dir) as Array<{ backend: string; values: object }>;
    const raw = parseYamlText(text, 'engine-defaults.yaml') as { rows: Array<{ backend: string; values: object }> };
    expect(rows.length).toBe(raw.rows.length);
    expect(rows.map((row) => [row.backend, row.values])).toEqual(raw.rows.map((row) => [row.backend, row.values]));
    // What a row says on an H100 (8192 tokens, 1024 sequences under vLLM) is what the defaults give.
    const h100 = findHardware('h100_sxm');
    if (h100 === undefined) throw new Error('no h100_sxm');
    expect(engineScheduler({ backend: 'vllm', hardware: h100, tensor: 1 })).toEqual({
      maxBatchedTokens: 8192,
      maxSequences: 1024,
      chunkedPrefill: true,
    });
  });

  it('gives a value only for the exact text the build read, and a fresh copy each time', () => {
    const text = readFileSync(join(DATA, 'hardware', 'h100_sxm.yaml'), 'utf8');
    const first = shippedValue('hardware', 'h100_sxm.yaml', text, dir) as { memory: { capacity_gb: number } };
    expect(first.memory.capacity_gb).toBe(80);
    first.memory.capacity_gb = 1;
    expect((shippedValue('hardware', 'h100_sxm.yaml', text, dir) as typeof first).memory.capacity_gb).toBe(80);
    // One more comment line, one more space: not the text the build read.
    expect(shippedValue('hardware', 'h100_sxm.yaml', `${text}# edited\n`, dir)).toBeUndefined();
    expect(shippedValue('hardware', 'h100_sxm.yaml', text.replace('capacity_gb: 80', 'capacity_gb:  80'), dir)).toBeUndefined();
    // A file of another name, a kind the text is not of, and no snapshot at all.
    expect(shippedValue('hardware', 'h100_copy.yaml', text, dir)).toBeUndefined();
    expect(shippedValue('models', 'h100_sxm.yaml', text, dir)).toBeUndefined();
    expect(shippedValue('hardware', 'h100_sxm.yaml', text, null)).toBeUndefined();
    expect(shippedValue('hardware', 'h100_sxm.yaml', text)).toBeUndefined(); // the modules as compiled carry none
  });

  it('leaves out a file that does not validate, which is then read and refused at run time', () => {
    const data = mkdtempSync(join(tmpdir(), 'servesim-data-'));
    for (const kind of ['models', 'hardware']) mkdirSync(join(data, kind));
    writeFileSync(join(data, 'engine-defaults.yaml'), readFileSync(join(DATA, 'engine-defaults.yaml')));
    const good = readFileSync(join(DATA, 'hardware', 'l40s.yaml'), 'utf8');
    writeFileSync(join(data, 'hardware', 'l40s.yaml'), good);
    writeFileSync(
      join(data, 'hardware', 'h100_sxm.yaml'),
      readFileSync(join(DATA, 'hardware', 'h100_sxm.yaml'), 'utf8').replace('tdp_w:', 'tdp_w: -'),
    );
    writeFileSync(join(data, 'hardware', 'bad_yaml.yaml'), 'id: [unclosed\n');
    const paths = buildDataSnapshot(data).map((file) => file.path);
    // Without an index: a folder with a file left out is read file by file at run time.
    expect(paths).toEqual(['hardware/l40s.yaml.json', 'engine-defaults.json']);
  });
});

describe("the snapshot's index: shipped files named by their identity on disk", () => {
  const dir = writtenSnapshot();
  const indexFile = join(dir, SNAPSHOT_INDEX);
  const index = JSON.parse(readFileSync(indexFile, 'utf8')) as SnapshotIndex;
  /** A snapshot folder with `index` as its index (the per-file values as the build wrote them). */
  const withIndex = (edit: (copy: SnapshotIndex) => void): string => {
    const other = mkdtempSync(join(tmpdir(), 'servesim-snapshot-'));
    cpSync(dir, other, { recursive: true });
    const copy = structuredClone(index);
    edit(copy);
    writeFileSync(join(other, SNAPSHOT_INDEX), JSON.stringify(copy));
    return other;
  };

  it('lists every shipped file in order, by its status and the names its entry answers to', () => {
    for (const kind of ['models', 'hardware'] as const) {
      expect(index[kind].map((f) => f.name)).toEqual(yamlFiles(kind).sort());
      for (const file of index[kind]) {
        const s = statSync(join(DATA, kind, file.name), { bigint: true });
        expect(file.identity).toBe(`${s.size}:${s.dev}:${s.ino}:${s.mtimeNs}:${s.ctimeNs}`);
        const entry = kind === 'models' ? findModel(file.names[0]) : findHardware(file.names[0]);
        expect(entry?.id.toLowerCase()).toBe(file.names[0]);
        for (const name of file.names) expect(kind === 'models' ? findModel(name) : findHardware(name)).toEqual(entry);
      }
    }
    const h100 = index.hardware.find((f) => f.name === 'h100_sxm.yaml');
    expect(h100?.names).toContain('h100_sxm');
    const s = statSync(join(DATA, 'engine-defaults.yaml'), { bigint: true });
    expect(index.engineDefaults).toBe(`${s.size}:${s.dev}:${s.ino}:${s.mtimeNs}:${s.ctimeNs}`);
  });

  it('takes the shipped folder as intact only while each of its files is the one the build read', () => {
    const folder = join(DATA, 'hardware');
    expect(intactShippedFolder('hardware', folder, dir)?.map((f) => f.name)).toEqual(yamlFiles('hardware').sort());
    // One file of another identity (written since), one file more or less, another order: read file by file.
    const changed = withIndex((copy) => {
      copy.hardware[1].identity = copy.hardware[1].identity.replace(/:(\d+)$/, (_, ns: string) => `:${BigInt(ns) + 1n}`);
    });
    expect(intactShippedFolder('hardware', folder, changed)).toBeUndefined();
    expect(
      intactShippedFolder(
        'hardware',
        folder,
        withIndex((copy) => copy.hardware.pop()),
      ),
    ).toBeUndefined();
    expect(
      intactShippedFolder(
        'hardware',
        folder,
        withIndex((copy) => copy.hardware.push({ name: 'zz.yaml', identity: '1:1:1:1:1', names: ['zz'] })),
      ),
    ).toBeUndefined();
    expect(
      intactShippedFolder(
        'hardware',
        folder,
        withIndex((copy) => copy.hardware.reverse()),
      ),
    ).toBeUndefined();
    // Any folder but the shipped one, and no snapshot at all.
    expect(intactShippedFolder('hardware', writtenSnapshot(), dir)).toBeUndefined();
    expect(intactShippedFolder('hardware', folder, null)).toBeUndefined();
    expect(intactShippedFolder('hardware', folder)).toBeUndefined(); // the modules as compiled carry none
  });

  it("gives the engines' defaults from the snapshot only while the file is the one the build read", () => {
    const file = join(DATA, 'engine-defaults.yaml');
    const rows = intactEngineDefaults(file, dir) as Array<{ backend: string }>;
    expect(rows.length).toBeGreaterThan(5);
    const text = readFileSync(file, 'utf8');
    expect(rows).toEqual(shippedValue('engine-defaults', 'engine-defaults.yaml', text, dir));
    expect(
      intactEngineDefaults(
        file,
        withIndex((copy) => (copy.engineDefaults = '0:0:0:0:0')),
      ),
    ).toBeUndefined();
    expect(intactEngineDefaults(join(DATA, 'models', 'qwen3-32b.yaml'), dir)).toBeUndefined();
  });
});
