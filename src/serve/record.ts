/**
 * `servesim serve --record FILE` (docs/serving.md, "Record and replay"): every request served,
 * one JSON line each, in arrival order (ids), written as each line and those before it are
 * complete. A line is the `requests.jsonl` line of `replay --per-request` (requestRecordOf) plus
 * the Mooncake trace keys of the same request (`timestamp` its simulated arrival, `input_length`,
 * `output_length`, `hash_ids` unique to the request), so the file is also a trace: replayed
 * offline at its timestamps with the same engine (and the prefix cache off, as the live engine
 * has it), it gives the same engine-side token times. A request whose client went away is
 * `incomplete`, with the tokens it was handed and the output length it had reached.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { requestRecordOf } from '../core/report.js';
import type { RequestTable } from '../core/request-table.js';
import { MOONCAKE_BLOCK_SIZE } from '../io/read-mooncake.js';
import { outputError } from '../io/write-output.js';
import type { FinishedRequest } from './live-engine.js';

export class SessionRecorder {
  private readonly fd: number;
  /** Finished lines waiting for an earlier request to finish. */
  private readonly pending = new Map<number, Record<string, unknown>>();
  private nextId = 0;
  private nextHashId = 0;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly table: RequestTable,
    private readonly blockSize: number = MOONCAKE_BLOCK_SIZE,
  ) {
    try {
      this.fd = openSync(file, 'w');
    } catch (err) {
      throw outputError(file, err);
    }
  }

  add(request: FinishedRequest): void {
    if (this.closed) return;
    const t = this.table;
    const id = request.id;
    const record = requestRecordOf(t, id, request.tokenMs ?? [], request.emittedMs ?? [], false);
    const line = {
      ...record,
      // The live engine counts every request as warmup for its own books (live-run.ts); none is.
      warmup: false,
      ...(request.aborted ? { status: 'incomplete', output_tokens: request.outputTokens } : {}),
      timestamp: request.arrivalMs,
      input_length: request.promptTokens,
      output_length: request.aborted ? t.generated[id] : request.maxTokens,
      hash_ids: [] as number[],
    };
    this.pending.set(id, line);
    this.flush(false);
  }

  /** Writes the lines that follow the last one written (with `all`, every pending line, in id order). */
  private flush(all: boolean): void {
    let text = '';
    const ids = all ? [...this.pending.keys()].sort((a, b) => a - b) : null;
    for (let k = 0; ; k++) {
      const id = ids === null ? this.nextId : ids[k];
      const line = id === undefined ? undefined : this.pending.get(id);
      if (line === undefined) break;
      this.pending.delete(id);
      this.nextId = id + 1;
      // Hash ids are given in file order, so that the bytes do not depend on the order requests end in.
      const blocks = Math.ceil((line.input_length as number) / this.blockSize);
      const hashIds = line.hash_ids as number[];
      for (let b = 0; b < blocks; b++) hashIds.push(this.nextHashId++);
      text += `${JSON.stringify(line)}\n`;
    }
    if (text === '') return;
    try {
      writeSync(this.fd, text);
    } catch (err) {
      throw outputError(this.file, err);
    }
  }

  /** Writes what is left (requests still in flight are not recorded) and closes the file. */
  close(): void {
    if (this.closed) return;
    this.flush(true);
    this.closed = true;
    closeSync(this.fd);
  }
}
