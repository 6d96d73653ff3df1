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
import { readableScale } from '../io/chart-scale.js';
import { renderSvg } from '../io/render-svg.js';
import { escapeHtml, htmlTable, STYLE } from '../score/score-report.js';
import type { PlanSpec, Slo } from './plan-file.js';
import type { PlanJson } from './plan-output.js';
import type { CandidateRow } from './plan-result.js';
import type { CandidateState } from './search.js';
import { sloName } from './slo.js';

type Spec = vegaLite.TopLevelSpec;

const LEGEND = { orient: 'bottom' as const, direction: 'horizontal' as const, labelLimit: 0, titleLimit: 0, symbolLimit: 0 };

export const MEETS = 'meets every SLO';
export const BREAKS = 'breaks an SLO';

/**
 * How far past an SLO's limit a frontier chart's x axis runs (x4 on its log axis, /4 for a
 * minimum): replays further out break the SLO many times over; they are counted in the subtitle,
 * not drawn, so that the axis spends its width where the SLO is decided.
 */
export const BEYOND_LIMIT = 4;

export interface FrontierPoint {
  hardware: string;
  /** The frontier the point belongs to: its GPU type, and its layout when the plan has more than one. */
  series: string;
  candidate: string;
  rate: number;
  latency: number;
  tokensPerGpu: number;
  meets: typeof MEETS | typeof BREAKS;
}

/** Every tested replay as a point of one SLO metric's chart (replays with no value of it are left out). */
export function frontierPoints(states: readonly CandidateState[], slo: Slo, meanOutputTokens: number, byLayout = false): FrontierPoint[] {
  const points: FrontierPoint[] = [];
  for (const state of states) {
    const series = byLayout ? `${state.candidate.hardware} ${state.candidate.kind}` : state.candidate.hardware;
    for (const tested of state.tested) {
      const stats = tested.summary.metrics[slo.metric] as Record<string, unknown> | undefined;
      const value = stats?.[slo.stat];
      if (typeof value !== 'number' || !(value > 0)) continue;
      points.push({
        hardware: state.candidate.hardware,
        series,
        candidate: state.candidate.id,
        rate: tested.rateRps,
        latency: value,
        tokensPerGpu: (tested.rateRps * meanOutputTokens) / state.candidate.gpus,
        meets: tested.meets ? MEETS : BREAKS,
      });
    }
  }
  return points;
}

/**
 * The points of each series (GPU type, and layout) that no other point of the same series beats:
 * lower (or, for a per-user throughput, higher) on x and higher on y. Sorted along x.
 */
export function paretoFrontier(points: readonly FrontierPoint[], bound: 'max' | 'min'): FrontierPoint[] {
  const out: FrontierPoint[] = [];
  for (const series of [...new Set(points.map((p) => p.series))]) {
    const mine = points
      .filter((p) => p.series === series)
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

/** Whether a point lies within the part of the x axis a frontier chart draws (see `BEYOND_LIMIT`). */
function inView(point: FrontierPoint, slo: Slo): boolean {
  return slo.bound === 'max' ? point.latency <= slo.limit * BEYOND_LIMIT : point.latency >= slo.limit / BEYOND_LIMIT;
}

const FRONTIER_WIDTH = 420;
const SLO_LABEL_FONT = 10;

/**
 * Whether the SLO's label goes left of its rule: where the rule sits too close to the plot's
 * right edge for the label (the limit the highest value on the axis), on the side with more room.
 * The label's width is taken at 0.6 em a character, wider than the digits and signs it has.
 */
function labelGoesLeft(limit: number, domain: readonly [number, number] | undefined, label: string): boolean {
  if (domain === undefined || !(limit > 0) || !(domain[0] > 0) || !(domain[1] > domain[0])) return false;
  const at = (Math.log(limit) - Math.log(domain[0])) / (Math.log(domain[1]) - Math.log(domain[0]));
  const right = (1 - at) * FRONTIER_WIDTH;
  const needed = 0.6 * SLO_LABEL_FONT * label.length + 6;
  return right < needed && at * FRONTIER_WIDTH > right;
}

/**
 * Throughput per GPU against one SLO metric: every replay (filled where it met every SLO, hollow
 * where it broke one), and per GPU type the frontier of the replays that met every SLO, a step
 * line: the most output tokens per second per GPU within that much latency. The x axis is log,
 * from just below the data to just past the SLO's limit.
 */
export function frontierSpec(points: FrontierPoint[], slo: Slo, byLayout = false): Spec | null {
  const shown = points.filter((p) => inView(p, slo));
  if (shown.length === 0) return null;
  const left = points.length - shown.length;
  const frontier = paretoFrontier(
    shown.filter((p) => p.meets === MEETS),
    slo.bound,
  );
  const xs = [...shown.map((p) => p.latency), slo.limit];
  const x = {
    field: 'latency',
    type: 'quantitative' as const,
    title: `${sloName(slo)} (${slo.unit})`,
    scale: readableScale(xs, { log: 10 }),
  };
  const y = {
    field: 'tokensPerGpu',
    type: 'quantitative' as const,
    title: 'output tokens/s per GPU',
    scale: readableScale(
      shown.map((p) => p.tokensPerGpu),
      { zero: true },
    ),
  };
  // Sorted, as the cost chart's GPU colours are (Vega-Lite's default order): a GPU has one colour in
  // every chart of the report.
  const gpus = [...new Set(points.map((p) => p.series))].sort();
  // The marks are hollow where a replay broke an SLO, so the legends draw their own swatches:
  // filled circles for the GPU types, a filled circle and a hollow triangle for the replays.
  const gpuLegend = {
    ...LEGEND,
    symbolType: 'circle',
    encoding: {
      symbols: { fill: { value: { signal: "scale('color', datum.value)" } }, fillOpacity: { value: 0.8 }, opacity: { value: 1 } },
    },
  };
  const color = {
    field: 'series',
    type: 'nominal' as const,
    title: byLayout ? 'GPU and layout' : 'GPU',
    scale: { domain: gpus },
    legend: gpuLegend,
  };
  const kinds = [MEETS, BREAKS].filter((kind) => shown.some((p) => p.meets === kind));
  const beyond = slo.bound === 'max' ? `above ${slo.limit * BEYOND_LIMIT}` : `below ${slo.limit / BEYOND_LIMIT}`;
  const label = `SLO ${slo.bound === 'max' ? '<=' : '>='} ${slo.limit}`;
  const labelLeft = labelGoesLeft(slo.limit, x.scale.domain, label);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `Throughput per GPU against ${sloName(slo)}`,
      subtitle: [
        `line: the most per GPU within the SLOs, per GPU type${byLayout ? ' and layout' : ''}; dashed: the SLO`,
        ...(left > 0 ? [`${left} replay${left === 1 ? '' : 's'} with ${sloName(slo)} ${beyond} ${slo.unit} not drawn`] : []),
      ],
    },
    width: FRONTIER_WIDTH,
    height: 280,
    layer: [
      {
        data: { values: [{ limit: slo.limit, label }] },
        layer: [
          { mark: { type: 'rule', strokeDash: [4, 4], color: '#555' }, encoding: { x: { field: 'limit', type: 'quantitative' } } },
          {
            mark: {
              type: 'text',
              align: labelLeft ? 'right' : 'left',
              baseline: 'bottom',
              dx: labelLeft ? -3 : 3,
              y: 'height',
              dy: -3,
              color: '#555',
              fontSize: SLO_LABEL_FONT,
            },
            encoding: { x: { field: 'limit', type: 'quantitative' }, text: { field: 'label' } },
          },
        ],
      },
      {
        data: { values: frontier },
        mark: { type: 'line', strokeWidth: 2, interpolate: slo.bound === 'max' ? 'step-after' : 'step-before' },
        encoding: { x, y, color, order: { field: 'latency', type: 'quantitative' } },
      },
      {
        data: { values: shown },
        mark: { type: 'point', size: 40, strokeWidth: 1.5, opacity: 0.85 },
        encoding: {
          x,
          y,
          color,
          fill: {
            // The GPU legend's own settings: merged with the colour's into one legend (null would disable both).
            condition: {
              test: `datum.meets === '${MEETS}'`,
              field: 'series',
              type: 'nominal',
              scale: { domain: gpus },
              legend: gpuLegend,
            },
            value: 'transparent',
          },
          shape: {
            field: 'meets',
            type: 'nominal',
            title: 'replays',
            scale: { domain: kinds, range: kinds.map((k) => (k === MEETS ? 'circle' : 'triangle-up')) },
            legend: {
              ...LEGEND,
              encoding: {
                symbols: {
                  fill: { condition: { test: `datum.value === '${MEETS}'`, value: '#777' }, value: 'transparent' },
                  stroke: { value: '#777' },
                  strokeWidth: { value: 1.5 },
                },
              },
            },
          },
        },
      },
    ],
  };
}

export interface CostPoint {
  hardware: string;
  cost: number;
  rate: number;
  kind: 'best' | 'on the frontier' | 'dominated';
  /** Candidates at this very point (same GPU, cost and max rate). */
  count: number;
  label: string;
  candidates: string;
}

/**
 * One point per GPU type, cost and max rate: candidates that land on the same point (their
 * knobs made no difference) are one mark, labelled with how many they are.
 */
export function costPoints(rows: readonly CandidateRow[], bestId: string | null): CostPoint[] {
  const points = new Map<string, CostPoint & { ids: string[] }>();
  for (const row of rows) {
    if (row.max_rate_rps === null || !(row.max_rate_rps > 0)) continue;
    const key = JSON.stringify([row.hardware, row.cost_per_hour, row.max_rate_rps]);
    const kind = row.id === bestId ? 'best' : row.dominated_by === null ? 'on the frontier' : 'dominated';
    const point = points.get(key) ?? {
      hardware: row.hardware,
      cost: row.cost_per_hour,
      rate: row.max_rate_rps,
      kind,
      count: 0,
      label: '',
      candidates: '',
      ids: [],
    };
    point.count++;
    point.ids.push(row.id);
    // The best wins its point's mark; a point on the frontier, one of dominated candidates.
    if (kind === 'best' || (kind === 'on the frontier' && point.kind === 'dominated')) point.kind = kind;
    points.set(key, point);
  }
  return [...points.values()].map(({ ids, ...point }) => ({
    ...point,
    label: point.count > 1 ? `\u00d7${point.count}` : '',
    candidates: ids.join(', '),
  }));
}

const KIND_SHAPES: Record<CostPoint['kind'], string> = { best: 'diamond', 'on the frontier': 'circle', dominated: 'cross' };
const KIND_SIZES: Record<CostPoint['kind'], number> = { best: 260, 'on the frontier': 80, dominated: 80 };

export function costSpec(rows: readonly CandidateRow[], bestId: string | null, targetRps: number | null): Spec | null {
  const values = costPoints(rows, bestId);
  if (values.length === 0) return null;
  const kinds = (['best', 'on the frontier', 'dominated'] as const).filter((kind) => values.some((v) => v.kind === kind));
  const candidates = values.reduce((sum, v) => sum + v.count, 0);
  const x = {
    field: 'cost',
    type: 'quantitative' as const,
    title: 'cost per hour',
    scale: readableScale(
      values.map((v) => v.cost),
      { zero: true },
    ),
  };
  const [costLow, costHigh] = x.scale.domain ?? [0, 1];
  const rightFifth = costLow + 0.8 * (costHigh - costLow);
  const rates = [...values.map((v) => v.rate), ...(targetRps === null ? [] : [targetRps])];
  const y = {
    field: 'rate',
    type: 'quantitative' as const,
    title: 'max rate within the SLOs (rps)',
    scale: readableScale(rates, { zero: true }),
  };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'Max rate against cost per hour',
      subtitle: [`${candidates} searched candidate${candidates === 1 ? '' : 's'}; \u00d7N: N candidates at one point`],
    },
    width: 420,
    height: 280,
    layer: [
      ...(targetRps === null
        ? []
        : [
            {
              data: { values: [{ target: targetRps, label: `target ${targetRps} rps` }] },
              layer: [
                { mark: { type: 'rule' as const, strokeDash: [4, 4], color: '#555' }, encoding: { y: { ...y, field: 'target' } } },
                {
                  mark: {
                    type: 'text' as const,
                    x: 'width' as const,
                    align: 'right' as const,
                    baseline: 'bottom' as const,
                    dy: -3,
                    color: '#555',
                    fontSize: 10,
                  },
                  encoding: { y: { ...y, field: 'target' }, text: { field: 'label' } },
                },
              ],
            },
          ]),
      {
        data: { values },
        mark: { type: 'point', filled: true, opacity: 0.9, stroke: '#222', strokeWidth: 0.5 },
        encoding: {
          x,
          y,
          color: { field: 'hardware', type: 'nominal', title: 'GPU', legend: { ...LEGEND, symbolType: 'circle' } },
          shape: {
            field: 'kind',
            type: 'nominal',
            title: null,
            scale: { domain: kinds, range: kinds.map((kind) => KIND_SHAPES[kind]) },
            legend: LEGEND,
          },
          // The same field, domain and legend as the shape: one legend of both.
          size: {
            field: 'kind',
            type: 'ordinal',
            title: null,
            scale: { type: 'ordinal', domain: kinds, range: kinds.map((kind) => KIND_SIZES[kind]) },
            legend: LEGEND,
          },
        },
      },
      {
        data: { values: values.filter((v) => v.count > 1) },
        // Right of its point, or left of it in the right fifth of the plot, where it would run past it.
        mark: {
          type: 'text',
          baseline: 'middle',
          fontSize: 11,
          align: { expr: `datum.cost > ${rightFifth} ? 'right' : 'left'` },
          dx: { expr: `datum.cost > ${rightFifth} ? -11 : 11` },
        },
        encoding: { x, y, text: { field: 'label' } },
      },
    ],
  };
}

export interface PlanCharts {
  frontiers: Array<{ slo: string; svg: string }>;
  cost: string | null;
  /** With more than one layout: max rate against cost with each layout's frontier. */
  layouts: string | null;
}

/**
 * Max rate against cost per hour, one colour per layout: every searched candidate (filled on its
 * layout's frontier, hollow below it) and each layout's frontier as a step line, the most it
 * sustains for at most that much per hour.
 */
export function layoutSpec(rows: readonly CandidateRow[], targetRps: number | null): Spec | null {
  const values = rows
    .filter((r) => r.max_rate_rps !== null && r.max_rate_rps > 0)
    .map((r) => ({ layout: r.layout, cost: r.cost_per_hour, rate: r.max_rate_rps as number, id: r.id, frontier: r.on_frontier }));
  if (values.length === 0) return null;
  const layouts = [...new Set(rows.map((r) => r.layout))];
  const line = values.filter((v) => v.frontier).sort((a, b) => a.cost - b.cost || a.rate - b.rate);
  const x = {
    field: 'cost',
    type: 'quantitative' as const,
    title: 'cost per hour',
    scale: readableScale(
      values.map((v) => v.cost),
      { zero: true },
    ),
  };
  const y = {
    field: 'rate',
    type: 'quantitative' as const,
    title: 'max rate within the SLOs (rps)',
    scale: readableScale([...values.map((v) => v.rate), ...(targetRps === null ? [] : [targetRps])], { zero: true }),
  };
  const color = {
    field: 'layout',
    type: 'nominal' as const,
    title: 'layout',
    scale: { domain: layouts },
    legend: { ...LEGEND, symbolType: 'circle' },
  };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: "Each layout's frontier: max rate against cost per hour",
      subtitle: ["filled: on its layout's frontier (no candidate of the layout costs no more and sustains more)"],
    },
    width: 420,
    height: 280,
    layer: [
      ...(targetRps === null
        ? []
        : [
            {
              data: { values: [{ target: targetRps }] },
              mark: { type: 'rule' as const, strokeDash: [4, 4], color: '#555' },
              encoding: { y: { ...y, field: 'target' } },
            },
          ]),
      {
        data: { values: line },
        mark: { type: 'line', strokeWidth: 2, interpolate: 'step-after' },
        encoding: { x, y, color, order: { field: 'cost', type: 'quantitative' } },
      },
      {
        data: { values },
        mark: { type: 'point', size: 60, strokeWidth: 1.5, opacity: 0.9 },
        encoding: {
          x,
          y,
          color,
          fill: {
            condition: { test: 'datum.frontier', field: 'layout', type: 'nominal', scale: { domain: layouts }, legend: null },
            value: 'transparent',
          },
        },
      },
    ],
  };
}

export async function renderPlanCharts(
  plan: PlanSpec,
  states: readonly CandidateState[],
  json: PlanJson,
  meanOutputTokens: number | null,
): Promise<PlanCharts> {
  const frontiers: PlanCharts['frontiers'] = [];
  const byLayout = plan.search.workers.length > 1;
  for (const slo of plan.slos) {
    const spec = meanOutputTokens === null ? null : frontierSpec(frontierPoints(states, slo, meanOutputTokens, byLayout), slo, byLayout);
    if (spec !== null) frontiers.push({ slo: sloName(slo), svg: await renderSvg(spec) });
  }
  const cost = costSpec(json.candidates, json.best?.id ?? null, json.target_rps);
  const layouts = byLayout ? layoutSpec(json.candidates, json.target_rps) : null;
  return {
    frontiers,
    cost: cost === null ? null : await renderSvg(cost),
    layouts: layouts === null ? null : await renderSvg(layouts),
  };
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
  if (json.frontiers.length > 1) {
    out.push(`<h2>${escapeHtml(json.frontiers.map((f) => f.layout).join(' and '))} frontiers</h2>`);
    out.push(
      '<p>Per layout, the candidates no candidate of the same layout beats: none costs no more per hour and sustains a higher max rate. Cheapest first.</p>',
    );
    out.push('<div class="charts">');
    for (const { layout, candidates } of json.frontiers) {
      out.push(`<div class="chart" data-layout="${escapeHtml(layout)}"><h3>${escapeHtml(layout)}</h3>`);
      out.push(
        htmlTable(
          ['id', 'GPUs', 'cost/h', 'max rps', 'cost/M out tok'],
          candidates.map((c) => [c.id, String(c.gpus), num(c.cost_per_hour), num(c.max_rate_rps), num(c.cost_per_million_output_tokens)]),
          [false, true, true, true, true],
        ),
      );
      if (candidates.length === 0) out.push('<p>No candidate of this layout meets the SLOs at any tested rate.</p>');
      out.push('</div>');
    }
    if (charts.layouts !== null) out.push(`<div class="chart">${charts.layouts}</div>`);
    out.push('</div>');
  }
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
