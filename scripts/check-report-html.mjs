#!/usr/bin/env node
/**
 * Opens reports (`report.html` of a score or a plan) and charts (`sweep.svg`, `fit.svg`) in
 * headless Chromium with the network cut off, and checks what Chromium drew: every chart is
 * there as an SVG, and each one is whole and readable (the layout checks below, measured on the
 * page Chromium laid out, with the fonts it has). A screenshot of the page, and one of each
 * chart, can be taken to look at.
 *
 *   node scripts/check-report-html.mjs FILE.html|FILE.svg [SCREENSHOT.png] [--charts DIR] [--chromium PATH]
 *
 * The layout checks, per chart:
 * - nothing is drawn outside the chart, and the chart has no blank strip wider than 40 px at its
 *   right or bottom edge;
 * - every data point, bar and label lies whole inside its plot (a point on the edge of the
 *   domain is not half cut off), lines and rules too unless their plot clips them, and a bar
 *   stops short of the plot's top;
 * - every legend entry has a swatch one can see, and no legend runs past the plots;
 * - axis labels do not overlap, repeat or end in trailing zeros (`1.000000`, `0.50`), and a
 *   numeric axis spans at least 2 % of its values (not 525.36 to 525.40).
 *
 * Chromium is not a project dependency (Debian: `apt-get install -y chromium`). Exit codes:
 * 0 ok, 1 a page or chart fails a check, 2 bad arguments, 3 no Chromium.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/**
 * Flags for a headless run that cannot reach any network: every host name resolves to
 * nothing and every request goes to a closed local port.
 */
function chromiumFlags(profileDir) {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--hide-scrollbars',
    '--host-resolver-rules=MAP * ~NOTFOUND',
    '--proxy-server=127.0.0.1:9',
    `--user-data-dir=${profileDir}`,
  ];
}

/**
 * Runs in the page Chromium laid out (injected into a copy of the file, never into the file
 * itself) and writes what it found into `#servesim-chart-check` as JSON: one entry per SVG chart,
 * with its title and the problems of the checks listed at the top of this file.
 */
function layoutProbe() {
  /* global document, getComputedStyle */
  const TOLERANCE = 0.75;
  const BLANK_EDGE = 40;
  const rect = (el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };
  };
  const inside = (r, box, tol = TOLERANCE) =>
    r.left >= box.left - tol && r.right <= box.right + tol && r.top >= box.top - tol && r.bottom <= box.bottom + tol;
  const drawn = (el) => {
    for (let node = el; node && node.nodeType === 1 && node.tagName.toLowerCase() !== 'svg'; node = node.parentNode) {
      const style = getComputedStyle(node);
      if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return false;
    }
    const r = el.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  };
  /** Whether a shape shows: a fill over an area, or a stroke (a line's fill shows nothing). */
  const paints = (el, box) => {
    const style = getComputedStyle(el);
    if (Number(style.opacity) === 0) return false;
    const clear = (paint) => paint === 'none' || /rgba\(.*,\s*0\)$/.test(paint) || paint === 'transparent';
    const filled = !clear(style.fill) && Number(style.fillOpacity) > 0 && box.width >= 2 && box.height >= 2;
    const stroked = !clear(style.stroke) && Number(style.strokeOpacity) > 0 && parseFloat(style.strokeWidth) > 0;
    return filled || stroked;
  };
  const describe = (el) => {
    const label = el.getAttribute('aria-label');
    if (label) return label.length > 80 ? `${label.slice(0, 77)}...` : label;
    return el.textContent?.trim() || el.tagName.toLowerCase();
  };
  const fmt = (r) => `${Math.round(r.left)},${Math.round(r.top)} to ${Math.round(r.right)},${Math.round(r.bottom)}`;
  /** The plot a mark is drawn in: the nearest group item with a background (a view's cell, a facet's cell). */
  const cellOf = (el) => {
    for (let node = el.parentElement; node && node.tagName.toLowerCase() !== 'svg'; node = node.parentElement) {
      const background = node.querySelector(':scope > path.background');
      const group = node.parentElement;
      if (background && group && group.classList.contains('mark-group') && !/role-(axis|legend|title)/.test(group.getAttribute('class')))
        return { box: rect(background), clipped: node.querySelector(':scope > g[clip-path]') !== null };
    }
    return null;
  };
  const charts = [];
  document.querySelectorAll('svg').forEach((svg, index) => {
    const problems = [];
    const box = rect(svg);
    const title = [...svg.querySelectorAll('.role-title-text text')].map((t) => t.textContent).join(' ') || `chart ${index + 1}`;
    const shapes = [...svg.querySelectorAll('text, path, line, rect, circle')].filter(
      (el) => !(el.tagName.toLowerCase() === 'rect' && el.parentNode === svg) && !el.classList.contains('background') && drawn(el),
    );

    // Nothing outside the chart; no wide blank strip at the right or the bottom.
    let contentRight = box.left;
    let contentBottom = box.top;
    for (const el of shapes) {
      const r = rect(el);
      contentRight = Math.max(contentRight, r.right);
      contentBottom = Math.max(contentBottom, r.bottom);
      if (!inside(r, box, 1)) problems.push(`drawn outside the chart (${fmt(r)} in ${fmt(box)}): ${describe(el)}`);
    }
    if (box.right - contentRight > BLANK_EDGE) problems.push(`a blank strip ${Math.round(box.right - contentRight)} px wide at the right`);
    if (box.bottom - contentBottom > BLANK_EDGE)
      problems.push(`a blank strip ${Math.round(box.bottom - contentBottom)} px high at the bottom`);

    // Marks whole inside their plot.
    const cells = [];
    for (const mark of svg.querySelectorAll('g.role-mark')) {
      const cell = cellOf(mark);
      if (cell === null) continue;
      cells.push(cell.box);
      const kind = [...mark.classList].find((c) => c.startsWith('mark-'))?.slice(5) ?? 'mark';
      const mustBeWhole = kind === 'symbol' || kind === 'rect' || kind === 'text';
      for (const item of mark.querySelectorAll(':scope > path, :scope > line, :scope > text, :scope > g > path')) {
        if (!drawn(item)) continue;
        const r = rect(item);
        if (mustBeWhole && cell.clipped) problems.push(`a ${kind} in a plot that clips it: ${describe(item)}`);
        else if (!inside(r, cell.box) && (mustBeWhole || !cell.clipped))
          problems.push(`a ${kind} not whole inside its plot (${fmt(r)} in ${fmt(cell.box)}): ${describe(item)}`);
        if (kind === 'rect' && r.top < cell.box.top + 3 && r.height > 0)
          problems.push(`a bar touches the top of its plot: ${describe(item)}`);
      }
    }
    const plots = cells.length > 0 ? cells.reduce((u, c) => ({ left: Math.min(u.left, c.left), right: Math.max(u.right, c.right) })) : null;

    // Legends: a swatch per entry, within the plots' width.
    for (const legend of svg.querySelectorAll('g.role-legend')) {
      const r = rect(legend);
      if (plots !== null && r.right > plots.right + 1)
        problems.push(`a legend runs ${Math.round(r.right - plots.right)} px past the plots: ${describe(legend)}`);
      for (const label of legend.querySelectorAll('g.role-legend-label text')) {
        const entry = label.closest('g.role-scope');
        const symbol = entry?.querySelector('g.role-legend-symbol path');
        const s = symbol ? rect(symbol) : null;
        if (!symbol || !drawn(symbol) || !paints(symbol, s) || Math.max(s.width, s.height) < 4)
          problems.push(`legend entry "${label.textContent}" has no visible swatch`);
      }
    }

    // Axis labels: no overlap, no repeats, no trailing zeros, a sane span.
    for (const axis of svg.querySelectorAll('g.role-axis')) {
      const labels = [...axis.querySelectorAll('g.role-axis-label text')].filter(drawn);
      const texts = labels.map((l) => l.textContent.trim());
      const name = axis.getAttribute('aria-label') || 'an axis';
      for (const text of texts)
        if (/\.\d*0(?!\d)/.test(text) && /^[-+\u2212]?[\d,]*\.\d+/.test(text))
          problems.push(`axis label "${text}" has trailing zeros (${name})`);
      const repeated = texts.filter((t, i) => texts.indexOf(t) !== i);
      if (repeated.length > 0) problems.push(`axis labels repeat: ${[...new Set(repeated)].join(', ')} (${name})`);
      const boxes = labels.map(rect);
      for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < boxes.length; j++) {
          const a = boxes[i];
          const b = boxes[j];
          // Closer than 2 px reads as one label ("300400").
          if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > -2 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1)
            problems.push(`axis labels "${texts[i]}" and "${texts[j]}" overlap or touch (${name})`);
        }
      const numbers = texts.map((t) => Number(t.replace(/,/g, '').replace('\u2212', '-'))).filter((v) => Number.isFinite(v));
      if (numbers.length >= 2 && numbers.length === texts.length) {
        const low = Math.min(...numbers);
        const high = Math.max(...numbers);
        const magnitude = Math.max(Math.abs(low), Math.abs(high));
        if (magnitude > 0 && (high - low) / magnitude < 0.02)
          problems.push(`axis spans ${texts[0]} to ${texts[texts.length - 1]}, under 2 % of its values (${name})`);
      }
    }
    charts.push({ index, title, width: Math.round(box.width), height: Math.round(box.height), problems });
  });
  const out = document.createElement('pre');
  out.id = 'servesim-chart-check';
  out.textContent = JSON.stringify(charts);
  document.body.appendChild(out);
}

/** A page of the file with the probe appended: a copy of a report, or a page around an SVG. */
function probePage(file, source) {
  const probe = `<script>(${layoutProbe.toString()})();</script>`;
  if (file.endsWith('.svg')) {
    return `<!doctype html><html><head><meta charset="utf-8"><title>${basename(file)}</title></head><body style="margin:0"><h1 hidden>${basename(file)}</h1>${source}${probe}</body></html>`;
  }
  return source.includes('</body>') ? source.replace('</body>', `${probe}</body>`) : `${source}${probe}`;
}

function pngSignature(png) {
  return readFileSync(png).subarray(0, 8).toString('hex') === '89504e470d0a1a0a';
}

/**
 * Checks a report page or chart file; returns `{ svgCount, expectedSvgCount, charts, screenshot,
 * screenshotBytes, chartScreenshots }`, `charts` holding each chart's title, size and layout
 * problems. Throws with the reason when Chromium fails or the page is not whole.
 */
export function checkReportHtml(reportPath, screenshotPath, chromium = DEFAULT_CHROMIUM, chartsDir = undefined) {
  const file = resolve(reportPath);
  if (!existsSync(file)) throw new Error(`${reportPath}: no such file`);
  const source = readFileSync(file, 'utf8');
  const expectedSvgCount = (source.match(/<svg[\s>]/g) ?? []).length;
  const external = source
    .replace(/xmlns(:xlink)?="http:\/\/www\.w3\.org\/[^"]*"/g, '')
    .match(/<script|<link\b|<img\b|<iframe|@import|\bsrc=|url\(\s*['"]?https?:|https?:\/\//i);
  if (external) throw new Error(`${reportPath}: refers to something outside the page (${external[0]})`);
  const profileDir = mkdtempSync(join(tmpdir(), 'servesim-chromium-'));
  try {
    const probed = join(profileDir, 'probe.html');
    writeFileSync(probed, probePage(file, source));
    const dom = execFileSync(chromium, [...chromiumFlags(profileDir), '--dump-dom', pathToFileURL(probed).href], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 60_000,
      maxBuffer: 256 * 1024 * 1024,
    });
    const svgCount = (dom.match(/<svg[\s>]/g) ?? []).length;
    if (svgCount !== expectedSvgCount || svgCount === 0) {
      throw new Error(`${reportPath}: Chromium built a page with ${svgCount} charts; the file has ${expectedSvgCount}`);
    }
    if (!/<h1[\s>]/.test(dom)) throw new Error(`${reportPath}: Chromium built a page without its title`);
    const found = /<pre id="servesim-chart-check">([^<]*)<\/pre>/.exec(dom);
    if (!found) throw new Error(`${reportPath}: the layout checks did not run in Chromium`);
    const charts = JSON.parse(
      found[1]
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&'),
    );
    let screenshotBytes = 0;
    if (screenshotPath) {
      const png = resolve(screenshotPath);
      const url = pathToFileURL(file).href;
      execFileSync(chromium, [...chromiumFlags(profileDir), '--window-size=1400,2400', `--screenshot=${png}`, url], {
        stdio: 'ignore',
        timeout: 60_000,
      });
      if (!existsSync(png)) throw new Error(`${reportPath}: Chromium wrote no screenshot`);
      screenshotBytes = statSync(png).size;
      if (!pngSignature(png)) throw new Error(`${png}: not a PNG`);
    }
    const chartScreenshots = chartsDir ? screenshotCharts(source, file, resolve(chartsDir), chromium, profileDir) : [];
    return {
      svgCount,
      expectedSvgCount,
      charts,
      screenshot: screenshotPath ? resolve(screenshotPath) : undefined,
      screenshotBytes,
      chartScreenshots,
    };
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
  }
}

/** One PNG per chart, each alone on a page of its own size, at 1.5 device pixels per px. */
function screenshotCharts(source, file, dir, chromium, profileDir) {
  mkdirSync(dir, { recursive: true });
  const stem = basename(file).replace(/\.[^.]*$/, '');
  const svgs = source.match(/<svg[\s\S]*?<\/svg>/g) ?? [];
  return svgs.map((svg, i) => {
    const width = Math.ceil(Number(/\swidth="([\d.]+)"/.exec(svg)?.[1] ?? 800));
    const height = Math.ceil(Number(/\sheight="([\d.]+)"/.exec(svg)?.[1] ?? 600));
    const page = join(profileDir, `chart-${i}.html`);
    writeFileSync(page, `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0">${svg}</body></html>`);
    const png = join(dir, svgs.length > 1 ? `${stem}-${i + 1}.png` : `${stem}.png`);
    execFileSync(
      chromium,
      [
        ...chromiumFlags(profileDir),
        '--force-device-scale-factor=1.5',
        `--window-size=${width},${height}`,
        `--screenshot=${png}`,
        pathToFileURL(page).href,
      ],
      { stdio: 'ignore', timeout: 60_000 },
    );
    if (!existsSync(png) || !pngSignature(png)) throw new Error(`${png}: Chromium wrote no PNG`);
    return png;
  });
}

function main(argv) {
  const args = [...argv];
  const option = (name) => {
    const at = args.indexOf(name);
    if (at < 0) return undefined;
    const value = args[at + 1];
    args.splice(at, 2);
    return value ?? '';
  };
  const chromium = option('--chromium') ?? DEFAULT_CHROMIUM;
  const chartsDir = option('--charts');
  if (args.length < 1 || args.length > 2 || !chromium || chartsDir === '') {
    process.stderr.write(
      'usage: node scripts/check-report-html.mjs FILE.html|FILE.svg [SCREENSHOT.png] [--charts DIR] [--chromium PATH]\n',
    );
    return 2;
  }
  if (!existsSync(chromium)) {
    process.stderr.write(`no Chromium at ${chromium} (Debian: apt-get install -y chromium)\n`);
    return 3;
  }
  try {
    const result = checkReportHtml(args[0], args[1], chromium, chartsDir);
    const failing = result.charts.filter((chart) => chart.problems.length > 0);
    for (const chart of failing) {
      process.stderr.write(`${args[0]}: chart ${chart.index + 1} (${chart.title}):\n`);
      for (const problem of chart.problems) process.stderr.write(`  ${problem}\n`);
    }
    if (failing.length > 0) return 1;
    process.stdout.write(
      `${args[0]}: ok, ${result.svgCount} charts rendered without network and laid out whole` +
        (result.screenshot ? `; screenshot ${result.screenshot} (${result.screenshotBytes} bytes)` : '') +
        (result.chartScreenshots.length > 0 ? `; one PNG per chart in ${resolve(chartsDir)}` : '') +
        '\n',
    );
    return 0;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  process.exitCode = main(process.argv.slice(2));
}
