// Temporary probe: zero-shot MAPE of roofline timing on every aggregated silicon deployment.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { findHardware, findModel } from '../src/catalog/load.js';
import { catalogBaseConfig, readSiliconDeployments } from '../src/calibrate/silicon-deployments.js';
import { simulatePoints } from '../src/calibrate/engine-calibration.js';
import { resolveSimLoad } from '../src/calibrate/sim-load.js';
import { PointPool } from '../src/sweep/pool.js';
import { packageRoot } from '../src/catalog/load.js';

const ROOT = packageRoot();
const arg = (n: string, d: number) => (process.argv.includes(n) ? Number(process.argv[process.argv.indexOf(n) + 1]) : d);
async function main() {
  const all = readSiliconDeployments(join(ROOT, 'data/silicon/aic-silicon-sample.csv'), 1);
  const maxOsl = arg('--max-osl', 1e9);
  const deps = all.filter((d) => findModel(d.modelPath) && findHardware(d.system) && d.osl <= maxOsl);
  const filter = process.argv.includes('--filter') ? process.argv[process.argv.indexOf('--filter') + 1] : '';
  const chosen = deps.filter((d) => d.label.includes(filter));
  process.stdout.write(`${all.length} deployments, ${deps.length} in catalog, ${chosen.length} chosen\n`);
  const pool = new PointPool({ poolThreads: availableParallelism() });
  const load = resolveSimLoad({ requestsPerSlot: arg('--rps', 10), rangeRatio: arg('--ratio', 0.8) });
  const started = performance.now();
  const rows: Array<{ label: string; stratum: string; ttft: number[]; itl: number[]; detail: string }> = [];
  await Promise.all(
    chosen.map(async (d) => {
      let sim;
      try {
        const base = catalogBaseConfig(d);
        sim = await simulatePoints(
          pool,
          base,
          ROOT,
          d.points.map((p) => p.key),
          null,
          load,
        );
      } catch (e) {
        rows.push({ label: d.label, stratum: 'ERROR', ttft: [], itl: [], detail: String(e).slice(0, 300) });
        return;
      }
      const ttft: number[] = [];
      const itl: number[] = [];
      let detail = '';
      d.points.forEach((p, i) => {
        const mt = p.metrics.time_to_first_token.avg as number;
        const mi = p.metrics.inter_token_latency.avg as number;
        const st = sim[i].metrics.time_to_first_token?.avg as number;
        const si = sim[i].metrics.inter_token_latency?.avg as number;
        ttft.push((Math.abs(st - mt) / mt) * 100);
        itl.push((Math.abs(si - mi) / mi) * 100);
        detail += `    C=${p.key.concurrency} TTFT ${mt.toFixed(1)} / ${st.toFixed(1)}  ITL ${mi.toFixed(2)} / ${si.toFixed(2)}\n`;
      });
      rows.push({ label: d.label, stratum: `${d.backend} ${d.moe ? 'MoE' : 'dense'}`, ttft, itl, detail });
    }),
  );
  await pool.destroy();
  rows.sort((a, b) => (a.label < b.label ? -1 : 1));
  const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / Math.max(1, v.length);
  for (const r of rows) {
    process.stdout.write(
      `${r.label.padEnd(80)} ${r.stratum.padEnd(14)} TTFT ${mean(r.ttft).toFixed(1).padStart(6)}  ITL ${mean(r.itl).toFixed(1).padStart(6)}\n`,
    );
    if (process.argv.includes('--points') || r.stratum === 'ERROR') process.stdout.write(r.detail + '\n');
  }
  const strata = new Map<string, { ttft: number[]; itl: number[]; n: number }>();
  for (const r of rows) {
    const s = strata.get(r.stratum) ?? { ttft: [], itl: [], n: 0 };
    s.ttft.push(mean(r.ttft));
    s.itl.push(mean(r.itl));
    s.n++;
    strata.set(r.stratum, s);
  }
  process.stdout.write('\nstratum (deployment-averaged MAPE):\n');
  for (const [k, s] of [...strata].sort())
    process.stdout.write(
      `  ${k.padEnd(14)} n=${String(s.n).padStart(3)}  TTFT ${mean(s.ttft).toFixed(1)}  ITL ${mean(s.itl).toFixed(1)}\n`,
    );
  const ok = rows.filter((r) => r.stratum !== 'ERROR');
  process.stdout.write(
    `overall: TTFT ${mean(ok.map((r) => mean(r.ttft))).toFixed(1)}  ITL ${mean(ok.map((r) => mean(r.itl))).toFixed(1)}  (${ok.length} deployments, ${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
  );
}
await main();
