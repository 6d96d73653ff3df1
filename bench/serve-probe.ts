/**
 * Loaded into the server's process by `npm run bench:serve` (`node --import`): what the server
 * process itself sees over a window the bench opens with the IPC message `start` and closes with
 * `stop`, answered with a `ProbeFigures`. The event-loop delay comes from its own
 * perf_hooks.monitorEventLoopDelay at 1 ms resolution, which no scrape resets (prom-client resets
 * its own at every scrape of /metrics); with it, the process's CPU time, its event-loop
 * utilization, and the heap used after each major collection (the heap's floor, free of the
 * saw-tooth of garbage not yet collected).
 */
import {
  constants,
  monitorEventLoopDelay,
  performance,
  PerformanceObserver,
  type EventLoopUtilization,
  type NodeGCPerformanceDetail,
} from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

export interface ProbeFigures {
  windowS: number;
  /** Event-loop delay percentiles (ms) and how many delays were recorded. */
  delayCount: number;
  delayP50Ms: number;
  delayP90Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  /** CPU time (user + system) over the window, in % of one core. */
  cpuPercent: number;
  /** Share of the window the event loop was busy (0-1). */
  eventLoopUtilization: number;
  /** Heap used right after each major collection in the window: seconds since `start`, bytes. */
  majorGcHeap: Array<{ atS: number; heapUsedBytes: number }>;
}

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let startMs = performance.now();
let startCpu = process.cpuUsage();
let startElu: EventLoopUtilization = performance.eventLoopUtilization();
let majorGcHeap: ProbeFigures['majorGcHeap'] = [];

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const detail = (entry as unknown as { detail?: NodeGCPerformanceDetail }).detail;
    if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      majorGcHeap.push({ atS: (performance.now() - startMs) / 1000, heapUsedBytes: getHeapStatistics().used_heap_size });
    }
  }
}).observe({ entryTypes: ['gc'] });

const ms = (ns: number): number => ns / 1e6;

process.on('message', (message) => {
  if (message === 'start') {
    delay.reset();
    startMs = performance.now();
    startCpu = process.cpuUsage();
    startElu = performance.eventLoopUtilization();
    majorGcHeap = [];
  } else if (message === 'stop') {
    const windowMs = performance.now() - startMs;
    const cpu = process.cpuUsage(startCpu);
    const figures: ProbeFigures = {
      windowS: windowMs / 1000,
      delayCount: delay.count,
      delayP50Ms: ms(delay.percentile(50)),
      delayP90Ms: ms(delay.percentile(90)),
      delayP99Ms: ms(delay.percentile(99)),
      delayMaxMs: ms(delay.max),
      cpuPercent: ((cpu.user + cpu.system) / 1000 / windowMs) * 100,
      eventLoopUtilization: performance.eventLoopUtilization(startElu).utilization,
      majorGcHeap,
    };
    process.send?.(figures);
  }
});
// The channel does not keep the server alive: it exits once drained, as without the probe.
process.channel?.unref();
