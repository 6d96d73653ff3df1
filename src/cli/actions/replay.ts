/**
 * What `servesim replay RUN.yaml [--set k=v]... [--out DIR] [--per-request] [--json] [--aiperf]`
 * does (its options are in `commands/replay.ts`): one replay, printed as an AIPerf-style table
 * (or the summary JSON), optionally written to DIR. Loaded when the command runs.
 */
import { join } from 'node:path';
import { loadRunConfig } from '../../config/load.js';
import { loadVllmLogRunConfig } from '../../config/vllm-log-config.js';
import { isVllmLog } from '../../io/read-vllm-log.js';
import type { RequestRecord } from '../../core/report-types.js';
import { checkOutputDir, writeOutputFiles, type OutputContent } from '../../io/write-output.js';
import { replay } from '../../replay.js';
import { formatSummaryTable } from '../format-table.js';
import { reportError } from '../report-error.js';
import { writeStdout } from '../stdout.js';

export interface ReplayArgs {
  config: string;
  set: string[];
  out?: string;
  perRequest: boolean;
  json: boolean;
  aiperf: boolean;
  skipInvalidRows: boolean;
  pricePerGpuHour?: number;
}

function* jsonLines(records: RequestRecord[]): Generator<string> {
  for (const record of records) yield `${JSON.stringify(record)}\n`;
}

export async function runReplayCommand(args: ReplayArgs): Promise<void> {
  // A bad output folder is found before the run, and nothing is written until the run is done.
  if (args.out !== undefined) checkOutputDir(args.out);
  // A vLLM request log (its folder or its requests.jsonl) is a run config of its own: the engine
  // of its meta.json, its requests at their queue times (docs/request-logs.md).
  const loaded = isVllmLog(args.config)
    ? loadVllmLogRunConfig(args.config, args.set, { skipInvalid: args.skipInvalidRows })
    : loadRunConfig(args.config, args.set);
  // AIPerf's per-request JSONL needs the per-request records.
  const result = replay(loaded.config, {
    baseDir: loaded.baseDir,
    perRequest: args.perRequest || args.aiperf,
    skipInvalidTraceRows: args.skipInvalidRows,
    label: loaded.file,
    perRequestFlag: args.perRequest ? '--per-request' : '--aiperf',
    aiperf: args.aiperf,
    pricePerGpuHour: args.pricePerGpuHour,
  });
  const skipped = result.summary.input?.skipped_trace_rows ?? 0;
  if (skipped > 0) process.stderr.write(`warning: skipped ${skipped} invalid row(s) of ${result.summary.input?.trace}\n`);
  // Every output of the replay is written as one group: they appear together or not at all.
  const written: string[] = [];
  const files: Array<[string, OutputContent]> = [];
  if (args.out !== undefined) {
    files.push([join(args.out, 'summary.json'), JSON.stringify(result.summary, null, 2) + '\n']);
    written.push(join(args.out, 'summary.json'));
    if (result.requests && args.perRequest) {
      files.push([join(args.out, 'requests.jsonl'), jsonLines(result.requests)]);
      written.push(join(args.out, 'requests.jsonl'));
    }
  }
  if (args.aiperf) {
    const { aiperfArtifactFiles, aiperfFolderName } = await import('../../io/write-aiperf-artifacts.js');
    const dir = join(args.out ?? '.', aiperfFolderName(loaded.config));
    checkOutputDir(dir, 'AIPerf folder');
    files.push(...aiperfArtifactFiles(dir, result.summary, result.requests, loaded.config));
    written.push(`${dir}/ (AIPerf artifacts)`);
  }
  writeOutputFiles(files);
  if (args.json) writeStdout(JSON.stringify(result.summary, null, 2) + '\n');
  else {
    writeStdout(formatSummaryTable(result.summary) + '\n');
    if (written.length > 0) writeStdout(`wrote ${written.join(', ')}\n`);
  }
}

/**
 * The replay command as the command line runs it, errors reported, for main.ts's direct path
 * (replay-arguments.ts): its exit status, as cli.ts's `main` gives it.
 */
export async function runReplayMain(args: ReplayArgs): Promise<number> {
  try {
    await runReplayCommand(args);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    return reportError(err);
  }
}
