/**
 * Every example of the README, of calibration/README.md and of every docs page runs as written, in
 * order, each page in a folder of its own holding the files a user has, and every output a page
 * shows is what its command prints (scripts/docs-outputs.mjs says which blocks run, how an output
 * block names its command, and what is masked; `npm run docs:outputs` rewrites the outputs that
 * changed). The files of calibration/fitted/ are what calibration/README.md's commands write
 * (`npm run fitted:refresh` rewrites them).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without types
import { FITTED_DIR, FITTED_PAGE, PAGES, ROOT, blocksOf, masked, runPage } from '../scripts/docs-outputs.mjs';

interface Block {
  kind: string;
  line: number;
  code: string;
}
interface Output {
  block: Block;
  actual: string;
  problem: string | null;
  matches: boolean;
}
interface PageRun {
  failures: string[];
  outputs: Output[];
  unmarked: string[];
  fitted: { written: string[]; differ: string[]; notWritten: string[]; notShipped: string[] } | null;
}

const scratch = mkdtempSync(join(tmpdir(), 'servesim-docs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const pages = PAGES as string[];
const blocks = (page: string) => (blocksOf as (markdown: string) => Block[])(readFileSync(join(ROOT as string, page), 'utf8'));

describe('documentation examples and outputs', () => {
  it('finds the examples and the outputs of the pages', () => {
    const runs = (page: string) => blocks(page).filter((b) => ['sh', 'js', 'config'].includes(b.kind)).length;
    for (const page of [
      'README.md',
      'docs/sweeps.md',
      'docs/scoring.md',
      'docs/calibration.md',
      'docs/api.md',
      'docs/config.md',
      FITTED_PAGE,
    ]) {
      expect(runs(page), page).toBeGreaterThan(0);
    }
    for (const page of ['README.md', 'docs/planning.md', 'docs/cli.md', 'docs/calibration.md', 'docs/config.md']) {
      expect(blocks(page).filter((b) => b.kind === 'output').length, page).toBeGreaterThan(0);
    }
  });

  it('masks wall times, and nothing a replay computes', () => {
    const mask = masked as (text: string) => string;
    expect(mask('52 replays in 3.2 s')).toBe(mask('52 replays in 41.9 s'));
    expect(mask('simulated 256 output tokens in 4.79 ms (18.73 us per token)')).toBe(
      mask('simulated 256 output tokens in 5.1 ms (20 us per token)'),
    );
    expect(mask('engine fit (physics form): 3 training points, 2 held out; 20 replays, 6.85 s')).toContain('20 replays, <time> s');
    expect(mask('"wall_ms": 4100,')).toBe(mask('"wall_ms": 12,'));
    expect(mask('Time to First Token (ms)   69.31')).toBe('Time to First Token (ms)   69.31');
    expect(mask('held-out MAPE time_to_first_token.avg: 15.8 %')).toBe('held-out MAPE time_to_first_token.avg: 15.8 %');
  });

  it.each(pages)(
    '%s: every example runs as written, and every output shown is what its command prints',
    (page) => {
      const run = (runPage as (page: string, scratch: string) => PageRun)(page, scratch);
      expect(run.failures, run.failures.join('\n\n')).toEqual([]);
      expect(run.unmarked, 'text and json blocks must say what they are (scripts/docs-outputs.mjs)').toEqual([]);
      for (const output of run.outputs) {
        const where = `${page}:${output.block.line} (npm run docs:outputs rewrites it)`;
        expect(output.problem, where).toBeNull();
        expect(masked(output.actual), where).toBe(masked(output.block.code.replace(/\s+$/, '')));
      }
      if (run.fitted !== null) {
        const why = `${FITTED_DIR} differs from what ${FITTED_PAGE}'s commands write (npm run fitted:refresh rewrites it)`;
        expect({ differ: run.fitted.differ, notWritten: run.fitted.notWritten, notShipped: run.fitted.notShipped }, why).toEqual({
          differ: [],
          notWritten: [],
          notShipped: [],
        });
      }
    },
    1_800_000,
  );
});
