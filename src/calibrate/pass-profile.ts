/**
 * A pass-time model from a layer-wise profile (docs/calibration.md, "Pass time from layer
 * profiles"): `servesim calibrate pass-time --profile DIR` reads the profiler's tables of one
 * tensor-parallel size (`io/read-layer-profile.ts`) and sums them into the tables of
 * `timing: {type: profile}` (`io/read-profile-timing.ts`), one per way a layer scales:
 *
 * - per token of the pass (T = prefill tokens + decoding requests): `embedding` and
 *   `final_layernorm` once per pass, `layernorm` twice per layer (before attention and before the
 *   MLP), every other dense layer once per layer, and the MoE block once per layer at the experts
 *   T tokens are expected to touch, E (1 - (1 - k / E)^T);
 * - per request of the pass: every layer of `per_sequence.csv` (LM head, sampler), once;
 * - attention: once per layer, at (prefill chunk, prefill history, decoding requests, their mean
 *   context).
 *
 * This is the composition of every architecture the profiler describes (Llama, Qwen3, Qwen3-MoE,
 * Mixtral, PhiMoE). The dense tables are summed at the union of their token counts, which is exact:
 * each is linear between its own samples, so their sum is linear between the union's.
 */
import { interpolate, createProfilePassTime } from '../core/timing/profile.js';
import type { PassView } from '../core/timing.js';
import type { LayerCurve, LayerProfile, MoeSample } from '../io/read-layer-profile.js';
import {
  ATTENTION_COLUMNS,
  PROFILE_TIMING_FORMAT,
  SKEW_COLUMNS,
  profileTimingOf,
  type ProfileTimingFile,
} from '../io/read-profile-timing.js';

/** Dense layers that run once per pass (on every token), not once per layer. */
export const PER_PASS_LAYERS = ['embedding', 'final_layernorm'] as const;
/** Dense layers that run twice per layer: the norm before attention and the one before the MLP. */
export const TWICE_PER_LAYER = ['layernorm'] as const;

export interface PassProfileOptions {
  /** Transformer layers of the model (the profiler times one). */
  layers: number;
  /** Routed experts and experts per token, for a profile with moe.csv. */
  experts?: { count: number; perToken: number };
  /**
   * GPUs the routed experts are spread over (expert parallelism: tensor x data-parallel size);
   * above 1, each GPU runs the MoE block on its E / G experts for the tokens of all the worker's
   * attention-DP ranks, priced by a table of its own at the worker's tokens.
   */
  expertGroups?: number;
  /**
   * Collectives the profile does not measure (it times one GPU's kernels), added to every pass:
   * `fixedMs` per pass and `msPerToken` per token of the rank's pass, with where they come from.
   */
  collectives?: { fixedMs: number; msPerToken: number; what: string; source: Record<string, unknown> };
  /** Provenance written into the model: where the layer count and the experts came from. */
  source?: Record<string, unknown>;
}

/** How many times a dense layer runs in one pass of an L-layer model. */
export function denseMultiplicity(layer: string, layers: number): number {
  if ((PER_PASS_LAYERS as readonly string[]).includes(layer)) return 1;
  if ((TWICE_PER_LAYER as readonly string[]).includes(layer)) return 2 * layers;
  return layers;
}

function curveAt(curve: LayerCurve, query: number): number {
  return interpolate(Float64Array.from(curve.keys), Float64Array.from(curve.us), query);
}

/**
 * The MoE block at `tokens` tokens on `experts` activated experts (µs): linear in the tokens along
 * each profiled expert count, then linear between the two expert counts around the query (the
 * first below the smallest, the last two above the largest), as the profiler's simulator does.
 */
export function moeAt(samples: readonly MoeSample[], tokens: number, experts: number): number {
  const byExperts = new Map<number, Array<[number, number]>>();
  for (const s of samples) {
    let list = byExperts.get(s.experts);
    if (list === undefined) byExperts.set(s.experts, (list = []));
    list.push([s.tokens, s.us]);
  }
  const counts = [...byExperts.keys()].sort((a, b) => a - b);
  const row = (count: number) => {
    const sorted = byExperts.get(count)!.sort((a, b) => a[0] - b[0]);
    return interpolate(Float64Array.from(sorted.map((p) => p[0])), Float64Array.from(sorted.map((p) => p[1])), tokens);
  };
  const values = Float64Array.from(counts.map(row));
  return interpolate(Float64Array.from(counts), values, Math.max(1, experts));
}

/** Experts a pass of `tokens` tokens is expected to touch: E (1 - (1 - k / E)^T). */
export function expectedExperts(tokens: number, count: number, perToken: number): number {
  return count * (1 - Math.pow(1 - perToken / count, tokens));
}

/** Round to 6 significant digits, so the written model is readable and stable. */
function round(value: number): number {
  return Number(value.toPrecision(6));
}

export interface BuiltPassProfile {
  file: ProfileTimingFile;
  notes: string[];
}

/** Builds the pass-time model of one profile. */
export function buildPassProfile(profile: LayerProfile, options: PassProfileOptions): BuiltPassProfile {
  const L = options.layers;
  if (!Number.isInteger(L) || L < 1) throw new RangeError(`layers must be a positive integer, got ${L}`);
  const notes: string[] = [];
  if (profile.moe !== null && options.experts === undefined)
    throw new RangeError('the profile has moe.csv: the model needs its routed experts and experts per token');

  const groups = options.expertGroups ?? 1;
  if (!Number.isInteger(groups) || groups < 1) throw new RangeError(`expertGroups must be a positive integer, got ${groups}`);
  const spread = profile.moe !== null && options.experts !== undefined && groups > 1;
  const collectives = options.collectives;

  // Per token: every dense layer at the union of the token counts, times its count in a pass.
  const tokenSet = new Set<number>();
  for (const curve of profile.dense.values()) for (const key of curve.keys) tokenSet.add(key);
  if (profile.moe !== null && !spread) for (const s of profile.moe) tokenSet.add(s.tokens);
  const tokens = [...tokenSet].sort((a, b) => a - b);
  const perLayer: Record<string, number> = {};
  const perPass: Record<string, number> = {};
  for (const layer of profile.dense.keys()) {
    const count = denseMultiplicity(layer, L);
    if ((PER_PASS_LAYERS as readonly string[]).includes(layer)) perPass[layer] = count;
    else perLayer[layer] = count / L;
  }
  const tokenMs = tokens.map((t) => {
    let us = 0;
    for (const [layer, curve] of profile.dense) us += denseMultiplicity(layer, L) * curveAt(curve, t);
    if (profile.moe !== null && options.experts !== undefined && !spread)
      us += L * moeAt(profile.moe, t, expectedExperts(t, options.experts.count, options.experts.perToken));
    const ms = us / 1000 + (collectives === undefined ? 0 : collectives.fixedMs + collectives.msPerToken * t);
    return round(ms);
  });

  // Experts spread over G GPUs: each runs its E / G experts on the pairs the worker's W tokens
  // route to them, W k / G, which the profile's rows (T tokens, k picks each) price at T = W / G;
  // of its experts, the share W tokens touch, E / G (1 - (1 - k / E)^W).
  let moe: { worker_tokens: number[]; ms: number[] } | undefined;
  if (spread) {
    const { count, perToken } = options.experts as { count: number; perToken: number };
    const workerTokens = [...new Set((profile.moe as MoeSample[]).map((s) => s.tokens * groups))].sort((a, b) => a - b);
    moe = {
      worker_tokens: workerTokens,
      ms: workerTokens.map((w) =>
        round((L * moeAt(profile.moe as MoeSample[], w / groups, expectedExperts(w, count, perToken) / groups)) / 1000),
      ),
    };
  }

  const sequenceSet = new Set<number>();
  for (const curve of profile.perSequence.values()) for (const key of curve.keys) sequenceSet.add(key);
  const sequences = [...sequenceSet].sort((a, b) => a - b);
  const sequenceMs = sequences.map((s) => {
    let us = 0;
    for (const curve of profile.perSequence.values()) us += curveAt(curve, s);
    return round(us / 1000);
  });

  const rows = profile.attention.map((a) => [a.prefillChunk, a.kvPrefill, a.decodes, a.kvDecode, round((L * a.us) / 1000)]);

  if (profile.skew !== null)
    notes.push(
      `the profile's skew correction is applied: attention at the decodes' mean context plus alpha x its gap to the longest context, alpha from ${profile.skew.rows.length} buckets (${profile.skew.alphaDefault} outside them)`,
    );
  else if (profile.meta.skewFit)
    notes.push(
      `the profile's skew correction of decodes with mixed context lengths is not applied (no tp${profile.tp}/skew_fit.csv, or one in a later schema than the bucket table read here): a pass is looked up at its decodes' mean context`,
    );
  if (collectives !== undefined)
    notes.push(
      `the profile times one GPU's kernels and measures no collectives: ${collectives.what} are added at the catalog's cost, ${round(collectives.fixedMs)} ms per pass and ${round(collectives.msPerToken * 1000)} us per token`,
    );
  else if (profile.tp > 1)
    notes.push(
      `the tables time one GPU's kernels of a tensor-parallel size ${profile.tp} model; the profile measures no collectives, so the all-reduces after attention and the MLP are not in this model`,
    );
  if (profile.moe !== null)
    notes.push(
      spread
        ? `the experts are spread over ${groups} GPUs: each GPU's MoE block is priced at W / ${groups} tokens on the expected number of its experts the worker's W tokens touch, E/${groups} (1 - (1 - k/E)^W)`
        : 'the MoE block is priced at the expected number of experts a pass touches, E (1 - (1 - k/E)^T), on one GPU (no expert parallelism)',
    );
  const maxTokens = tokens[tokens.length - 1];
  const maxDecodes = Math.max(...profile.attention.map((a) => a.decodes));
  notes.push(
    `profiled up to ${maxTokens} tokens per pass and ${maxDecodes} decoding requests; larger passes are extrapolated from the last two samples`,
  );

  const file: ProfileTimingFile = {
    format: PROFILE_TIMING_FORMAT,
    source: {
      profile: profile.dir,
      files: profile.files,
      ...(profile.meta.model !== undefined ? { model: profile.meta.model } : {}),
      ...(profile.meta.hardware !== undefined ? { hardware: profile.meta.hardware } : {}),
      ...(profile.meta.gpu !== undefined ? { gpu: profile.meta.gpu } : {}),
      ...(profile.meta.vllmVersion !== undefined ? { vllm_version: profile.meta.vllmVersion } : {}),
      ...(profile.meta.variant !== undefined ? { variant: profile.meta.variant } : {}),
      tensor_parallel: profile.tp,
      ...options.source,
    },
    composition: {
      layers: L,
      per_pass: perPass,
      per_layer: perLayer,
      per_request: [...profile.perSequence.keys()],
      attention: 'once per layer, at (prefill chunk, prefill history, decoding requests, their mean context)',
      ...(options.experts !== undefined && profile.moe !== null
        ? {
            moe: {
              per_layer: 1,
              experts: options.experts.count,
              experts_per_token: options.experts.perToken,
              ...(spread ? { expert_groups: groups, at: 'the worker tokens (moe table)' } : {}),
            },
          }
        : {}),
      ...(collectives !== undefined
        ? {
            collectives: {
              what: collectives.what,
              per_pass_ms: round(collectives.fixedMs),
              per_token_ms: round(collectives.msPerToken),
              ...collectives.source,
            },
          }
        : {}),
    },
    notes,
    tokens: { tokens, ms: tokenMs },
    ...(moe !== undefined ? { moe } : {}),
    sequences: { sequences, ms: sequenceMs },
    attention: { columns: ATTENTION_COLUMNS, rows },
    ...(profile.skew !== null
      ? {
          skew: {
            alpha_default: profile.skew.alphaDefault,
            bins: {
              n: profile.skew.axes.n.bins,
              skew_rate: profile.skew.axes.skewRate.bins,
              kv_big: profile.skew.axes.kvBig.bins,
              kp: profile.skew.axes.kp.bins,
            },
            columns: SKEW_COLUMNS,
            rows: profile.skew.rows.map((r) => [r.pc, r.n, r.skewRate, r.kvBig, r.kp, r.alpha]),
          },
        }
      : {}),
  };
  return { file, notes };
}

/** A pass of `decodes` requests at context `context` plus one prefill chunk of `chunk` tokens after `history` cached ones. */
export function referencePass(decodes: number, context: number, chunk: number, history: number, finishes: boolean): PassView {
  return {
    prefillTokens: chunk,
    prefillPairs: chunk * (history + chunk / 2),
    decodeRequests: decodes,
    decodeKvTokens: decodes * (context + 1),
    emittedTokens: decodes + (chunk > 0 && finishes ? 1 : 0),
    workerTokens: chunk + decodes,
    kvBlocksUsed: 0,
    kvBlocksTotal: 0,
  };
}

/** Pass times of the built model at a few shapes, for the report (ms). */
export function referencePassTimes(file: ProfileTimingFile): Array<{ pass: string; ms: number }> {
  const passTime = createProfilePassTime(profileTimingOf(file, 'pass-time.json'));
  const shapes: Array<[string, PassView]> = [
    ['decode, 1 request at context 1024', referencePass(1, 1024, 0, 0, false)],
    ['decode, 32 requests at context 1024', referencePass(32, 1024, 0, 0, false)],
    ['decode, 128 requests at context 1024', referencePass(128, 1024, 0, 0, false)],
    ['prefill of a 512-token prompt', referencePass(0, 0, 512, 0, true)],
    ['prefill of a 2048-token prompt', referencePass(0, 0, 2048, 0, true)],
    ['32 decodes at 1024 + a 512-token chunk', referencePass(32, 1024, 512, 1024, false)],
  ];
  return shapes.map(([pass, view]) => ({ pass, ms: round(passTime(view)) }));
}
