#!/usr/bin/env node
/**
 * Opens a score report (`report.html`) in headless Chromium with the network cut off, and
 * checks that the page is whole without it: the DOM Chromium built holds every chart as an
 * SVG, and a screenshot is taken to look at.
 *
 *   node scripts/check-report-html.mjs REPORT.html [SCREENSHOT.png] [--chromium PATH]
 *
 * Chromium is not a project dependency (Debian: `apt-get install -y chromium`). Exit codes:
 * 0 ok, 1 the page is not whole, 2 bad arguments, 3 no Chromium.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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
 * Checks a report page; returns `{ svgCount, expectedSvgCount, screenshot, screenshotBytes }`.
 * Throws with the reason when Chromium fails or the page is not whole.
 */
export function checkReportHtml(reportPath, screenshotPath, chromium = DEFAULT_CHROMIUM) {
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
    const url = pathToFileURL(file).href;
    const dom = execFileSync(chromium, [...chromiumFlags(profileDir), '--dump-dom', url], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 60_000,
    });
    const svgCount = (dom.match(/<svg[\s>]/g) ?? []).length;
    if (svgCount !== expectedSvgCount || svgCount === 0) {
      throw new Error(`${reportPath}: Chromium built a page with ${svgCount} charts; the file has ${expectedSvgCount}`);
    }
    if (!/<h1>/.test(dom)) throw new Error(`${reportPath}: Chromium built a page without its title`);
    let screenshotBytes = 0;
    if (screenshotPath) {
      const png = resolve(screenshotPath);
      execFileSync(chromium, [...chromiumFlags(profileDir), '--window-size=1400,2400', `--screenshot=${png}`, url], {
        stdio: 'ignore',
        timeout: 60_000,
      });
      if (!existsSync(png)) throw new Error(`${reportPath}: Chromium wrote no screenshot`);
      screenshotBytes = statSync(png).size;
      const signature = readFileSync(png).subarray(0, 8).toString('hex');
      if (signature !== '89504e470d0a1a0a') throw new Error(`${png}: not a PNG`);
    }
    return { svgCount, expectedSvgCount, screenshot: screenshotPath ? resolve(screenshotPath) : undefined, screenshotBytes };
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
  }
}

function main(argv) {
  const args = [...argv];
  let chromium = DEFAULT_CHROMIUM;
  const at = args.indexOf('--chromium');
  if (at >= 0) {
    chromium = args[at + 1];
    args.splice(at, 2);
  }
  if (args.length < 1 || args.length > 2 || !chromium) {
    process.stderr.write('usage: node scripts/check-report-html.mjs REPORT.html [SCREENSHOT.png] [--chromium PATH]\n');
    return 2;
  }
  if (!existsSync(chromium)) {
    process.stderr.write(`no Chromium at ${chromium} (Debian: apt-get install -y chromium)\n`);
    return 3;
  }
  try {
    const result = checkReportHtml(args[0], args[1], chromium);
    process.stdout.write(
      `${args[0]}: ok, ${result.svgCount} charts rendered without network` +
        (result.screenshot ? `; screenshot ${result.screenshot} (${result.screenshotBytes} bytes)` : '') +
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
