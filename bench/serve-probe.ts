/**
 * Loaded into the server's process by `npm run bench:serve` (`node --import`): what the server
 * process itself sees over a window the bench opens with the IPC message `start` and closes with
 * `stop`, answered with a `ProbeFigures`. The event-loop delay comes from its own
 * perf_hooks.monitorEventLoopDelay at 1 ms resolution, which no scrape resets (prom-client resets
 * its own at every scrape of /metrics); with it, the process's CPU time and its event-loop
 * utilization. The heap it holds is read after a full collection at either end of the window
 * (the heap used between collections is a saw-tooth of garbage not yet collected), each outside
 * the delay measurement, which a collection of the whole heap would lengthen.
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

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
  /** Heap used after a full collection at the window's start and at its end (bytes). */
  liveHeapStartBytes: number;
  liveHeapEndBytes: number;
}

// The collector, callable from here only: the server's own code is run as without the probe.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const liveHeap = (): number => {
  gc();
  return process.memoryUsage().heapUsed;
};

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let startMs = performance.now();
let startCpu = process.cpuUsage();
let startElu: EventLoopUtilization = performance.eventLoopUtilization();
let liveHeapStartBytes = NaN;

const ms = (ns: number): number => ns / 1e6;

process.on('message', (message) => {
  if (message === 'start') {
    liveHeapStartBytes = liveHeap();
    delay.reset();
    startMs = performance.now();
    startCpu = process.cpuUsage();
    startElu = performance.eventLoopUtilization();
  } else if (message === 'stop') {
    const windowMs = performance.now() - startMs;
    const cpu = process.cpuUsage(startCpu);
    const elu = performance.eventLoopUtilization(startElu).utilization;
    const figures: ProbeFigures = {
      windowS: windowMs / 1000,
      delayCount: delay.count,
      delayP50Ms: ms(delay.percentile(50)),
      delayP90Ms: ms(delay.percentile(90)),
      delayP99Ms: ms(delay.percentile(99)),
      delayMaxMs: ms(delay.max),
      cpuPercent: ((cpu.user + cpu.system) / 1000 / windowMs) * 100,
      eventLoopUtilization: elu,
      liveHeapStartBytes,
      liveHeapEndBytes: liveHeap(),
    };
    process.send?.(figures);
  }
});
// The channel does not keep the server alive: it exits once drained, as without the probe.
process.channel?.unref();
