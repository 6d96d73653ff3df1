/**
 * Saturation in an engine fit: where the measured TTFT jumps (the series rule of
 * `saturatedConcurrencies`) and the replay at the fitted constants does not, what limit of the
 * deployment would make it jump there. A closed loop of C clients holds C requests in flight; each
 * holds its prompt and, on average, half its output in KV, so the jump between C' and C clients
 * (per rank: C' / ranks and C / ranks) fits a KV capacity between C' x (ISL + OSL / 2) and
 * C x (ISL + OSL / 2) tokens per rank, or a sequence cap between C' / ranks and C / ranks.
 */
import { roleOf } from '../config/roles.js';
import { kvBlocksPerRank } from '../config/kv-capacity.js';
import type { RunConfig } from '../config/types.js';
import type { ScorePoint } from '../score/points.js';
import { SATURATION_TTFT_JUMP, saturatedConcurrencies } from './silicon-deployments.js';

const count = (v: number) => Math.round(v).toLocaleString('en-US');

/** The notes (none when nothing saturates, or when the replay saturates where the measurements do). */
export function saturationNotes(measured: readonly ScorePoint[], simulated: readonly ScorePoint[], base: RunConfig): string[] {
  const fromMeasured = saturatedConcurrencies(measured);
  if (fromMeasured.length === 0) return [];
  const first = fromMeasured[0];
  if (saturatedConcurrencies(simulated).includes(first)) return [];
  const below = measured
    .map((p) => Number(p.key.concurrency))
    .filter((c) => Number.isFinite(c) && c < first)
    .sort((a, b) => b - a)[0];
  if (below === undefined) return [];
  const role = roleOf(base.engine, 'aggregated');
  const ranks = role.parallelism.replicas * role.parallelism.attention_data;
  const blocks = kvBlocksPerRank(base.engine, role) ?? 0;
  const kv = blocks > 0 ? `${count(blocks * role.kv_cache.block_size)} tokens of KV per rank` : 'unlimited KV';
  const head =
    `the measured TTFT saturates from concurrency ${first} (it grows more than ${SATURATION_TTFT_JUMP} x as fast as the clients from ${below})` +
    ` and the replay does not (${kv}, at most ${count(role.scheduler.max_sequences)} sequences per rank, ${ranks} rank${ranks === 1 ? '' : 's'})`;
  const point = measured.find((p) => Number(p.key.concurrency) === first);
  const isl = Number(point?.key.isl);
  const osl = Number(point?.key.osl);
  const seqs = `a sequence cap between ${count(below / ranks)} and ${count(first / ranks)} per rank (scheduler.max_sequences)`;
  if (!(isl > 0 && osl > 0)) return [`${head}: ${seqs} would make it saturate there`];
  const perRequest = isl + osl / 2;
  return [
    `${head}: a KV capacity between ${count((below / ranks) * perRequest)} and ${count((first / ranks) * perRequest)} tokens per rank` +
      ` (${below} and ${first} clients x ISL ${isl} + OSL ${osl} / 2), or ${seqs}, would make it saturate there`,
  ];
}
