/**
 * The built command line reads the shipped catalog from the build's snapshot
 * (src/catalog/shipped-data.ts) as long as a file's text is the text the build read, and parses
 * the file as soon as it is not. Run on a copy of the built package whose snapshot and data files
 * are edited, so that which one was read shows in the replay's printed price.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

/** A copy of the built package: its command line, its data files and its package.json, with node_modules linked. */
function builtCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'servesim-built-'));
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  cpSync(join(ROOT, 'dist', 'src', 'cli'), join(dir, 'dist', 'src', 'cli'), { recursive: true });
  for (const part of ['models', 'hardware', 'engine-defaults.yaml']) {
    cpSync(join(ROOT, 'data', part), join(dir, 'data', part), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

function pricePerGpuHour(dir: string): string {
  const config = join(ROOT, 'sweeps', 'configs', 'qwen3-32b-h100-tp2.yaml');
  const run = spawnSync(
    process.execPath,
    [join(dir, 'dist', 'src', 'cli', 'main.js'), 'replay', config, '--set', 'traffic.stop={requests: 1}'],
    {
      encoding: 'utf8',
    },
  );
  expect(run.status, run.stderr).toBe(0);
  const line = run.stdout.split('\n').find((l) => l.startsWith('Price per GPU-hour'));
  return line?.trim().split(/\s+/).pop() ?? '';
}

describe("the built command line's snapshot of the shipped data files", () => {
  it('gives the value the build validated while the file is unchanged, and the file itself once it is edited', () => {
    const dir = builtCopy();
    expect(pricePerGpuHour(dir)).toBe('3.99');
    // The snapshot's value is what the command reads: a value edited there (the text kept) shows.
    const snapshot = join(dir, 'dist', 'src', 'cli', 'data-snapshot', 'hardware', 'h100_sxm.yaml.json');
    const file = JSON.parse(readFileSync(snapshot, 'utf8')) as { text: string; value: { price: { per_gpu_hour: number } } };
    file.value.price.per_gpu_hour = 12.5;
    writeFileSync(snapshot, JSON.stringify(file));
    expect(pricePerGpuHour(dir)).toBe('12.50');
    // A comment added to the data file: not the text the build read, so the file is parsed.
    appendFileSync(join(dir, 'data', 'hardware', 'h100_sxm.yaml'), '# edited\n');
    expect(pricePerGpuHour(dir)).toBe('3.99');
  });

  it('takes a file as the build read it, without reading it, while its identity on disk is unchanged', async () => {
    const dir = builtCopy();
    // The copy's files are other files (other inodes): its index is written again for them, as a build would.
    const { buildDataSnapshot } = (await import(pathToFileURL(join(ROOT, 'dist', 'src', 'catalog', 'snapshot-build.js')).href)) as {
      buildDataSnapshot: (dataDir: string) => Array<{ path: string; json: string }>;
    };
    const index = buildDataSnapshot(join(dir, 'data')).find((file) => file.path === 'index.json');
    expect(index).toBeDefined();
    writeFileSync(join(dir, 'dist', 'src', 'cli', 'data-snapshot', 'index.json'), index?.json ?? '');
    // A value edited in the snapshot, and its text too: the file is not compared with that text,
    // so the value shows only if the index named the file unchanged.
    const snapshot = join(dir, 'dist', 'src', 'cli', 'data-snapshot', 'hardware', 'h100_sxm.yaml.json');
    const file = JSON.parse(readFileSync(snapshot, 'utf8')) as { text: string; value: { price: { per_gpu_hour: number } } };
    file.value.price.per_gpu_hour = 12.5;
    file.text = 'not the text of the file';
    writeFileSync(snapshot, JSON.stringify(file));
    expect(pricePerGpuHour(dir)).toBe('12.50');
    // The data file written to, even with the same text: read and parsed.
    const data = join(dir, 'data', 'hardware', 'h100_sxm.yaml');
    writeFileSync(data, readFileSync(data));
    expect(pricePerGpuHour(dir)).toBe('3.99');
  });
});
