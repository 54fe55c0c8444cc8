// A controller's work queue as a serve process's /metrics reports it (client-go's workqueue
// metrics): every key added is handed to a worker once and marked done once, so when a scrape
// finds as many done as added, every key added before it has been reconciled.
// That is the event a negative check waits on ("the controller looked, and did nothing"),
// instead of a fixed sleep. No test-runner dependency.
import { eventually } from "./polling.ts";

interface QueueCounts {
  /** workqueue_adds_total: keys queued (repeated adds while queued collapse into one). */
  adds: number;
  /** workqueue_work_duration_seconds_count: keys a worker has marked done. */
  done: number;
}

async function queueCounts(metricsPort: number, queue: string): Promise<QueueCounts> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (!response.ok) throw new Error(`GET /metrics: ${response.status}`);
  const text = await response.text();
  const sample = (metric: string) => {
    const line = text.split("\n").find((candidate) => candidate.startsWith(`${metric}{`) && candidate.includes(`name="${queue}"`));
    // A histogram has no count before its first observation.
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
  };
  return { adds: sample("workqueue_adds_total"), done: sample("workqueue_work_duration_seconds_count") };
}

/**
 * Waits until one scrape (after this call) finds every key ever added to the queue done: the
 * controller has reconciled all it was asked to, including whatever was queued before the call.
 */
export async function queueIdle(metricsPort: number, queue: string, timeoutMs = 30_000): Promise<void> {
  await eventually(async () => {
    const counts = await queueCounts(metricsPort, queue);
    if (counts.done !== counts.adds) throw new Error(`${counts.done} of ${counts.adds} keys done`);
    return true;
  }, timeoutMs, `the ${queue} controller to finish every key queued`, 50);
}
