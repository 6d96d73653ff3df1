/**
 * Client path (docs/client-path.md): tokenization, detokenization and the
 * client's response overhead. Every expected time is derived by hand in the comment above it.
 * Engine: fixed timing, a pass costs 10 ms with prefill plus 2 ms when it emits a token.
 * FNV-1a assignments used below: fnv1a32("0".."3") % 2 = 1, 0, 1, 0.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/errors.js';
import { fnv1a32, fnv1a32OfId } from '../src/core/fnv.js';
import { config, fixedEngine, runCore, traceRows } from './helpers/core-run.js';

const synthetic = (input: number, output: number) => ({ type: 'synthetic', input_tokens: input, output_tokens: output });
const closedLoop = (concurrency: number, overhead?: { base_ms: number; per_output_token_us: number }) =>
  overhead ? { type: 'concurrency', concurrency, response_overhead: overhead } : { type: 'concurrency', concurrency };
const traceSource = { type: 'trace', path: 'mem.jsonl' };
const detok = (workers: number, base_ms: number, per_output_us: number) => ({ workers, base_ms, per_output_us });

function run(engine: Record<string, unknown>, traffic: Record<string, unknown>, trace = null as ReturnType<typeof traceRows> | null) {
  return runCore({ engine: { ...fixedEngine(), ...engine }, traffic }, trace);
}

describe('server assignment', () => {
  it('hashes with FNV-1a 32-bit (reference vectors)', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    expect(fnv1a32('0')).toBe(0x350ca8af);
  });

  it('hashes a request id exactly as the hash of its decimal string', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (id) => fnv1a32OfId(id) === fnv1a32(String(id))));
  });
});

describe('detokenization', () => {
  it("delivers a lone request's outputs after detokenization", () => {
    // Emitted at 12, 14, 16; each job 1 + 0.5 ms: received 13.5, 15.5, 17.5.
    const { records, summary } = run(
      { detokenization: detok(1, 1, 500) },
      { source: synthetic(100, 3), load: closedLoop(1), stop: { requests: 1 } },
    );
    expect(records[0].token_emitted_ms).toEqual([12, 14, 16]);
    expect(records[0].token_ms).toEqual([13.5, 15.5, 17.5]);
    expect(summary.metrics.time_to_first_token?.avg).toBe(13.5);
    expect(summary.ttft_stages.mean_detokenization_ms).toBe(1.5);
    expect(summary.ttft_stages.mean_prefill_ms).toBe(12);
  });

  it('delivers the outputs of one pass to the client together', () => {
    // One server, two outputs per pass: one job of 1 + 2 x 0.5 = 2 ms. Pass ends 12 -> 14 for both;
    // pass ends 14 -> 16.
    const { records } = run(
      { detokenization: detok(1, 1, 500) },
      { source: synthetic(100, 2), load: closedLoop(2), stop: { requests: 2 } },
    );
    expect(records[0].token_ms).toEqual([14, 16]);
    expect(records[1].token_ms).toEqual([14, 16]);
  });

  it('splits a pass over two servers that queue independently, and a request keeps its server', () => {
    // Two servers, 1 + 1 ms per output. Pass 1 ends 12: server 1 has R0, R2 (3 ms: 15), server 0
    // has R1 (2 ms: 14). Pass 2 ends 14: server 1 is busy until 15 -> 18; server 0 free -> 16.
    const { records } = run(
      { detokenization: detok(2, 1, 1000) },
      { source: synthetic(100, 2), load: closedLoop(3), stop: { requests: 3 } },
    );
    expect(records.map((r) => r.token_ms)).toEqual([
      [15, 18],
      [14, 16],
      [15, 18],
    ]);
  });

  it('occupies the server for base_ms on every job', () => {
    // base 3 ms, no per-output cost: emitted 12, 14, 16 -> 15, then 15 -> 18, then 18 -> 21.
    const { records } = run({ detokenization: detok(1, 3, 0) }, { source: synthetic(100, 3), load: closedLoop(1), stop: { requests: 1 } });
    expect(records[0].token_ms).toEqual([15, 18, 21]);
  });

  it('charges nothing for a pass without outputs', () => {
    // ISL 20000: prefill passes end at 10 and 20 with no output; the first token is emitted at 32
    // and received at 33 (one job), the second at 34 -> 35.
    const { records } = run(
      { detokenization: detok(1, 1, 0) },
      { source: synthetic(20000, 2), load: closedLoop(1), stop: { requests: 1 } },
    );
    expect(records[0].token_ms).toEqual([33, 35]);
  });

  it("shares one worker's servers between its attention-DP ranks", () => {
    // Two ranks, one server: R0 (rank 0) and R1 (rank 1) emit in the same lockstep pass and share
    // one job of 1 + 2 x 0.5 = 2 ms: both at 14.
    const { records } = run(
      {
        detokenization: detok(1, 1, 500),
        workers: { aggregated: { parallelism: { attention_data: 2 }, timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 } } },
      },
      { source: synthetic(100, 1), load: closedLoop(2), stop: { requests: 2 } },
    );
    expect(records.map((r) => r.token_ms)).toEqual([[14], [14]]);
  });

  it('gives each replica its own servers', () => {
    // Two replicas, one server each: one output per job, 1.5 ms: both at 13.5.
    const { records } = run(
      {
        detokenization: detok(1, 1, 500),
        workers: { aggregated: { parallelism: { replicas: 2 }, timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 } } },
      },
      { source: synthetic(100, 1), load: closedLoop(2), stop: { requests: 2 } },
    );
    expect(records.map((r) => r.token_ms)).toEqual([[13.5], [13.5]]);
  });

  it("splits a server's pass outputs into jobs of chunk_outputs, each paying base_ms", () => {
    // Three outputs, chunks of 2: 12 -> 12 + 1 + 2 = 15 (R0, R1... in server order), then 15 -> 17.
    // All three requests on one server (workers: 1).
    const { records } = run(
      { detokenization: { ...detok(1, 1, 1000), chunk_outputs: 2 } },
      { source: synthetic(100, 1), load: closedLoop(3), stop: { requests: 3 } },
    );
    expect(records.map((r) => r.token_ms)).toEqual([[15], [15], [17]]);
  });

  it("lets a rejection skip detokenization without delaying its pass's outputs", () => {
    // context_length 150: R1 (ISL 200) is rejected in the pass at 0 and reaches the client at its
    // end, 12, not after the detokenizer; R0's token is emitted at 12 and received at 13.5.
    const { records } = run(
      { context_length: 150, detokenization: detok(1, 1, 500) },
      { source: traceSource, load: closedLoop(2), stop: { requests: 2 } },
      traceRows([
        [0, 100, 1],
        [0, 200, 1],
      ]),
    );
    expect(records[1].status).toBe('rejected');
    expect(records[1].response_received_ms).toBe(12);
    expect(records[0].token_ms).toEqual([13.5]);
  });

  it('keeps pass-end delivery with zero costs, exactly as without the block', () => {
    const traffic = { source: synthetic(300, 7), load: closedLoop(5), stop: { requests: 20 } };
    const plain = run({}, traffic);
    const zero = run(
      { tokenization: { workers: 3, base_ms: 0, per_input_us: 0 }, detokenization: detok(4, 0, 0) },
      { ...traffic, load: closedLoop(5, { base_ms: 0, per_output_token_us: 0 }) },
    );
    expect(zero.records).toEqual(plain.records);
    expect(zero.summary).toEqual(plain.summary);
  });
});

describe('tokenization', () => {
  it('runs one FIFO job per request before the scheduler sees it', () => {
    // One server, 1 ms + 10 us x 100 tokens = 2 ms per request. R0 tokenized at 2, R1 at 4.
    // R0: pass 2 -> 14 (token 1). R1 arrives at 4 and joins the pass at 14: token 1 at 26.
    const { records, summary } = run(
      { tokenization: { workers: 1, base_ms: 1, per_input_us: 10 } },
      { source: synthetic(100, 1), load: closedLoop(2), stop: { requests: 2 } },
    );
    expect(records.map((r) => r.tokenized_ms)).toEqual([2, 4]);
    expect(records.map((r) => r.token_ms)).toEqual([[14], [26]]);
    expect(summary.ttft_stages.mean_tokenization_ms).toBe(3);
    expect(summary.ttft_stages.mean_queue_ms).toBe(5);
  });
});

describe('response overhead', () => {
  const overhead = { base_ms: 1, per_output_token_us: 1000 };

  it("sends the closed-loop slot's next request at receipt plus the response overhead", () => {
    // R0 ends at 14 with 2 tokens: acted at 14 + 1 + 2 = 17, when R1 is sent.
    const { records } = run({}, { source: synthetic(100, 2), load: closedLoop(1, overhead), stop: { requests: 2 } });
    expect(records[0].response_acted_ms).toBe(17);
    expect(records[1].sent_ms).toBe(17);
  });

  it('gives a longer response a longer overhead', () => {
    // R0 has 4 tokens (ends 18): acted 18 + 1 + 4 = 23.
    const { records } = run(
      {},
      { source: traceSource, load: closedLoop(1, overhead), stop: { requests: 2 } },
      traceRows([
        [0, 100, 4],
        [0, 100, 2],
      ]),
    );
    expect(records[1].sent_ms).toBe(23);
  });

  it('makes a rejected request wait base_ms', () => {
    // R0 (ISL 100 >= context_length 50) is rejected in an empty pass at 0: received 0, acted 1.
    const { records } = run(
      { context_length: 50 },
      { source: traceSource, load: closedLoop(1, overhead), stop: { requests: 2 } },
      traceRows([
        [0, 100, 2],
        [0, 10, 2],
      ]),
    );
    expect(records[0].status).toBe('rejected');
    expect(records[1].sent_ms).toBe(1);
  });

  it("holds a rejection's slot until the client acts on it (concurrency 2)", () => {
    // R0 rejected while composing the pass at 0 that prefills R1; received at 12, acted at 17:
    // R2 is sent at 17 on R0's slot (R1's slot frees at 14 + 5 = 19, nothing left to send).
    const { records } = run(
      { context_length: 50 },
      { source: traceSource, load: closedLoop(2, { base_ms: 5, per_output_token_us: 0 }), stop: { requests: 3 } },
      traceRows([
        [0, 200, 2],
        [0, 10, 2],
        [0, 10, 2],
      ]),
    );
    expect(records[0].response_received_ms).toBe(12);
    expect(records[2].sent_ms).toBe(17);
  });

  it('ends worker time with the last response received, not its overhead', () => {
    const { summary } = run(
      {},
      { source: synthetic(100, 2), load: closedLoop(1, { base_ms: 100, per_output_token_us: 0 }), stop: { requests: 1 } },
    );
    expect(summary.run.worker_seconds).toBeCloseTo(0.014, 12);
    expect(summary.run.benchmark_duration_s).toBeCloseTo(0.014, 12);
  });

  it('works with detokenization: the overhead counts from the receipt of the end', () => {
    // Received 13.5, 15.5 (see the lone-request case); acted 15.5 + 1 + 2 = 18.5.
    const { records } = run(
      { detokenization: detok(1, 1, 500) },
      { source: synthetic(100, 2), load: closedLoop(1, overhead), stop: { requests: 2 } },
    );
    expect(records[0].response_acted_ms).toBe(18.5);
    expect(records[1].sent_ms).toBe(18.5);
  });
});

describe('the worked timeline of docs/client-path.md', () => {
  it('matches the table: tokenized 2, emitted 14/16/18, received 15.5/17.5/19.5, acted 23.5', () => {
    const { records, summary } = run(
      { tokenization: { workers: 1, base_ms: 1, per_input_us: 10 }, detokenization: detok(1, 1, 500) },
      { source: synthetic(100, 3), load: closedLoop(1, { base_ms: 1, per_output_token_us: 1000 }), stop: { requests: 2 } },
    );
    const r = records[0];
    expect(r.tokenized_ms).toBe(2);
    expect(r.first_scheduled_ms).toBe(2);
    expect(r.token_emitted_ms).toEqual([14, 16, 18]);
    expect(r.token_ms).toEqual([15.5, 17.5, 19.5]);
    expect(r.response_received_ms).toBe(19.5);
    expect(r.response_acted_ms).toBe(23.5);
    expect(records[1].sent_ms).toBe(23.5);
    expect(r.time_to_first_token).toBe(15.5);
    expect(r.request_latency).toBe(19.5);
    expect(summary.ttft_stages).toEqual({
      mean_frontend_ms: 0,
      mean_tokenization_ms: 2,
      mean_queue_ms: 0,
      mean_prefill_ms: 12,
      mean_detokenization_ms: 1.5,
    });
  });
});

describe('time cap', () => {
  it('leaves a request whose tokens are emitted before the cap but received after it incomplete, with no first-token time', () => {
    // Emitted at 12, received at 17 (base 5); cap at 15 ms.
    const { records, summary } = run(
      { detokenization: detok(1, 5, 0) },
      { source: synthetic(100, 2), load: closedLoop(1), stop: { max_virtual_time_seconds: 0.015 } },
    );
    expect(records[0].status).toBe('incomplete');
    expect(records[0].first_token_emitted_ms).toBe(12);
    expect(records[0].token_ms).toEqual([]);
    expect(records[0].time_to_first_token).toBeNull();
    expect(summary.metrics.time_to_first_token).toBeUndefined();
  });

  it('delivers a job that ends exactly at the cap and nothing after it; the run ends at that job', () => {
    // Emitted at 12 and 14 (the last token). Jobs of 5 ms on one server: 12 -> 17, then 17 -> 22.
    // Cap at 17 ms: the first token is received at 17, the second would be at 22.
    const { records, summary } = run(
      { detokenization: detok(1, 5, 0) },
      { source: synthetic(100, 2), load: closedLoop(1), stop: { max_virtual_time_seconds: 0.017 } },
    );
    expect(records[0].status).toBe('incomplete');
    expect(records[0].token_emitted_ms).toEqual([12, 14]);
    expect(records[0].token_ms).toEqual([17]);
    expect(summary.engine.virtual_end_ms).toBe(17);
  });
});

describe('invalid client-path configs', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['zero detokenization workers', { engine: { detokenization: { workers: 0 } } }, 'engine.detokenization.workers'],
    ['zero tokenization workers', { engine: { tokenization: { workers: 0 } } }, 'engine.tokenization.workers'],
    ['a negative detokenization cost', { engine: { detokenization: { base_ms: -1 } } }, 'engine.detokenization.base_ms'],
    ['a non-finite per-output cost', { engine: { detokenization: { per_output_us: Infinity } } }, 'engine.detokenization.per_output_us'],
    [
      'a negative response overhead',
      { traffic: { load: { type: 'concurrency', concurrency: 1, response_overhead: { base_ms: -2 } } } },
      'traffic.load.response_overhead.base_ms',
    ],
    [
      'a NaN per-token overhead',
      { traffic: { load: { type: 'concurrency', concurrency: 1, response_overhead: { per_output_token_us: NaN } } } },
      'traffic.load.response_overhead.per_output_token_us',
    ],
    ['zero chunk_outputs', { engine: { detokenization: { chunk_outputs: 0 } } }, 'engine.detokenization.chunk_outputs'],
  ];
  it.each(cases)('rejects %s, naming the field', (_name, raw, path) => {
    let error: unknown;
    try {
      config(raw);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).path).toBe(path);
    expect((error as ConfigError).message).toContain(`test.yaml: ${path}: `);
  });
});

describe('response overhead per request in flight', () => {
  it("delays a client's next send by the other requests still in flight when its response ends", () => {
    // 5 ms per other request in flight. Both first requests are prefilled together in 0-12 and
    // decoded in 12-14; at 14 the first response ends with one other in flight (its slot sends at
    // 19), the second with none (sends at 14). The third is prefilled 14-26 and decoded with the
    // fourth's prefill (queued at 19) in 26-38; 38-40 decodes the fourth.
    const { records } = run(
      {},
      {
        source: synthetic(100, 2),
        load: { type: 'concurrency', concurrency: 2, response_overhead: { base_ms: 0, per_output_token_us: 0, per_inflight_us: 5000 } },
        stop: { requests: 4 },
      },
    );
    expect(records.map((r) => r.sent_ms)).toEqual([0, 0, 14, 19]);
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 14],
      [12, 14],
      [26, 38],
      [38, 40],
    ]);
  });
});

describe('frontend delay', () => {
  it('delays the arrival at the server by the frontend, a TTFT stage of its own', () => {
    // Frontend 4 + 0.001 x 1024 ms: at the server at 5.024; tokenization 1 + 0.001 x 1024 = 2.024 ms:
    // queued at 7.048; the prefill pass emits at 7.048 + 12 = 19.048, then decode passes every 2 ms.
    const { records, summary } = run(
      { frontend: { base_ms: 4, per_input_us: 1 }, tokenization: { workers: 1, base_ms: 1, per_input_us: 1 } },
      { source: synthetic(1024, 3), load: closedLoop(1), stop: { requests: 1 } },
    );
    expect(records[0].tokenized_ms).toBeCloseTo(7.048, 9);
    expect(records[0].token_ms).toEqual([19.048, 21.048, 23.048].map((x) => expect.closeTo(x, 9)));
    expect(summary.ttft_stages.mean_frontend_ms).toBeCloseTo(5.024, 9);
    expect(summary.ttft_stages.mean_tokenization_ms).toBeCloseTo(2.024, 9);
    expect(summary.metrics.time_to_first_token?.avg).toBeCloseTo(19.048, 9);
  });

  it('grows with the other requests in flight when a request is sent', () => {
    // 3 ms per other request in flight. Both sent at 0: the first finds none (at the server at 0),
    // the second one (at 3). Pass 0-12 prefills the first (token at 12); the second, queued at 3,
    // is prefilled in 12-24 with the first's decode (tokens at 24); 24-26 decodes the second.
    const { records, summary } = run(
      { frontend: { base_ms: 0, per_input_us: 0, per_inflight_us: 3000 } },
      { source: synthetic(100, 2), load: closedLoop(2), stop: { requests: 2 } },
    );
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 24],
      [24, 26],
    ]);
    expect(summary.ttft_stages.mean_frontend_ms).toBe(1.5);
    expect(summary.metrics.time_to_first_token?.avg).toBe(18);
  });

  it('is 0 under auto without roofline timing', () => {
    const { summary } = run({}, { source: synthetic(16, 2), load: closedLoop(1), stop: { requests: 1 } });
    expect(summary.ttft_stages.mean_frontend_ms).toBe(0);
    expect(summary.metrics.time_to_first_token?.avg).toBe(12);
  });
});
