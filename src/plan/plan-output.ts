/**
 * The files and the console text of a plan (docs/planning.md, "Output files"): `plan.json`,
 * `plan.csv` (one row per candidate, in plan order), and the top five with why the best won.
 * Every number comes from the rows (plan-result.ts), so the three always agree.
 */
import { stringify } from 'csv-stringify/sync';
import { formatNumber } from '../io/format-number.js';
import type { PlanSpec, WorkerKind } from './plan-file.js';
import { deploymentWords, layoutFrontiers, type BestDeployment, type CandidateRow, type FrontierEntry } from './plan-result.js';
import { short, sloName } from './slo.js';

export const PLAN_FILES = { json: 'plan.json', csv: 'plan.csv', html: 'report.html', configs: 'configs' } as const;

export interface PlanCounts {
  candidates: number;
  does_not_fit: number;
  searched: number;
  pruned: number;
  no_rate: number;
  failed: number;
  /** Replays the search used (from the pool or from an earlier run's log). */
  replays: number;
}

export interface PlanJson {
  name: string;
  model: string;
  mode: 'target' | 'max';
  target_rps: number | null;
  slo: Array<{ name: string; bound: 'max' | 'min'; limit: number; unit: string }>;
  rates: { tolerance: number; duration_s: number; min_requests: number; warmup_share: number; seed: number };
  counts: PlanCounts;
  best: BestDeployment | null;
  /** Candidate ids, best first (candidates with a max rate). */
  ranking: string[];
  /** Each layout of `search.workers`, in its order, with its frontier (plan-result.ts `layoutFrontiers`). */
  frontiers: Array<{ layout: WorkerKind; candidates: FrontierEntry[] }>;
  candidates: CandidateRow[];
}

export function planJson(
  plan: PlanSpec,
  rows: CandidateRow[],
  ranked: CandidateRow[],
  best: BestDeployment | null,
  counts: PlanCounts,
): PlanJson {
  return {
    name: plan.name,
    model: plan.model,
    mode: plan.targetRps === null ? 'max' : 'target',
    target_rps: plan.targetRps,
    slo: plan.slos.map((slo) => ({ name: sloName(slo), bound: slo.bound, limit: slo.limit, unit: slo.unit })),
    rates: {
      tolerance: plan.rates.tolerance,
      duration_s: plan.rates.durationS,
      min_requests: plan.rates.minRequests,
      warmup_share: plan.rates.warmupShare,
      seed: plan.rates.seed,
    },
    counts,
    best,
    ranking: ranked.map((r) => r.id),
    frontiers: layoutFrontiers(plan, rows),
    candidates: rows,
  };
}

export function planJsonText(json: PlanJson): string {
  return `${JSON.stringify(json, null, 2)}\n`;
}

/** The knob columns of the rows, in the order they first appear. */
function knobColumns(rows: readonly CandidateRow[]): string[] {
  const columns: string[] = [];
  for (const row of rows) for (const name of Object.keys(row.knobs)) if (!columns.includes(name)) columns.push(name);
  return columns;
}

export function planCsv(plan: PlanSpec, rows: readonly CandidateRow[]): string {
  const knobs = knobColumns(rows);
  const slos = plan.slos.map(sloName);
  const header = [
    'id',
    'hardware',
    ...knobs,
    'gpus',
    'price_per_gpu_hour',
    'cost_per_hour',
    'status',
    'max_rate_rps',
    'rate_lo_rps',
    'rate_hi_rps',
    'replays',
    'dominated_by',
    'on_frontier',
    'binding_slo',
    'limited_by',
    ...slos.flatMap((name) => [name, `${name}.margin`]),
    'output_tokens_per_s',
    'goodput_rps_per_gpu',
    'output_tokens_per_s_per_gpu',
    'cost_per_million_output_tokens',
    ...(plan.targetRps === null ? [] : ['meets_target', 'gpus_for_target', 'cost_per_hour_for_target']),
    'weights_gib_per_gpu',
    'kv_cache_tokens_per_rank',
    'config',
    'reason',
    'warnings',
  ];
  const cell = (value: string | number | boolean | null | undefined): string =>
    value === null || value === undefined ? '' : String(value);
  const body = rows.map((row) => [
    row.id,
    row.hardware,
    ...knobs.map((name) => cell(row.knobs[name])),
    cell(row.gpus),
    cell(row.price_per_gpu_hour),
    cell(row.cost_per_hour),
    row.status,
    cell(row.max_rate_rps),
    cell(row.rate_lo_rps),
    cell(row.rate_hi_rps),
    cell(row.replays),
    cell(row.dominated_by),
    cell(row.on_frontier),
    cell(row.binding_slo),
    cell(row.limited_by),
    ...slos.flatMap((name) => [cell(row.slo[name]?.value), cell(row.slo[name]?.margin)]),
    cell(row.output_tokens_per_s),
    cell(row.goodput_rps_per_gpu),
    cell(row.output_tokens_per_s_per_gpu),
    cell(row.cost_per_million_output_tokens),
    ...(plan.targetRps === null ? [] : [cell(row.meets_target), cell(row.gpus_for_target), cell(row.cost_per_hour_for_target)]),
    cell(row.weights_gib_per_gpu),
    cell(row.kv_cache_tokens_per_rank),
    cell(row.config),
    cell(row.reason),
    row.warnings.join('; '),
  ]);
  return stringify([header, ...body]);
}

const gpus = (n: number): string => `${n} GPU${n === 1 ? '' : 's'}`;
const money = (x: number | null): string => (x === null ? '-' : formatNumber(x));
const percent = (x: number | null): string => (x === null ? '-' : `${(x * 100).toFixed(1)} %`);

function pad(rows: string[][], right: boolean[]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (right[i] ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The top five, best first. */
export function topTable(plan: PlanSpec, ranked: readonly CandidateRow[], count = 5): string {
  const target = plan.targetRps !== null;
  const header = ['#', 'candidate', 'GPUs', 'cost/h', 'max rps', 'out tok/s/GPU', 'cost/M out tok'];
  if (target) header.push('meets target');
  const rows = ranked.slice(0, count).map((r, i) => {
    const row = [
      String(i + 1),
      r.id,
      String(r.gpus),
      money(r.cost_per_hour),
      String(r.max_rate_rps),
      r.output_tokens_per_s_per_gpu === null ? '-' : formatNumber(r.output_tokens_per_s_per_gpu),
      money(r.cost_per_million_output_tokens),
    ];
    if (target) row.push(r.meets_target ? 'yes' : `no (${r.gpus_for_target} GPUs would)`);
    row.push(r.limited_by === null ? '-' : `${r.limited_by} at ${r.rate_hi_rps}`);
    return row;
  });
  header.push('above the max rate');
  return pad(
    [header, ...rows],
    header.map((_, i) => i === 0 || (i >= 2 && i <= 6)),
  );
}

/**
 * The layouts' frontiers side by side, one column of candidates per layout, cheapest first (a
 * plan of one layout has none: its top five say it).
 */
export function frontierTable(frontiers: PlanJson['frontiers']): string {
  if (frontiers.length < 2) return '';
  const blocks = frontiers.map(({ layout, candidates }) => {
    const header = [`${layout} frontier`, 'GPUs', 'cost/h', 'max rps'];
    const rows = candidates.map((c) => [c.id, String(c.gpus), money(c.cost_per_hour), String(c.max_rate_rps)]);
    if (rows.length === 0) rows.push(['(no candidate meets the SLOs)', '', '', '']);
    return pad([header, ...rows], [false, true, true, true]).split('\n');
  });
  const height = Math.max(...blocks.map((b) => b.length));
  const widths = blocks.map((b) => Math.max(...b.map((line) => line.length)));
  const lines: string[] = [];
  for (let i = 0; i < height; i++) {
    lines.push(
      blocks
        .map((b, j) => (b[i] ?? '').padEnd(widths[j]))
        .join('    ')
        .trimEnd(),
    );
  }
  return lines.join('\n');
}

const capital = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * With more than one layout: the winner against the best of each other layout, in words (what the
 * other layout would cost, and what stops it at a higher rate).
 */
function layoutComparison(plan: PlanSpec, rows: readonly CandidateRow[], ranked: readonly CandidateRow[], winner: CandidateRow): string[] {
  const lines: string[] = [];
  const kinds = plan.search.workers.map((layout) => layout.kind);
  if (kinds.length < 2) return lines;
  const target = plan.targetRps;
  for (const kind of kinds) {
    if (kind === winner.layout) continue;
    const mine = ranked.filter((r) => r.layout === kind);
    const other = target === null ? mine[0] : mine.find((r) => r.meets_target === true);
    const stops = (r: CandidateRow) => (r.limited_by === null ? '' : `; above it, at ${r.rate_hi_rps} rps, ${r.limited_by}`);
    const lead =
      target === null
        ? `${capital(deploymentWords(winner))} costs ${money(winner.cost_per_million_output_tokens)} per million output tokens at ${winner.max_rate_rps} rps (${money(winner.cost_per_hour)}/h)`
        : `${capital(deploymentWords(winner))} meets the SLOs at ${target} rps (up to ${winner.max_rate_rps}) for ${money(winner.cost_per_hour)}/h`;
    if (mine.length === 0) {
      const tried = rows.filter((r) => r.layout === kind);
      lines.push(`${lead}; no ${kind} candidate meets the SLOs at any tested rate${tried.length === 0 ? '' : ` (${tried.length} tried)`}.`);
    } else if (other === undefined) {
      const fastest = [...mine].sort((a, b) => (b.max_rate_rps as number) - (a.max_rate_rps as number) || a.index - b.index)[0];
      const copies = mine[0];
      lines.push(
        `${lead}; no ${kind} candidate reaches ${target} rps within the SLOs: the fastest, ${deploymentWords(fastest)}, sustains ${fastest.max_rate_rps} rps${stops(fastest)}` +
          ` (copies of ${copies.id} would need ${copies.gpus_for_target} GPUs, ${money(copies.cost_per_hour_for_target)}/h).`,
      );
    } else if (target === null) {
      const more =
        ((other.cost_per_million_output_tokens as number) - (winner.cost_per_million_output_tokens as number)) /
        (winner.cost_per_million_output_tokens as number);
      lines.push(
        `${lead}; the best ${kind} candidate, ${other.id}, ${deploymentWords(other).replace(`${kind} `, '')}, costs ${money(other.cost_per_million_output_tokens)} (+${(more * 100).toFixed(1)} %) at ${other.max_rate_rps} rps${stops(other)}.`,
      );
    } else {
      const more = (other.cost_per_hour - winner.cost_per_hour) / winner.cost_per_hour;
      lines.push(
        `${lead}; ${kind} needs ${other.id}, ${deploymentWords(other).replace(`${kind} `, '')}, at ${money(other.cost_per_hour)}/h (+${(more * 100).toFixed(1)} %), up to ${other.max_rate_rps} rps${stops(other)}.`,
      );
    }
  }
  return lines;
}

/** Why the best candidate won, in a few sentences (or why there is none). */
export function whyBest(
  plan: PlanSpec,
  rows: readonly CandidateRow[],
  ranked: readonly CandidateRow[],
  best: BestDeployment | null,
): string {
  const lines: string[] = [];
  const searched = rows.filter((r) => r.max_rate_rps !== null && r.max_rate_rps > 0);
  if (best === null) {
    if (searched.length === 0) {
      lines.push('No candidate meets the SLOs at any tested rate: loosen the SLOs or widen the search (more GPUs per replica).');
    } else {
      const fastest = [...searched].sort((a, b) => (b.max_rate_rps as number) - (a.max_rate_rps as number) || a.index - b.index)[0];
      lines.push(
        `No candidate reaches the target of ${plan.targetRps} rps within the SLOs; the highest max rate is ${fastest.max_rate_rps} rps (${fastest.id}).`,
      );
      const cheapest = ranked[0];
      if (cheapest !== undefined) {
        lines.push(
          `The cheapest way there would be ${cheapest.gpus_for_target} GPUs as copies of ${cheapest.id} (${money(cheapest.cost_per_hour_for_target)}/h); ` +
            'widen the search (search.replicas or search.gpu_budget) to replay it.',
        );
      }
    }
    return lines.join('\n');
  }
  const winner = rows.find((r) => r.id === best.id) as CandidateRow;
  const accuracy = winner.accuracy;
  const accuracyText =
    accuracy === null || accuracy === undefined
      ? ''
      : accuracy.ttft_mape === null || accuracy.itl_mape === null
        ? ` (zero-shot; ${accuracy.stratum}: no measured evidence of the error)`
        : ` (zero-shot; ${accuracy.stratum}: typical error TTFT ${Math.round(accuracy.ttft_mape)} %, ITL ${Math.round(accuracy.itl_mape)} %)`;
  const binding = winner.binding_slo;
  const bindingText =
    (binding === null
      ? ''
      : ` At ${winner.max_rate_rps} rps its tightest SLO is ${binding}: ${short(winner.slo[binding].value ?? NaN)} against ${winner.slo[binding].limit} (margin ${percent(winner.slo[binding].margin)})`) +
    (winner.limited_by === null ? '.' : `; at ${winner.rate_hi_rps} rps ${winner.limited_by}.`) +
    accuracyText;
  if (plan.targetRps !== null) {
    const eligible = ranked.filter((r) => r.meets_target === true);
    const runnerUp = eligible[1];
    lines.push(
      `Best: ${winner.id}, the cheapest of the ${eligible.length} candidate${eligible.length === 1 ? '' : 's'} that sustain ${plan.targetRps} rps within every SLO: ` +
        `${money(winner.cost_per_hour)}/h on ${gpus(winner.gpus)}, up to ${winner.max_rate_rps} rps.${bindingText}`,
    );
    if (runnerUp !== undefined) {
      const more = (runnerUp.cost_per_hour - winner.cost_per_hour) / winner.cost_per_hour;
      lines.push(
        `Runner-up: ${runnerUp.id}, ${money(runnerUp.cost_per_hour)}/h (${more === 0 ? 'the same, with a lower max rate' : `+${(more * 100).toFixed(1)} %`}), up to ${runnerUp.max_rate_rps} rps.`,
      );
    }
  } else {
    const runnerUp = ranked[1];
    lines.push(
      `Best: ${winner.id}, the lowest cost per million output tokens at its max rate: ${money(winner.cost_per_million_output_tokens)} ` +
        `(${money(winner.cost_per_hour)}/h on ${gpus(winner.gpus)} at ${winner.max_rate_rps} rps, ${formatNumber(winner.output_tokens_per_s ?? 0)} output tokens/s).${bindingText}`,
    );
    if (runnerUp !== undefined && winner.cost_per_million_output_tokens !== null && runnerUp.cost_per_million_output_tokens !== null) {
      const more =
        (runnerUp.cost_per_million_output_tokens - winner.cost_per_million_output_tokens) / winner.cost_per_million_output_tokens;
      lines.push(
        `Runner-up: ${runnerUp.id}, ${money(runnerUp.cost_per_million_output_tokens)} per million output tokens (${more === 0 ? 'the same, at plan order' : `+${(more * 100).toFixed(1)} %`}) at ${runnerUp.max_rate_rps} rps.`,
      );
    }
  }
  lines.push(...layoutComparison(plan, rows, ranked, winner));
  return lines.join('\n');
}

/** `reused`: replays taken from an earlier run's log (not in plan.json: a resumed plan writes the same files). */
export function countsLine(counts: PlanCounts, reused = 0): string {
  const parts = [
    `${counts.candidates} candidates`,
    `${counts.does_not_fit} do not fit`,
    `${counts.searched} searched`,
    `${counts.pruned} pruned as dominated`,
  ];
  if (counts.no_rate > 0) parts.push(`${counts.no_rate} meet the SLOs at no rate`);
  if (counts.failed > 0) parts.push(`${counts.failed} failed`);
  return `${parts.join(', ')}; ${counts.replays} replays${reused > 0 ? ` (${reused} from an earlier run)` : ''}`;
}
