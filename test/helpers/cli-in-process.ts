/**
 * Runs the servesim command line in this process (`src/cli/cli.ts`'s `main`): argv in, exit
 * status, stdout and stderr out. The process's working folder, exit code and output streams
 * are swapped for the call and restored after it, so calls must not overlap (vitest runs the
 * tests of a file one at a time). Costs a few ms a call instead of a Node start.
 */
import { main } from '../../src/cli/cli.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall time of the call, ms. */
  ms: number;
}

type Write = typeof process.stdout.write;

export async function runCliInProcess(argv: string[], cwd: string): Promise<CliRun> {
  const savedCwd = process.cwd();
  const savedExitCode = process.exitCode;
  const savedOut: Write = process.stdout.write.bind(process.stdout);
  const savedErr: Write = process.stderr.write.bind(process.stderr);
  let stdout = '';
  let stderr = '';
  const capture =
    (append: (text: string) => void): Write =>
    (chunk: unknown, ...rest: unknown[]) => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    };
  process.chdir(cwd);
  process.exitCode = undefined;
  process.stdout.write = capture((text) => (stdout += text));
  process.stderr.write = capture((text) => (stderr += text));
  const started = performance.now();
  try {
    const code = await main(argv);
    return { code, stdout, stderr, ms: performance.now() - started };
  } finally {
    process.stdout.write = savedOut;
    process.stderr.write = savedErr;
    process.exitCode = savedExitCode;
    process.chdir(savedCwd);
  }
}
