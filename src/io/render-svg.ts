/**
 * Renders a vega-lite spec to SVG text, headless (vega-lite compiled to vega, vega's `none`
 * renderer). vega and vega-lite are loaded on the first chart: together they take about a tenth of
 * a second to load, which commands that draw nothing (`replay`, `--help`) do not pay.
 *
 * Text is measured with the widths of Helvetica and Helvetica-Bold (the metrics of the PDF
 * standard fonts, which Arial and Liberation Sans share) and every chart is drawn in that family.
 * Without a canvas in Node, vega would guess 0.8 em a character, about half again as wide as the
 * text a browser draws: titles, legends and labels were laid out far wider than they are, leaving
 * blank strips and legends wider than their plots.
 */
import type * as Vega from 'vega';
import type * as VegaLite from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';

/** The font family of every chart: Helvetica's widths, whichever of these the viewer has. */
export const CHART_FONT = 'Helvetica, Arial, "Liberation Sans", sans-serif';

type Widths = (text: string) => number;

let libraries: Promise<[typeof Vega, typeof VegaLite]> | undefined;

/** Width in em of each character of Helvetica and Helvetica-Bold (glyphs WinAnsi has; others take the width of `n`). */
async function helveticaWidths(): Promise<{ regular: Widths; bold: Widths }> {
  const { Encodings, Font, FontNames } = await import('@pdf-lib/standard-fonts');
  const widths = (name: (typeof FontNames)[keyof typeof FontNames]): Widths => {
    const font = Font.load(name);
    const fallback = font.getWidthOfGlyph('n') ?? 556;
    const cache = new Map<number, number>();
    const ofChar = (code: number): number => {
      let width = cache.get(code);
      if (width === undefined) {
        const glyph = Encodings.WinAnsi.canEncodeUnicodeCodePoint(code) ? Encodings.WinAnsi.encodeUnicodeCodePoint(code).name : null;
        width = ((glyph === null ? undefined : font.getWidthOfGlyph(glyph)) ?? fallback) / 1000;
        cache.set(code, width);
      }
      return width;
    };
    return (text) => {
      let sum = 0;
      for (const char of text) sum += ofChar(char.codePointAt(0) as number);
      return sum;
    };
  };
  return { regular: widths(FontNames.Helvetica), bold: widths(FontNames.HelveticaBold) };
}

interface TextItem {
  fontSize?: number | string;
  fontWeight?: number | string;
  limit?: number;
}

async function load(): Promise<[typeof Vega, typeof VegaLite]> {
  const [vega, vegaLite, helvetica] = await Promise.all([import('vega'), import('vega-lite'), helveticaWidths()]);
  // vega calls a width function it is given for every measure (the way vl-convert measures text);
  // its type declarations leave `textMetrics` out.
  const metrics = (vega as unknown as { textMetrics: { width: (item: TextItem, text?: string | number | null) => number } }).textMetrics;
  metrics.width = (item, text) => {
    const line = text === null || text === undefined ? '' : String(text).trim();
    const size = item.fontSize === undefined || item.fontSize === null ? 11 : Number(item.fontSize) || 0;
    const bold = item.fontWeight === 'bold' || Number(item.fontWeight) >= 600;
    const width = (bold ? helvetica.bold : helvetica.regular)(line) * size;
    // A limited text is cut to its limit (with an ellipsis) before it is drawn.
    return item.limit !== undefined && item.limit > 0 ? Math.min(width, item.limit) : width;
  };
  return [vega, vegaLite];
}

/**
 * Numbers on axes and in text marks: up to 6 significant digits, thousands grouped, no trailing
 * zeros (`1`, `0.5`, `12,000`, not `1.000000` or `0.50`).
 */
export const CHART_NUMBER_FORMAT = ',~r';

/**
 * The spec with every chart's font family and number format, and its legends under the plot one
 * under the other (side by side, two legends ran past the plot); a spec's own config otherwise kept.
 */
function withDefaults(spec: TopLevelSpec): TopLevelSpec {
  // vega-lite passes the legend layout on to vega, though its types leave it out.
  const legend = { layout: { bottom: { anchor: 'start', direction: 'vertical' } }, ...spec.config?.legend };
  // Axis labels at least 4 px apart: a crowded one is left out (log axes labelled 300400 otherwise).
  const axis = { labelSeparation: 4, ...spec.config?.axis };
  return {
    ...spec,
    config: { numberFormat: CHART_NUMBER_FORMAT, ...spec.config, axis, legend, font: CHART_FONT },
  } as unknown as TopLevelSpec;
}

/** A chart ready to read: its vega view (scenegraph, scales; finalize it when done) and what vega-lite and vega warned of. */
export interface ChartView {
  view: Vega.View;
  /** Warnings (a property dropped, legends in conflict): collected, never printed; a test expects none. */
  warnings: string[];
}

export async function chartView(spec: TopLevelSpec): Promise<ChartView> {
  libraries ??= load();
  const [vega, vegaLite] = await libraries;
  const warnings: string[] = [];
  const logger = vega.logger(vega.Warn, undefined, (_method, _level, input) => {
    warnings.push(input.map(String).join(' '));
  });
  const compiled = vegaLite.compile(withDefaults(spec), { logger }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logger });
  await view.runAsync();
  return { view, warnings };
}

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const { view } = await chartView(spec);
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
