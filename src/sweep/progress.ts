/**
 * Sweep progress: a redrawn bar (done/total, failures, ETA) when the stream is a terminal, plain
 * lines otherwise (CI, logs): one per failed point, and one per finished point at most every
 * `plainIntervalMs` (every point when it is 0), plus a last one at the end.
 *
 * The ETA weighs points by their expected cost (`point-cost.ts`: requests x output tokens) when
 * the sweep gives it: the time this run has taken per unit of cost done, times the cost left.
 */

export interface ProgressEvent {
  id: string;
  status: 'ok' | 'failed' | 'timeout';
  label: string;
  error?: string;
  /** The point's expected cost, in the units of `start`'s `remainingCost`; 1 when absent. */
  cost?: number;
}

export interface ProgressReporter {
  /**
   * `total` points in this run's slice, `alreadyDone` of them finished in an earlier run;
   * `remainingCost`: the expected cost of the points left to run (their count when absent).
   */
  start(total: number, alreadyDone: number, remainingCost?: number): void;
  point(event: ProgressEvent): void;
  end(): void;
}

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export const silentProgress: ProgressReporter = { start() {}, point() {}, end() {} };

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const mm = String(m).padStart(h > 0 ? 2 : 1, '0');
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(sec).padStart(2, '0')}`;
}

export interface ProgressOptions {
  /** Force the bar or the plain lines; by default the bar on a terminal. */
  mode?: 'bar' | 'plain';
  plainIntervalMs?: number;
  now?: () => number;
}

export function createProgress(stream: ProgressStream, options: ProgressOptions = {}): ProgressReporter {
  const mode = options.mode ?? (stream.isTTY === true ? 'bar' : 'plain');
  const now = options.now ?? (() => performance.now());
  const plainIntervalMs = options.plainIntervalMs ?? 1000;
  let total = 0;
  let done = 0;
  let failed = 0;
  let doneThisRun = 0;
  let costDone = 0;
  let costLeft = 0;
  let startedMs = 0;
  let lastDrawMs = -Infinity;
  let lastLine = '';

  const eta = (): string => {
    const remaining = total - done;
    if (remaining === 0) return '0:00';
    if (doneThisRun === 0 || costDone <= 0) return '--:--';
    return formatDuration((((now() - startedMs) / costDone) * Math.max(0, costLeft)) / 1000);
  };
  const counts = () => `${done}/${total} done, ${failed} failed, ETA ${eta()}`;

  const drawBar = (force: boolean) => {
    const t = now();
    if (!force && t - lastDrawMs < 100) return;
    lastDrawMs = t;
    const width = 24;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${counts()}`;
    const pad = lastLine.length > line.length ? ' '.repeat(lastLine.length - line.length) : '';
    stream.write(`\r${line}${pad}`);
    lastLine = line;
  };

  return {
    start(n, alreadyDone, remainingCost) {
      total = n;
      done = alreadyDone;
      costLeft = remainingCost ?? n - alreadyDone;
      startedMs = now();
      if (mode === 'bar') drawBar(true);
      else stream.write(`sweep: ${n} points, ${alreadyDone} already done, ${n - alreadyDone} to run\n`);
    },
    point(event) {
      done++;
      doneThisRun++;
      costDone += event.cost ?? 1;
      costLeft -= event.cost ?? 1;
      const isFailure = event.status !== 'ok';
      if (isFailure) failed++;
      if (mode === 'bar') {
        if (isFailure) {
          stream.write(`\r${' '.repeat(lastLine.length)}\r${event.status} ${event.id} (${event.label}): ${event.error ?? ''}\n`);
          lastLine = '';
        }
        drawBar(isFailure || done === total);
        return;
      }
      const t = now();
      if (isFailure) {
        stream.write(`sweep: ${counts()} | ${event.status} ${event.id} (${event.label}): ${event.error ?? ''}\n`);
        lastDrawMs = t;
      } else if (t - lastDrawMs >= plainIntervalMs || done === total) {
        stream.write(`sweep: ${counts()} | ok ${event.id} (${event.label})\n`);
        lastDrawMs = t;
      }
    },
    end() {
      if (mode === 'bar') {
        drawBar(true);
        stream.write('\n');
      }
    },
  };
}
