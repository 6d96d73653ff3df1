/**
 * Global setup of both suites: every temporary file or folder a test makes (`mkdtempSync(join(
 * tmpdir(), ...))`, a spawned CLI's own temporary files) goes under one folder of this run, which
 * is removed when the run ends, so `npm test` leaves nothing behind in the system's temporary
 * folder. `os.tmpdir()` reads TMPDIR on every call, and the test processes and the CLIs they spawn
 * inherit it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), 'servesim-test-run-'));
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
  };
}
