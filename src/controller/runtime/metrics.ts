// controller-runtime's metric names, so existing dashboards work: reconcile counters and
// latency per controller, and the workqueue family per queue. Registered on the Registry
// passed in, never on prom-client's global one.
import { Counter, Gauge, Histogram, exponentialBuckets, type Registry } from "prom-client";

export interface QueueMetrics {
  added(): void;
  depth(delta: number): void;
  retried(): void;
  queued(seconds: number): void;
  worked(seconds: number): void;
}

export type ReconcileResult = "success" | "error" | "requeue" | "requeue_after";

export interface ControllerMetrics {
  reconciled(result: ReconcileResult, seconds: number): void;
}

/** Evictions a disruption budget refused (429), for one controller. */
export interface EvictionMetrics {
  refused(): void;
  /** Pods whose eviction was refused and that wait to be tried again. */
  waiting(pods: number): void;
}

/** This process's view of leader election over one lease. */
export interface LeaderMetrics {
  leading(leading: boolean): void;
  /** The holder this process observed; a change from another holder is a transition. */
  observed(holder: string): void;
}

export const noQueueMetrics: QueueMetrics = { added() {}, depth() {}, retried() {}, queued() {}, worked() {} };
export const noControllerMetrics: ControllerMetrics = { reconciled() {} };

/** Registers a metric once per registry; a second runtime on the same registry shares it. */
function registered<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

export class RuntimeMetrics {
  readonly #reconcileTotal: Counter<"controller" | "result">;
  readonly #reconcileErrors: Counter<"controller">;
  readonly #reconcileTime: Histogram<"controller">;
  readonly #depth: Gauge<"name">;
  readonly #adds: Counter<"name">;
  readonly #retries: Counter<"name">;
  readonly #queueDuration: Histogram<"name">;
  readonly #workDuration: Histogram<"name">;
  readonly #evictionRefusals: Counter<"controller">;
  readonly #evictionWaiting: Gauge<"controller">;
  readonly #leaderStatus: Gauge<"name">;
  readonly #leaderChanges: Counter<"name">;

  constructor(registry: Registry) {
    const registers = [registry];
    // client-go's workqueue buckets: 1ns to 10s by decades; controller-runtime's reconcile buckets.
    const queueBuckets = exponentialBuckets(1e-8, 10, 10);
    const reconcileBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60];
    this.#reconcileTotal = registered(registry, "controller_runtime_reconcile_total", () => new Counter({
      name: "controller_runtime_reconcile_total", help: "Total number of reconciliations per controller", labelNames: ["controller", "result"], registers,
    }));
    this.#reconcileErrors = registered(registry, "controller_runtime_reconcile_errors_total", () => new Counter({
      name: "controller_runtime_reconcile_errors_total", help: "Total number of reconciliation errors per controller", labelNames: ["controller"], registers,
    }));
    this.#reconcileTime = registered(registry, "controller_runtime_reconcile_time_seconds", () => new Histogram({
      name: "controller_runtime_reconcile_time_seconds", help: "Length of time per reconciliation per controller", labelNames: ["controller"], buckets: reconcileBuckets, registers,
    }));
    this.#depth = registered(registry, "workqueue_depth", () => new Gauge({
      name: "workqueue_depth", help: "Current depth of workqueue", labelNames: ["name"], registers,
    }));
    this.#adds = registered(registry, "workqueue_adds_total", () => new Counter({
      name: "workqueue_adds_total", help: "Total number of adds handled by workqueue", labelNames: ["name"], registers,
    }));
    this.#retries = registered(registry, "workqueue_retries_total", () => new Counter({
      name: "workqueue_retries_total", help: "Total number of retries handled by workqueue", labelNames: ["name"], registers,
    }));
    this.#queueDuration = registered(registry, "workqueue_queue_duration_seconds", () => new Histogram({
      name: "workqueue_queue_duration_seconds", help: "How long in seconds an item stays in workqueue before being requested", labelNames: ["name"], buckets: queueBuckets, registers,
    }));
    this.#workDuration = registered(registry, "workqueue_work_duration_seconds", () => new Histogram({
      name: "workqueue_work_duration_seconds", help: "How long in seconds processing an item from workqueue takes", labelNames: ["name"], buckets: queueBuckets, registers,
    }));
    this.#evictionRefusals = registered(registry, "pod_decorator_eviction_refusals_total", () => new Counter({
      name: "pod_decorator_eviction_refusals_total", help: "Evictions a PodDisruptionBudget refused (429), by controller", labelNames: ["controller"], registers,
    }));
    this.#evictionWaiting = registered(registry, "pod_decorator_eviction_refused_pods", () => new Gauge({
      name: "pod_decorator_eviction_refused_pods", help: "Pods whose eviction a PodDisruptionBudget refused and that wait to be tried again, by controller", labelNames: ["controller"], registers,
    }));
    // client-go's name and meaning: 1 while this process holds the lease.
    this.#leaderStatus = registered(registry, "leader_election_master_status", () => new Gauge({
      name: "leader_election_master_status", help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.", labelNames: ["name"], registers,
    }));
    this.#leaderChanges = registered(registry, "pod_decorator_leader_changes_total", () => new Counter({
      name: "pod_decorator_leader_changes_total", help: "Changes of the lease's holder this process observed, from one holder to another", labelNames: ["name"], registers,
    }));
  }

  queue(name: string): QueueMetrics {
    const labels = { name };
    // Zero-valued series exist from the start, as client-go's do.
    this.#depth.set(labels, 0);
    this.#adds.inc(labels, 0);
    this.#retries.inc(labels, 0);
    return {
      added: () => this.#adds.inc(labels),
      depth: (delta) => this.#depth.inc(labels, delta),
      retried: () => this.#retries.inc(labels),
      queued: (seconds) => this.#queueDuration.observe(labels, seconds),
      worked: (seconds) => this.#workDuration.observe(labels, seconds),
    };
  }

  controller(name: string): ControllerMetrics {
    this.#reconcileErrors.inc({ controller: name }, 0);
    for (const result of ["success", "error", "requeue", "requeue_after"] as const) this.#reconcileTotal.inc({ controller: name, result }, 0);
    return {
      reconciled: (result, seconds) => {
        this.#reconcileTotal.inc({ controller: name, result });
        if (result === "error") this.#reconcileErrors.inc({ controller: name });
        this.#reconcileTime.observe({ controller: name }, seconds);
      },
    };
  }

  evictions(controller: string): EvictionMetrics {
    const labels = { controller };
    this.#evictionRefusals.inc(labels, 0);
    this.#evictionWaiting.set(labels, 0);
    return {
      refused: () => this.#evictionRefusals.inc(labels),
      waiting: (pods) => this.#evictionWaiting.set(labels, pods),
    };
  }

  leader(name: string): LeaderMetrics {
    const labels = { name };
    this.#leaderStatus.set(labels, 0);
    this.#leaderChanges.inc(labels, 0);
    // The first holder a process sees is no transition: it may have held the lease for days.
    let lastHolder: string | undefined;
    return {
      leading: (leading) => {
        this.#leaderStatus.set(labels, leading ? 1 : 0);
        // Evictions waiting are the leader's to report; a former leader's would stay stale.
        if (!leading) this.#evictionWaiting.reset();
      },
      observed: (holder) => {
        if (holder === "") return;
        if (lastHolder !== undefined && holder !== lastHolder) this.#leaderChanges.inc(labels);
        lastHolder = holder;
      },
    };
  }
}
