/** Every `npx servesim` command in the README runs as written (outputs sent to a temporary folder). */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const scratch = mkdtempSync(join(tmpdir(), 'servesim-readme-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The README's shell commands that call servesim, with line continuations joined. */
function readmeCommands(): string[] {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks
    .flatMap((block) => block.replace(/\\\n\s*/g, '').split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('npx servesim '));
}

describe('README', () => {
  const commands = readmeCommands();
  it('has servesim commands to check', () => {
    expect(commands.length).toBeGreaterThanOrEqual(5);
  });
  // In order: later commands read what earlier ones wrote (the score reads the sweep).
  it('runs every servesim command as written, in order', () => {
    for (const command of commands) {
      const args = command
        .replace(/^npx servesim /, '')
        .replace(/(^|\s)out\//g, `$1${scratch}/`)
        .split(/\s+/);
      const run = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8' });
      expect(run.status, `${command}\n${run.stderr}`).toBe(0);
    }
  }, 120_000);
});
