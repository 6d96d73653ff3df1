/**
 * Renders a vega-lite spec to SVG text, headless (vega-lite compiled to vega, vega's `none`
 * renderer). vega and vega-lite are loaded on the first chart: together they take about a tenth of
 * a second to load, which commands that draw nothing (`replay`, `--help`) do not pay.
 */
import type * as Vega from 'vega';
import type * as VegaLite from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';

let libraries: Promise<[typeof Vega, typeof VegaLite]> | undefined;

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  libraries ??= Promise.all([import('vega'), import('vega-lite')]);
  const [vega, vegaLite] = await libraries;
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
