/**
 * Quantities derived from a validated config that both the loader (to reject impossible
 * configs) and the resolver (to size the core's pools) need, computed in one place so the two
 * always agree. The session-turn prompt is the core's own formula, so the loader's check and
 * the replay cannot disagree.
 */
import { sessionTurnPromptTokens as turnPromptTokens } from '../core/run.js';
import { autoKvCapacity } from './deployment.js';
import type { EngineConfig, SourceConfig, WorkerRoleConfig } from './types.js';

const BYTES_PER_GIB = 2 ** 30;

/**
 * KV blocks per attention-DP rank, or null for an unlimited pool.
 *
 * For `capacity.type: auto`: the KV tokens per rank of the catalog deployment (config/deployment.ts)
 * in whole blocks.
 *
 * For `capacity.type: memory` (each rank is `tensor` GPUs holding one copy of the weights):
 * `floor((tensor * gpu_memory_gib * memory_fraction - weights_gib) * 2^30 / (kv_bytes_per_token * block_size))`,
 * evaluated in exactly that order. The result can be 0 or negative for a config that leaves
 * no room; the loader rejects those, so a validated config always gives at least 1.
 */
export function kvBlocksPerRank(engine: EngineConfig, role: WorkerRoleConfig): number | null {
  const capacity = role.kv_cache.capacity;
  switch (capacity.type) {
    case 'auto': {
      // The loader turns a defaulted auto without catalog entries into unlimited, and refuses a written one.
      const auto = autoKvCapacity(engine, role);
      return auto === null ? null : Math.floor(auto.tokensPerRank / role.kv_cache.block_size);
    }
    case 'unlimited':
      return null;
    case 'fixed':
      return capacity.blocks;
    case 'memory': {
      const freeGib = role.parallelism.tensor * capacity.gpu_memory_gib * capacity.memory_fraction - capacity.weights_gib;
      return Math.floor((freeGib * BYTES_PER_GIB) / (capacity.kv_bytes_per_token * role.kv_cache.block_size));
    }
  }
}

/**
 * Prompt tokens of turn `turn` (1-based) of a synthetic session: every turn resends the
 * whole conversation so far, so turn k carries k new inputs and the k-1 earlier outputs:
 * `k * new_input_tokens_per_turn + (k - 1) * output_tokens_per_turn`.
 */
export function sessionTurnPromptTokens(
  source: { new_input_tokens_per_turn: number; output_tokens_per_turn: number },
  turn: number,
): number {
  return turnPromptTokens(source.new_input_tokens_per_turn, source.output_tokens_per_turn, turn);
}

/**
 * The largest prompt a synthetic source can produce (`input_tokens`, or the last turn of a
 * session), or null for a trace (its rows are checked by the core).
 */
export function largestSyntheticPromptTokens(source: SourceConfig): number | null {
  switch (source.type) {
    case 'synthetic':
      return source.input_tokens;
    case 'synthetic-session':
      return sessionTurnPromptTokens(source, source.turns);
    case 'trace':
      return null;
  }
}
