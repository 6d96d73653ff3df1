import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPassProfile, referencePass } from '../src/calibrate/pass-profile.js';
import { InputError } from '../src/config/errors.js';
import { createPassTime } from '../src/core/timing/create-pass-time.js';
import { readLayerProfile } from '../src/io/read-layer-profile.js';
import { profileTimingOf } from '../src/io/read-profile-timing.js';

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
