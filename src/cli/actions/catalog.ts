/**
 * What `servesim catalog [models|hardware] [--json]` does (its options are in
 * `commands/catalog.ts`): lists the models and GPUs that roofline timing and KV capacity auto can
 * use, with the figures they are predicted from.
 */
import { BYTES_PER_ELEMENT, kvBytesPerToken, parameterCounts } from '../../catalog/architecture.js';
import { catalogFolders, loadCatalog } from '../../catalog/load.js';
import type { HardwareEntry, ModelEntry } from '../../catalog/schema.js';

export interface CatalogArgs {
  kind?: 'models' | 'hardware';
  json: boolean;
}

function pad(rows: string[][], rightFrom: number): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i >= rightFrom ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

const billions = (n: number) => `${(n / 1e9).toFixed(n < 1e10 ? 2 : 1)}B`;

function modelRow(m: ModelEntry): Record<string, unknown> {
  const counts = parameterCounts(m);
  const a = m.architecture.attention;
  return {
    id: m.id,
    name: m.name,
    kind: m.architecture.moe ? 'moe' : 'dense',
    parameters_total: m.parameters.total,
    parameters_active: m.parameters.active,
    computed_total: counts.total,
    computed_active: counts.active,
    layers: m.architecture.layers,
    attention: a.type === 'mla' ? 'mla' : `gqa ${a.heads}/${a.kv_heads}`,
    kv_bytes_per_token_bf16: kvBytesPerToken(m, BYTES_PER_ELEMENT.bf16, 1),
    precision: m.precision,
    max_context: m.max_context,
  };
}

function hardwareRow(h: HardwareEntry): Record<string, unknown> {
  return {
    id: h.id,
    name: h.name,
    memory_gb: h.memory.capacity_gb,
    bandwidth_gb_per_s: h.memory.bandwidth_gb_per_s,
    bf16_tflops: h.compute.bf16,
    fp8_tflops: h.compute.fp8,
    fp4_tflops: h.compute.fp4,
    scale_up: h.interconnect.scale_up,
    scale_up_gb_per_s: h.interconnect.scale_up_gb_per_s,
    scale_up_domain_gpus: h.interconnect.scale_up_domain_gpus,
    price_per_gpu_hour: h.price?.per_gpu_hour ?? null,
    price_date: h.price?.date ?? null,
  };
}

export function catalogListing(kind: 'models' | 'hardware' | undefined): {
  models?: Record<string, unknown>[];
  hardware?: Record<string, unknown>[];
} {
  const catalog = loadCatalog();
  return {
    ...(kind !== 'hardware' ? { models: catalog.models.map(modelRow) } : {}),
    ...(kind !== 'models' ? { hardware: catalog.hardware.map(hardwareRow) } : {}),
  };
}

export function formatCatalog(kind: 'models' | 'hardware' | undefined): string {
  const catalog = loadCatalog();
  const parts: string[] = [];
  if (kind !== 'hardware') {
    const rows = [['model', 'name', 'kind', 'params', 'active', 'layers', 'attention', 'KV KiB/token', 'precision', 'context']];
    for (const m of catalog.models) {
      const r = modelRow(m);
      rows.push([
        m.id,
        m.name,
        String(r.kind),
        billions(m.parameters.total),
        billions(m.parameters.active),
        String(r.layers),
        String(r.attention),
        ((r.kv_bytes_per_token_bf16 as number) / 1024).toFixed(1),
        m.precision,
        String(m.max_context),
      ]);
    }
    parts.push(pad(rows, 3));
    parts.push('KV KiB/token: BF16 cache of the layers whose cache grows with the context, on one GPU without tensor parallelism.');
  }
  if (kind !== 'models') {
    const rows = [['hardware', 'name', 'memory GB', 'HBM GB/s', 'BF16 TF', 'FP8 TF', 'FP4 TF', 'scale-up GB/s', 'domain', 'USD/GPU-h']];
    const tf = (x: number | null) => (x === null ? '-' : String(x));
    for (const h of catalog.hardware) {
      rows.push([
        h.id,
        h.name,
        String(h.memory.capacity_gb),
        String(h.memory.bandwidth_gb_per_s),
        tf(h.compute.bf16),
        tf(h.compute.fp8),
        tf(h.compute.fp4),
        `${h.interconnect.scale_up_gb_per_s} ${h.interconnect.scale_up}`,
        String(h.interconnect.scale_up_domain_gpus),
        h.price === undefined ? '-' : h.price.per_gpu_hour.toFixed(2),
      ]);
    }
    parts.push(pad(rows, 2));
    parts.push(
      'TF: dense peak tensor TFLOPS per GPU (datasheet); scale-up: total bidirectional per GPU; domain: GPUs it connects;\n' +
        "USD/GPU-h: an on-demand list price, with its source and date in the GPU's file (- where none is cited).",
    );
  }
  parts.push(`read from: ${catalogFolders().join(', ')}`);
  return parts.join('\n\n');
}

export function runCatalogCommand(args: CatalogArgs): void {
  if (args.json) process.stdout.write(JSON.stringify(catalogListing(args.kind), null, 2) + '\n');
  else process.stdout.write(formatCatalog(args.kind) + '\n');
}
