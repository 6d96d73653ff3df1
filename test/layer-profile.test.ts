import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPassProfile, referencePass } from '../src/calibrate/pass-profile.js';
import { InputError } from '../src/config/errors.js';
import { createPassTime } from '../src/core/timing/create-pass-time.js';
import { readLayerProfile } from '../src/io/read-layer-profile.js';
import { profileTimingOf } from '../src/io/read-profile-timing.js';
import { collectiveCosts } from '../src/catalog/deployment.js';
import { findHardware, findModel } from '../src/catalog/load.js';
import { runProfilePassTime } from '../src/calibrate/profile-command.js';
import { CalibrateUsageError } from '../src/calibrate/arguments.js';

const root = mkdtempSync(join(tmpdir(), 'servesim-layer-profile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DENSE = [
  'layer,tokens,time_us',
  'embedding,1,10',
  'embedding,100,20',
  'qkv_proj,1,100',
  'qkv_proj,100,300',
  'layernorm,1,5',
  'layernorm,100,15',
];
const PER_SEQUENCE = ['layer,sequences,time_us', 'lm_head,1,1000', 'lm_head,10,1900', 'sampler,1,50', 'sampler,10,140'];
const ATTENTION = [
  'prefill_chunk,kv_prefill,n_decode,kv_decode,time_us',
  '0,0,1,16,8',
  '0,0,1,1040,40',
  '0,0,2,16,10',
  '0,0,2,1040,60',
  '64,0,0,0,30',
  '64,64,0,0,50',
  '128,0,0,0,70',
  '128,64,0,0,110',
];

function profile(name: string, files: Record<string, string[]>): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'tp1'), { recursive: true });
  writeFileSync(join(dir, 'meta.yaml'), 'model: test/two-layer\ntp_degrees: [1]\nskew_fit:\n  enabled: false\n');
  const all = { 'dense.csv': DENSE, 'per_sequence.csv': PER_SEQUENCE, 'attention.csv': ATTENTION, ...files };
  for (const [file, lines] of Object.entries(all)) writeFileSync(join(dir, 'tp1', file), `${lines.join('\n')}\n`);
  return dir;
}

function inputErrorOf(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error('expected an InputError, got none');
}

describe('pass time from a layer profile, against hand-computed sums (2 layers)', () => {
  const built = buildPassProfile(readLayerProfile(profile('good', {})), { layers: 2 });
  // Through the file, as the replay reads it.
  const passTime = createPassTime(profileTimingOf(JSON.parse(JSON.stringify(built.file)), 'pass-time.json'));

  it('sums a one-request decode: embedding once, qkv per layer, two norms per layer, LM head and sampler, attention per layer', () => {
    // Tokens: 10 + 2 x 100 + 4 x 5 = 230 us; requests: 1000 + 50 = 1050 us; attention at context 528,
    // halfway between 16 (8 us) and 1040 (40 us): 24 us per layer, 48 us.
    expect(passTime(referencePass(1, 528, 0, 0, false))).toBeCloseTo((230 + 1050 + 48) / 1000, 9);
  });

  it('interpolates a prefill chunk between the profiled token counts and prefill histories', () => {
    // 64 tokens: 63/99 of the way from 1 token (230 us) to 100 (20 + 600 + 60 = 680 us);
    // one request: 1050 us; chunk 64 after 32 cached tokens: halfway between 30 and 50 us, x 2 layers.
    const tokens = 230 + (450 * 63) / 99;
    expect(passTime(referencePass(0, 0, 64, 32, true))).toBeCloseTo((tokens + 1050 + 80) / 1000, 9);
  });

  it('extrapolates above the profiled tokens and requests, and takes the nearest profiled attention cell', () => {
    // 130 tokens: 230 + 450 x 129/99 us; 3 requests (2 decodes + the prefill): lm_head 1000 + 900 x 2/9,
    // sampler 50 + 90 x 2/9; (chunk 128, 2 decodes) is not profiled: its nearest cell is (128, 0),
    // at kv_prefill 64: 110 us per layer.
    const tokens = 230 + (450 * 129) / 99;
    const requests = 1000 + (900 * 2) / 9 + 50 + (90 * 2) / 9;
    expect(passTime(referencePass(2, 16, 128, 64, false))).toBeCloseTo((tokens + requests + 220) / 1000, 9);
  });

  it('writes how the layers were composed', () => {
    expect(built.file.composition.per_pass).toEqual({ embedding: 1 });
    expect(built.file.composition.per_layer).toEqual({ layernorm: 2, qkv_proj: 1 });
    expect(built.file.tokens).toEqual({ tokens: [1, 100], ms: [0.23, 0.68] });
  });
});

describe('bad layer profiles', () => {
  it.each([
    ['dense.csv', [...DENSE.slice(0, 3), 'qkv_proj,1,fast'], 4, 'time_us: expected a number of microseconds >= 0, got "fast"'],
    ['dense.csv', ['layer,tokens', 'qkv_proj,1'], 1, 'the header is layer,tokens; expected layer,tokens,time_us'],
    ['per_sequence.csv', [...PER_SEQUENCE, 'lm_head,1,1200'], 6, 'lm_head at 1 sequences is profiled twice'],
    ['attention.csv', [...ATTENTION, '0,0,0,0,5'], 10, 'prefill_chunk and n_decode are both 0'],
    ['attention.csv', [...ATTENTION, '0,0,-1,16,5'], 10, 'n_decode: expected a whole number >= 0, got "-1"'],
  ])('names %s and its line', (file, lines, line, reason) => {
    const dir = profile(`bad-${file}-${line}-${reason.length}`, { [file]: lines });
    const error = inputErrorOf(() => readLayerProfile(dir));
    expect(error.file).toBe(join(dir, 'tp1', file));
    expect(error.line).toBe(line);
    expect(error.reason).toContain(reason);
  });

  it('names the tensor-parallel size it lacks', () => {
    const dir = profile('tp', {});
    expect(inputErrorOf(() => readLayerProfile(dir, 2)).reason).toBe('has no tables for tensor-parallel size 2 (it has 1)');
  });
});

// A mixture of experts of 16 experts, 2 per token: the MoE block at (tokens, activated experts).
const MOE = ['tokens,activated_experts,time_us', '1,8,40', '100,8,80', '1,16,60', '100,16,160'];

describe('pass time from a layer profile with mixture-of-experts layers and collectives (2 layers)', () => {
  const dir = profile('moe', { 'moe.csv': MOE });
  const experts = { count: 16, perToken: 2 };
  const timingOf = (built: ReturnType<typeof buildPassProfile>) =>
    createPassTime(profileTimingOf(JSON.parse(JSON.stringify(built.file)), 'pass-time.json'));

  it('prices the MoE block of one GPU at the experts its tokens touch, in the token table', () => {
    const built = buildPassProfile(readLayerProfile(dir), { layers: 2, experts });
    // 1 token touches 16 (1 - 14/16) = 2 experts, below the smallest profiled count (8): the
    // 8-expert row, 40 us per layer; 100 tokens touch 16 (1 - (7/8)^100), 8 short of 16 by
    // 2.5e-5, between the rows of 8 (80 us) and 16 (160 us) at 100 tokens.
    const experts100 = 16 * (1 - (7 / 8) ** 100);
    const moe100 = 80 + ((experts100 - 8) / 8) * 80;
    expect(built.file.tokens.tokens).toEqual([1, 100]);
    expect(built.file.tokens.ms[0]).toBeCloseTo((230 + 2 * 40) / 1000, 9);
    expect(built.file.tokens.ms[1]).toBeCloseTo((680 + 2 * moe100) / 1000, 5);
    expect(built.file.moe).toBeUndefined();
  });

  it('with the experts spread over 2 GPUs, prices each GPU at half the worker tokens on its half of the experts', () => {
    const built = buildPassProfile(readLayerProfile(dir), { layers: 2, experts, expertGroups: 2 });
    // The token table holds the dense layers only; the MoE table is keyed by the worker's tokens
    // W = 2 x the profiled tokens. W = 2: 16 (1 - (7/8)^2) / 2 = 1.875 experts of the GPU, the
    // 8-expert row at 1 token (40 us); W = 200: just under 8 experts, the 8-expert row at 100
    // tokens (80 us); x 2 layers.
    expect(built.file.tokens.ms).toEqual([0.23, 0.68]);
    expect(built.file.moe).toEqual({ worker_tokens: [2, 200], ms: [0.08, 0.16] });
    const passTime = timingOf(built);
    // One decode on each of two attention-DP ranks (W = 2): tokens 0.23, LM head and sampler
    // 1.05, attention 0.048, MoE 0.08 ms.
    expect(passTime({ ...referencePass(1, 528, 0, 0, false), workerTokens: 2 })).toBeCloseTo(1.408, 9);
    // W = 101, halfway from 2 to 200: MoE 0.12 ms.
    expect(passTime({ ...referencePass(1, 528, 0, 0, false), workerTokens: 101 })).toBeCloseTo(1.448, 9);
  });

  it('adds the collectives the profile does not measure, per pass and per token', () => {
    const collectives = { fixedMs: 0.5, msPerToken: 0.01, what: 'the all-reduces', source: {} };
    const built = buildPassProfile(readLayerProfile(profile('comm', {})), { layers: 2, collectives });
    // The one-request decode of the first test (1.328 ms) + 0.5 + 0.01 x 1 token.
    expect(timingOf(built)(referencePass(1, 528, 0, 0, false))).toBeCloseTo(1.838, 9);
    // A 64-token prefill (first test: 0.23 + 0.45 x 63/99 + 1.05 + 0.08) + 0.5 + 0.64.
    expect(timingOf(built)(referencePass(0, 0, 64, 32, true))).toBeCloseTo(0.23 + (0.45 * 63) / 99 + 1.05 + 0.08 + 1.14, 6);
    expect(built.file.composition.collectives).toMatchObject({ per_pass_ms: 0.5, per_token_ms: 0.01, what: 'the all-reduces' });
  });
});

describe('the collectives a layer profile does not measure, at the catalog cost', () => {
  it('counts two all-reduces a layer over tensor-parallel GPUs, each moving the hidden state', () => {
    const model = findModel('Qwen/Qwen3-32B')!;
    const hardware = findHardware('RTXPRO6000')!;
    const costs = collectiveCosts({ model, hardware, tensor: 2, attentionData: 1 }, { link: 0.5, collective_us: 10 });
    // 64 layers x 2 all-reduces; each sends 2 (t - 1) / t x 5120 x 2 bytes = 10240 bytes a token
    // at t = 2; over PCIe (no NVLink on this card): 128 / 2 = 64 GB/s each way, at half of it.
    expect(costs.collectives).toBe(128);
    expect(costs.bytesPerToken).toBe(128 * 10240);
    expect(costs.commFixedMs).toBeCloseTo(1.28, 12);
    expect(costs.commMsPerToken).toBeCloseTo((128 * 10240) / (64e6 * 0.5), 12);
  });

  it('adds dispatch and combine when the experts serve two data-parallel ranks', () => {
    const model = findModel('Qwen/Qwen3-30B-A3B-Instruct-2507')!;
    const hardware = findHardware('RTXPRO6000')!;
    const costs = collectiveCosts({ model, hardware, tensor: 1, attentionData: 2 }, { link: 0.5, collective_us: 10 });
    // 48 MoE layers x (dispatch + combine); a token goes to the other GPU unless none of its 8
    // picks is among that GPU's 64 experts: 1 - C(64, 8) / C(128, 8); 2048 x 2 bytes each way.
    let none = 1;
    for (let i = 0; i < 8; i++) none *= (64 - i) / (128 - i);
    expect(costs.collectives).toBe(96);
    expect(costs.bytesPerToken).toBeCloseTo(96 * (1 - none) * 4096, 6);
  });
});

describe('calibrate pass-time --profile with the log of a run', () => {
  // A profile with tables at tensor-parallel sizes 1 and 2, and a two-request log run at TP 2.
  const dir = join(root, 'two-sizes');
  for (const tp of [1, 2]) {
    mkdirSync(join(dir, `tp${tp}`), { recursive: true });
    const files = { 'dense.csv': DENSE, 'per_sequence.csv': PER_SEQUENCE, 'attention.csv': ATTENTION };
    for (const [file, lines] of Object.entries(files)) writeFileSync(join(dir, `tp${tp}`, file), `${lines.join('\n')}\n`);
  }
  writeFileSync(join(dir, 'meta.yaml'), 'model: meta-llama/Llama-3.1-8B\nhardware: RTX4090\ntp_degrees: [1, 2]\n');
  const log = join(root, 'log-tp2');
  mkdirSync(log, { recursive: true });
  writeFileSync(
    join(log, 'requests.jsonl'),
    [
      { request_id: 'a', input_toks: 64, output_toks: 4, queued_ts: 10, scheduled_ts: 10, first_token_ts: 10.01, last_token_ts: 10.02 },
      { request_id: 'b', input_toks: 64, output_toks: 4, queued_ts: 10.5, scheduled_ts: 10.5, first_token_ts: 10.51, last_token_ts: 10.52 },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n') + '\n',
  );
  writeFileSync(join(log, 'meta.json'), JSON.stringify({ model: 'meta-llama/Llama-3.1-8B', engine_kwargs: { tensor_parallel_size: 2 } }));

  it("takes the tables of the log's tensor-parallel size, and adds its all-reduces", () => {
    const outcome = runProfilePassTime({ profile: dir, log });
    expect((outcome.fitJson.source as Record<string, unknown>).tensor_parallel).toBe(2);
    expect((outcome.fitJson.composition as Record<string, Record<string, unknown>>).collectives.collectives_per_pass).toBe(64);
    expect((outcome.fitJson.replay as Record<string, unknown>).requests_compared).toBe(2);
  });

  it('refuses --tp that is not the size the log ran at', () => {
    expect(() => runProfilePassTime({ profile: dir, log, tp: 1 })).toThrow(CalibrateUsageError);
    expect(() => runProfilePassTime({ profile: dir, log, tp: 1 })).toThrow(/ran at tensor-parallel size 2/);
  });

  it('without a log, asks which size to take', () => {
    expect(inputErrorOf(() => runProfilePassTime({ profile: dir })).reason).toContain('choose one (--tp)');
  });
});

describe("the profile's skew correction of decodes with mixed contexts (2 layers)", () => {
  // Buckets on two bins an axis; one fitted bucket (no prefill, at most 2 decodes, skew rate up to
  // 50 %, longest context up to 2,000, no prefill history) with alpha 0.5; 0.1 elsewhere.
  const meta = [
    'model: test/two-layer',
    'tp_degrees: [1]',
    'skew_fit:',
    '  enabled: true',
    '  bucket_axes:',
    '    n_bins: [0, 2, 1000]',
    '    n_labels: [n<=2, n>2]',
    '    skew_rate_bins: [-0.01, 0.5, 1.01]',
    '    skew_rate_labels: [sr<=50%, sr>50%]',
    '    kv_big_bins: [0, 2000, 1000000000]',
    '    kv_big_labels: [kvB<=2k, kvB>2k]',
    '    kp_bins: [-1, 0, 1000000000]',
    '    kp_labels: [kp=0, kp>0]',
    '  per_tp:',
    '    1: {alpha_default: 0.1}',
  ];
  const SKEW = ['pc,n_label,skew_rate_label,kv_big_label,kp_label,alpha,n_samples', '0,n<=2,sr<=50%,kvB<=2k,kp=0,0.5,4'];
  const skewed = (name: string, skew: string[]) => {
    const dir = profile(name, { 'skew_fit.csv': skew });
    writeFileSync(join(dir, 'meta.yaml'), `${meta.join('\n')}\n`);
    return dir;
  };
  const passTime = createPassTime(
    profileTimingOf(
      JSON.parse(JSON.stringify(buildPassProfile(readLayerProfile(skewed('skew', SKEW)), { layers: 2 }).file)),
      'pass-time.json',
    ),
  );
  // Two decodes whose contexts (before this step's token) are `short` and `long`.
  const pair = (short: number, long: number) => {
    const view = referencePass(2, (short + long) / 2, 0, 0, false);
    return { with: { ...view, decodeKvMax: long + 1, decodeKvMin: short + 1 }, without: view };
  };

  it("adds alpha of the pass's bucket x the gap from the mean context's attention to the longest's", () => {
    // Contexts 100 and 900: mean 500, skew rate 0.5, the fitted bucket. Attention per layer at
    // 500: 10 + 50 x 484/1024; at 900: 10 + 50 x 884/1024; the gap x 2 layers = 39.0625 us, half of it added.
    const { with: skewedView, without } = pair(100, 900);
    expect(passTime(skewedView) - passTime(without)).toBeCloseTo(0.5 * 0.0390625, 12);
    // The whole pass: dense at 2 tokens 230 + 450/99, LM head and sampler at 2 requests 1100 + 60,
    // attention 67.265625 + 19.53125 us.
    expect(passTime(skewedView)).toBeCloseTo((230 + 450 / 99 + 1160 + 67.265625 + 19.53125) / 1000, 12);
  });

  it('takes the default alpha outside the fitted buckets', () => {
    // Contexts 100 and 2,900: the longest is above 2,000 (no bucket). Attention per layer at 1,500
    // and 2,900, extrapolated from the samples at 16 and 1,040: a gap of 50 x 1400/1024 x 2 layers.
    const { with: skewedView, without } = pair(100, 2900);
    expect(passTime(skewedView) - passTime(without)).toBeCloseTo((0.1 * 2 * 50 * 1400) / 1024 / 1000, 12);
  });

  it('leaves one decode, or decodes of equal context, at the mean', () => {
    const one = referencePass(1, 528, 0, 0, false);
    expect(passTime({ ...one, decodeKvMax: 529, decodeKvMin: 529 })).toBe(passTime(one));
    const same = pair(700, 700);
    expect(passTime(same.with)).toBe(passTime(same.without));
  });

  it('names skew_fit.csv and its line for a label meta.yaml does not list', () => {
    const dir = skewed('skew-bad', [...SKEW, '16,n<=3,sr<=50%,kvB<=2k,kp=0,0.2,4']);
    const error = inputErrorOf(() => readLayerProfile(dir));
    expect(error.file).toBe(join(dir, 'tp1', 'skew_fit.csv'));
    expect(error.line).toBe(3);
    expect(error.reason).toContain('n_label: expected one of n<=2, n>2');
  });
});

describe('the later layouts of attention.csv and moe.csv', () => {
  // The same shots as ATTENTION in the later layout: prefill_key = kv_prefill + chunk / 2, a
  // kernel column, one query token per decode, and provenance columns; plus a row of
  // speculative verification (4 query tokens), which is not read.
  const LATER = [
    'layer,prefill_chunk,prefill_key,n_decode,kv_decode,decode_q_len,time_us,measurement_protocol,measurement_sha256',
    'attention,0,0,1,16,1,8,p,s',
    'attention,0,0,1,1040,1,40,p,s',
    'attention,0,0,2,16,1,10,p,s',
    'attention,0,0,2,1040,1,60,p,s',
    'attention,0,0,2,1040,4,999,p,s',
    'attention,64,32,0,0,1,30,p,s',
    'attention,64,96,0,0,1,50,p,s',
    'attention,128,64,0,0,1,70,p,s',
    'attention,128,128,0,0,1,110,p,s',
  ];

  it('reads prefill_key as the history kv_prefill = prefill_key - chunk / 2, and gives the same model', () => {
    const legacy = buildPassProfile(readLayerProfile(profile('layout-legacy', {})), { layers: 2 });
    const later = buildPassProfile(readLayerProfile(profile('layout-later', { 'attention.csv': LATER })), { layers: 2 });
    expect(later.file.attention.rows).toEqual(legacy.file.attention.rows);
  });

  it("reads an ep column's rows of degree 1", () => {
    const withEp = ['ep,tokens,activated_experts,time_us', ...MOE.slice(1).map((row) => `1,${row}`), '2,1,4,5', '2,100,4,9'];
    const read = readLayerProfile(profile('moe-ep', { 'moe.csv': withEp }));
    expect(read.moe).toEqual(readLayerProfile(profile('moe-plain', { 'moe.csv': MOE })).moe);
    const only2 = ['ep,tokens,activated_experts,time_us', '2,1,4,5'];
    expect(inputErrorOf(() => readLayerProfile(profile('moe-ep2', { 'moe.csv': only2 }))).reason).toContain(
      'has no rows of expert-parallel degree 1 (it has 2)',
    );
  });

  it('refuses a kernel other than attention, naming the line', () => {
    const error = inputErrorOf(() =>
      readLayerProfile(profile('layout-kernel', { 'attention.csv': [...LATER, 'indexer,0,0,1,16,1,3,p,s'] })),
    );
    expect(error.line).toBe(11);
    expect(error.reason).toContain('layer: only the attention kernel');
  });
});

describe('a skew fit in a later schema', () => {
  it('is left out with a note, and the rest of the profile is read', () => {
    const dir = profile('skew-later', {
      'skew_fit.csv': ['layer,decode_q_len,pc_label,lev_label,n_anchor,alpha,direct_rows,pooled_rows', 'attention,1,pc0,lev0,2,0.1,3,3'],
    });
    writeFileSync(
      join(dir, 'meta.yaml'),
      'model: test/two-layer\ntp_degrees: [1]\nskew_fit:\n  enabled: true\n  per_tp:\n    1: {schema: runtime-skew-calibration-v1}\n',
    );
    const read = readLayerProfile(dir);
    expect(read.skew).toBeNull();
    expect(buildPassProfile(read, { layers: 2 }).notes[0]).toContain(
      'skew correction of decodes with mixed context lengths is not applied',
    );
  });
});
