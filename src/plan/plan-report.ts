/**
 * `report.html` of a plan: one self-contained page (inline CSS and SVG, no script, nothing
 * fetched) with the best deployment and why it won, the top candidates, the throughput per GPU
 * against latency Pareto frontier per GPU type for each SLO metric, cost per hour against max
 * rate, and every candidate.
 *
 * Each replay the search ran is a point of the frontier charts: the latency the SLO names on x
 * (log scale), the output tokens per second per GPU its rate asks for (rate x the traffic's mean
 * output tokens / GPUs) on y. A GPU type's frontier joins its points that no other point of that type beats on
 * both axes.
 */
import type * as vegaLite from 'vega-lite';
import { renderSvg } from '../io/render-svg.js';
import { escapeHtml, htmlTable, STYLE } from '../score/score-report.js';
import type { PlanSpec, Slo } from './plan-file.js';
import type { PlanJson } from './plan-output.js';
import type { CandidateRow } from './plan-result.js';
import type { CandidateState } from './search.js';
import { sloName } from './slo.js';

type Spec = vegaLite.TopLevelSpec;

const LEGEND = { orient: 'bottom' as const, direction: 'horizontal' as const, labelLimit: 0, titleLimit: 0, symbolLimit: 0 };

export interface FrontierPoint {
  hardware: string;
  candidate: string;
  rate: number;
  latency: number;
  tokensPerGpu: number;
  meets: string;
}

/** Every tested replay as a point of one SLO metric's chart (replays with no value of it are left out). */
export function frontierPoints(states: readonly CandidateState[], slo: Slo, meanOutputTokens: number): FrontierPoint[] {
  const points: FrontierPoint[] = [];
  for (const state of states) {
    for (const tested of state.tested) {
      const stats = tested.summary.metrics[slo.metric] as Record<string, unknown> | undefined;
      const value = stats?.[slo.stat];
      if (typeof value !== 'number' || !(value > 0)) continue;
      points.push({
        hardware: state.candidate.hardware,
        candidate: state.candidate.id,
        rate: tested.rateRps,
        latency: value,
        tokensPerGpu: (tested.rateRps * meanOutputTokens) / state.candidate.gpus,
        meets: tested.meets ? 'meets the SLOs' : 'breaks an SLO',
      });
    }
  }
  return points;
}

/**
 * The points of each GPU type that no other point of the same type beats: lower (or, for a
 * per-user throughput, higher) on x and higher on y. Sorted along x.
 */
export function paretoFrontier(points: readonly FrontierPoint[], bound: 'max' | 'min'): FrontierPoint[] {
  const out: FrontierPoint[] = [];
  for (const hardware of [...new Set(points.map((p) => p.hardware))]) {
    const mine = points
      .filter((p) => p.hardware === hardware)
      .sort((a, b) => (bound === 'max' ? a.latency - b.latency : b.latency - a.latency) || b.tokensPerGpu - a.tokensPerGpu);
    let bestY = -Infinity;
    for (const p of mine) {
      if (p.tokensPerGpu > bestY) {
        out.push(p);
        bestY = p.tokensPerGpu;
      }
    }
  }
  return out;
}

export function frontierSpec(points: FrontierPoint[], slo: Slo): Spec | null {
  if (points.length === 0) return null;
  const frontier = paretoFrontier(points, slo.bound);
  const x = {
    field: 'latency',
    type: 'quantitative' as const,
    title: `${sloName(slo)} (${slo.unit})`,
    scale: { type: 'log' as const },
  };
  const y = { field: 'tokensPerGpu', type: 'quantitative' as const, title: 'output tokens/s per GPU' };
  const color = { field: 'hardware', type: 'nominal' as const, title: 'GPU', legend: LEGEND };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `Throughput per GPU against ${sloName(slo)}`, subtitle: 'every replay; lines: frontier per GPU; dashed: the SLO' },
    width: 420,
    height: 280,
    layer: [
      {
        data: { values: points },
        mark: { type: 'point', size: 30, opacity: 0.7 },
        encoding: {
          x,
          y,
          color,
          // Filled where the replay met every SLO, hollow where it broke one.
          fill: {
            condition: { test: "datum.meets === 'meets the SLOs'", field: 'hardware', type: 'nominal', legend: null },
            value: 'transparent',
          },
          shape: {
            field: 'meets',
            type: 'nominal',
            title: null,
            scale: { domain: ['meets the SLOs', 'breaks an SLO'], range: ['circle', 'triangle-up'] },
            legend: LEGEND,
          },
        },
      },
      {
        data: { values: frontier },
        mark: { type: 'line', strokeWidth: 2, interpolate: 'step-after' },
        encoding: { x, y, color, order: { field: 'latency', type: 'quantitative' } },
      },
      {
        data: { values: [{ limit: slo.limit }] },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#555' },
        encoding: { x: { field: 'limit', type: 'quantitative' } },
      },
    ],
  };
}

export function costSpec(rows: readonly CandidateRow[], bestId: string | null): Spec | null {
  const values = rows
    .filter((r) => r.max_rate_rps !== null && r.max_rate_rps > 0)
    .map((r) => ({
      candidate: r.id,
      hardware: r.hardware,
      cost: r.cost_per_hour,
      rate: r.max_rate_rps,
      kind: r.id === bestId ? 'best' : r.dominated_by === null ? 'on the frontier' : 'dominated',
    }));
  if (values.length === 0) return null;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Max rate against cost per hour', subtitle: 'one point per searched candidate' },
    width: 420,
    height: 280,
    data: { values },
    mark: { type: 'point', filled: true, size: 60 },
    encoding: {
      x: { field: 'cost', type: 'quantitative', title: 'cost per hour' },
      y: { field: 'rate', type: 'quantitative', title: 'max rate within the SLOs (rps)' },
      color: { field: 'hardware', type: 'nominal', title: 'GPU', legend: LEGEND },
      shape: {
        field: 'kind',
        type: 'nominal',
        title: null,
        scale: { domain: ['best', 'on the frontier', 'dominated'], range: ['diamond', 'circle', 'cross'] },
        legend: LEGEND,
      },
    },
  };
}

export interface PlanCharts {
  frontiers: Array<{ slo: string; svg: string }>;
  cost: string | null;
}

export async function renderPlanCharts(
  plan: PlanSpec,
  states: readonly CandidateState[],
  json: PlanJson,
  meanOutputTokens: number | null,
): Promise<PlanCharts> {
  const frontiers: PlanCharts['frontiers'] = [];
  for (const slo of plan.slos) {
    const spec = meanOutputTokens === null ? null : frontierSpec(frontierPoints(states, slo, meanOutputTokens), slo);
    if (spec !== null) frontiers.push({ slo: sloName(slo), svg: await renderSvg(spec) });
  }
  const cost = costSpec(json.candidates, json.best?.id ?? null);
  return { frontiers, cost: cost === null ? null : await renderSvg(cost) };
}

const num = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : String(x));

export function formatPlanHtml(json: PlanJson, charts: PlanCharts, top: string, why: string): string {
  const out: string[] = [];
  const title = `Plan ${json.name}: ${json.model}`;
  out.push('<!doctype html>');
  out.push('<html lang="en"><head><meta charset="utf-8">');
  out.push(`<title>${escapeHtml(title)}</title>`);
  out.push(`<style>${STYLE}</style></head><body>`);
  out.push(`<h1>${escapeHtml(title)}</h1>`);
  out.push('<ul class="inputs">');
  out.push(`<li>traffic: ${escapeHtml(json.target_rps === null ? 'as much as possible' : `target ${json.target_rps} requests/s`)}</li>`);
  out.push(
    `<li>SLOs: ${escapeHtml(json.slo.map((s) => `${s.name} ${s.bound === 'max' ? '<=' : '>='} ${s.limit} ${s.unit}`).join(', '))}</li>`,
  );
  out.push(
    `<li>${escapeHtml(
      `${json.counts.candidates} candidates: ${json.counts.does_not_fit} do not fit, ${json.counts.searched} searched, ${json.counts.pruned} pruned as dominated; ${json.counts.replays} replays`,
    )}</li>`,
  );
  out.push('</ul>');
  out.push('<h2>Best deployment</h2>');
  for (const line of why.split('\n')) out.push(`<p>${escapeHtml(line)}</p>`);
  if (json.best !== null) out.push(`<p>Run config: <code>${escapeHtml(json.best.config)}</code> (relative to this folder)</p>`);
  out.push('<h2>Top candidates</h2>');
  out.push(`<pre>${escapeHtml(top)}</pre>`);
  out.push('<h2>Throughput per GPU against latency</h2>');
  out.push('<div class="charts">');
  for (const chart of charts.frontiers) out.push(`<div class="chart" data-slo="${escapeHtml(chart.slo)}">${chart.svg}</div>`);
  if (charts.cost !== null) out.push(`<div class="chart">${charts.cost}</div>`);
  out.push('</div>');
  const replayed = json.candidates.filter((r) => r.status !== 'does_not_fit');
  const unfit = json.candidates.filter((r) => r.status === 'does_not_fit');
  out.push('<h2>Every candidate replayed</h2>');
  const header = [
    'id',
    'GPUs',
    'cost/h',
    'status',
    'max rps',
    'bracket (rps)',
    'replays',
    'above the max rate',
    'cost/M out tok',
    'dominated by',
    'notes',
  ];
  const rows = replayed.map((r) => [
    r.id,
    String(r.gpus),
    num(r.cost_per_hour),
    r.status,
    num(r.max_rate_rps),
    `${r.rate_lo_rps} .. ${r.rate_hi_rps ?? 'none'}`,
    String(r.replays),
    r.limited_by ?? '-',
    num(r.cost_per_million_output_tokens),
    r.dominated_by ?? '-',
    [r.reason, ...r.warnings].filter((text) => text !== null && text !== '').join('; ') || '-',
  ]);
  out.push(
    htmlTable(
      header,
      rows,
      header.map((_, i) => [1, 2, 4, 6, 8].includes(i)),
    ),
  );
  if (unfit.length > 0) {
    out.push(
      `<details><summary>${unfit.length} candidate${unfit.length === 1 ? ' does' : 's do'} not fit their GPUs (no replay)</summary>`,
    );
    out.push(
      htmlTable(
        ['id', 'why'],
        unfit.map((r) => [r.id, r.reason ?? '-']),
        [false, false],
      ),
    );
    out.push('</details>');
  }
  out.push('</body></html>');
  return `${out.join('\n')}\n`;
}
