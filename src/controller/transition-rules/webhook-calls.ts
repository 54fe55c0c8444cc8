// A PodTransitionRule webhook rule's calls, as kuperator makes them (processor/rules/webhook.go,
// polling.go) but never on the reconcile's time: a reconcile reads the answers that have come and
// starts a call for the pods still waiting; the call runs on its own, bounded by a timeout, and
// its answer makes the rule due again. So an endpoint that hangs or answers garbage holds the
// pods it is asked about — rejected, with the reason — and never a worker of the controller.
//
// kuperator's shapes: the request {traceId, ruleName, stage, resources[{apiVersion: "core/v1",
// kind: "Pod", name, parameters}]}; the answer {success, finishedNames, message, poll|async,
// traceId, taskId}. success without poll passes every pod asked about; not success passes the
// finishedNames and asks again after 5 s; poll starts a task polled at poll.url?task-id=<id>
// every intervalSeconds for timeoutSeconds ({success, finished, finishedNames, message, stop}).
// A call that fails (no answer in time, not 2xx, not that JSON) rejects its pods with the error
// and is made again after a backoff (1 s doubling to 60 s). Tasks are recorded in the rule's
// status.ruleStates (taskStates, and history for 10 minutes) and taken up again after a restart.
import { randomUUID } from "node:crypto";
import type { PodTransitionRule, TaskInfo, TransitionRule } from "../../api/podtransitionrule.ts";
import { DEFAULT_POLL_INTERVAL_SECONDS, DEFAULT_POLL_TIMEOUT_SECONDS } from "../../api/podtransitionrule.ts";
import type { Pod } from "../../kube/objects.ts";
import { formatTime, parseTime } from "../../kube/timestamps.ts";
import type { Clock, Timer } from "../runtime/clock.ts";
import { webhookParameter } from "./webhook-parameters.ts";
import type { RuleResult } from "./rules.ts";

/** kuperator's defaultInterval: a webhook that said no is asked again after this long. */
export const REJECTED_RETRY_MS = 5_000;
/** kuperator's utils/http timeout. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
const HISTORY_MS = 10 * 60_000;
const BACKOFF_MS = { initial: 1_000, max: 60_000 };

export type Exchange = (method: "POST" | "GET", url: string, body: unknown, options: { caBundle?: string | undefined; timeoutMs: number }) => Promise<unknown>;

export interface WebhookCallsOptions {
  exchange: Exchange;
  clock: Clock;
  /** An answer came for a PodTransitionRule (its key): check it again. */
  onAnswer: (transitionRuleKey: string) => void;
  /** One call's limit (default kuperator's 30 s). */
  timeoutMs?: number;
  /** Calls in flight at once across every rule (default 16, kuperator's polling limit). */
  maxInFlight?: number;
  newTraceId?: () => string;
}

interface WebhookResponse {
  success: boolean;
  finishedNames: string[];
  message: string;
  poll: boolean;
  traceId: string;
  taskId: string;
}

interface Answer {
  pods: string[];
  traceId: string;
  response?: WebhookResponse;
  error?: string;
}

interface PollTask {
  id: string;
  url: string;
  caBundle: string | undefined;
  intervalMs: number;
  timeoutAtMs: number;
  beginMs: number;
  lastMs?: number;
  processing: string[];
  approved: Set<string>;
  message: string;
  lastError?: string;
  stopped: boolean;
  approveAll: boolean;
  timer?: Timer;
  polling: boolean;
}

interface RuleCalls {
  transitionRuleKey: string;
  inFlight?: { pods: string[]; traceId: string };
  answer?: Answer;
  /** Pods this process saw the webhook pass, while they stay in the stage. */
  approved: Set<string>;
  /** The last answer's reasons, shown until the webhook is asked again. */
  reasons: Map<string, string>;
  retryAtMs: number;
  failures: number;
  tasks: Map<string, PollTask>;
  history: TaskInfo[];
}

export class WebhookCalls {
  readonly #options: WebhookCallsOptions;
  readonly #rules = new Map<string, RuleCalls>();
  #inFlight = 0;

  constructor(options: WebhookCallsOptions) {
    this.#options = options;
  }

  /**
   * The webhook rule's verdict on `subjects` (pods of `transitionRule` in `stage`) now, from
   * the answers that have come; starts the call that is due. `approved`: pods the rule passed
   * before (its status), which are not asked again.
   */
  check(transitionRule: PodTransitionRule, rule: TransitionRule, stage: string, subjects: readonly string[], targets: ReadonlyMap<string, Pod>, approved: (pod: string) => boolean): RuleResult {
    const { namespace = "", name = "" } = transitionRule.metadata;
    const transitionRuleKey = `${namespace}/${name}`;
    const ruleName = rule.name ?? "";
    const key = `${transitionRuleKey}/${ruleName}`;
    const state = this.#state(key, transitionRuleKey);
    const now = this.#options.clock.now();
    const webhook = rule.webhook!;
    const passed = new Set<string>();
    const rejected = new Map<string, string>();
    const subjectSet = new Set(subjects);
    for (const pod of state.approved) if (!subjectSet.has(pod)) state.approved.delete(pod);
    for (const pod of subjects) if (approved(pod) || state.approved.has(pod)) passed.add(pod);
    let open = subjects.filter((pod) => !passed.has(pod));

    // Tasks a restarted process finds in the rule's status are polled again (kuperator's restart case).
    const recorded = (transitionRule.status?.ruleStates ?? []).find((entry) => entry.name === ruleName)?.webhookStatus;
    for (const task of recorded?.taskStates ?? []) {
      if (task.taskId === undefined || state.tasks.has(task.taskId) || webhook.clientConfig.poll === undefined) continue;
      if (!(task.processing ?? []).some((pod) => open.includes(pod))) continue;
      this.#startTask(state, key, webhook, task.taskId, task.processing ?? [], task.approved ?? [], task.message ?? "", parseTime(task.beginTime) ?? now);
    }
    const history = new Map((recorded?.history ?? []).filter((task) => (parseTime(task.lastTime) ?? parseTime(task.beginTime) ?? 0) > now - HISTORY_MS).map((task) => [task.taskId ?? "", task]));
    for (const task of state.history) history.set(task.taskId ?? "", task);
    state.history = [];

    const taskStates: TaskInfo[] = [];
    for (const task of [...state.tasks.values()]) {
      const mine = task.processing.filter((pod) => open.includes(pod));
      if (mine.length === 0 && !task.approveAll) {
        this.#retire(state, task, history);
        continue;
      }
      if (task.approveAll) {
        for (const pod of mine) passed.add(pod);
        this.#retire(state, task, history);
      } else {
        const status = task.stopped ? `polling task ${task.id} stopped` : `polling task ${task.id} is running`;
        for (const pod of mine) {
          if (task.approved.has(pod)) passed.add(pod);
          else rejected.set(pod, `Not approved by webhook ${key}, ${status} ${task.message}${task.lastError === undefined ? "" : ` ${task.lastError}`}`);
        }
        if (task.stopped) this.#retire(state, task, history);
        else taskStates.push(taskInfo(task));
      }
      // Pods a running task holds are not asked again; those a stopped one did not approve are, after a while.
      if (!task.stopped || task.approveAll) open = open.filter((pod) => !mine.includes(pod));
      else state.reasons = new Map([...state.reasons, ...mine.filter((pod) => !task.approved.has(pod)).map((pod) => [pod, rejected.get(pod)!] as const)]);
    }

    const answer = state.answer;
    if (answer !== undefined) {
      state.answer = undefined;
      state.reasons = new Map();
      const asked = answer.pods.filter((pod) => open.includes(pod));
      const response = answer.response;
      const reject = (pods: readonly string[], reason: string) => {
        for (const pod of pods) {
          rejected.set(pod, reason);
          state.reasons.set(pod, reason);
        }
      };
      if (response === undefined) {
        state.failures++;
        state.retryAtMs = now + Math.min(BACKOFF_MS.max, BACKOFF_MS.initial * 2 ** (state.failures - 1));
        reject(asked, `Fail to do webhook request ${key}, ${answer.error ?? "no answer"}, traceId ${answer.traceId}`);
      } else {
        state.failures = 0;
        const finished = new Set(response.finishedNames.filter((pod) => asked.includes(pod)));
        const taskId = response.poll ? (response.taskId !== "" ? response.taskId : response.traceId) : "";
        if (!response.success) {
          for (const pod of finished) this.#approve(state, pod, passed);
          reject(asked.filter((pod) => !finished.has(pod)), `Webhook check ${key} rejected, traceId ${answer.traceId}, taskId ${taskId}, msg: ${response.message}`);
          state.retryAtMs = now + REJECTED_RETRY_MS;
        } else if (!response.poll) {
          for (const pod of asked) this.#approve(state, pod, passed);
        } else if (taskId === "") {
          reject(asked, `Invalid empty taskID, request trace ${answer.traceId}`);
          state.retryAtMs = now + REJECTED_RETRY_MS;
        } else if (webhook.clientConfig.poll === undefined) {
          reject(asked, `Fail to get ${key} polling config , null polling config in rule ${key}`);
          state.retryAtMs = now + REJECTED_RETRY_MS;
        } else {
          for (const pod of finished) this.#approve(state, pod, passed);
          const processing = asked.filter((pod) => !finished.has(pod));
          const task = this.#startTask(state, key, webhook, taskId, processing, [...finished], response.message, now);
          taskStates.push(taskInfo(task));
          for (const pod of processing) rejected.set(pod, `Polling task ${key} initialized, will polling by taskId ${taskId}, msg: ${response.message}`);
          open = open.filter((pod) => !processing.includes(pod));
        }
      }
      open = open.filter((pod) => !passed.has(pod) && !rejected.has(pod));
    }

    let retryInMs: number | undefined;
    const waiting = open.filter((pod) => !passed.has(pod) && !rejected.has(pod));
    if (state.inFlight !== undefined) {
      for (const pod of waiting) rejected.set(pod, state.inFlight.pods.includes(pod) ? `waiting for the answer of webhook ${key}, traceId ${state.inFlight.traceId}` : `waiting for webhook ${key}: a call about other pods is in flight`);
    } else if (waiting.length > 0 && now < state.retryAtMs) {
      for (const pod of waiting) rejected.set(pod, state.reasons.get(pod) ?? `waiting to ask webhook ${key} again`);
      retryInMs = state.retryAtMs - now;
    } else if (waiting.length > 0) {
      const reason = this.#call(state, key, transitionRule, rule, stage, waiting, targets);
      for (const pod of waiting) rejected.set(pod, reason);
      if (state.inFlight === undefined) retryInMs = 1_000;
    }
    const retries = [...rejected.keys()].some((pod) => state.reasons.has(pod)) && now < state.retryAtMs ? state.retryAtMs - now : undefined;
    const due = [retryInMs, retries].filter((value): value is number => value !== undefined);
    return {
      passed,
      rejected,
      ...(due.length === 0 ? {} : { retryInMs: Math.max(100, Math.min(...due)) }),
      ruleState: { name: ruleName, webhookStatus: { taskStates: sortTasks(taskStates), history: sortTasks([...history.values()]) } },
    };
  }

  /**
   * The pods of a PodTransitionRule now in a stage: a pass this process saw for any other pod is
   * forgotten, so a pod that left its stage and comes back (its next operation) is asked again.
   */
  retain(transitionRuleKey: string, inStage: ReadonlySet<string>): void {
    for (const state of this.#rules.values()) {
      if (state.transitionRuleKey !== transitionRuleKey) continue;
      for (const pod of state.approved) if (!inStage.has(pod)) state.approved.delete(pod);
    }
  }

  /** Forgets what this process knows of a PodTransitionRule (deleted): its tasks stop polling. */
  forget(transitionRuleKey: string): void {
    for (const [key, state] of this.#rules) {
      if (state.transitionRuleKey !== transitionRuleKey) continue;
      for (const task of state.tasks.values()) task.timer?.cancel();
      this.#rules.delete(key);
    }
  }

  /** Stops every poll (the process stops leading). */
  stop(): void {
    for (const key of [...this.#rules.keys()]) this.forget(this.#rules.get(key)!.transitionRuleKey);
  }

  #state(key: string, transitionRuleKey: string): RuleCalls {
    let state = this.#rules.get(key);
    if (state === undefined) {
      state = { transitionRuleKey, approved: new Set(), reasons: new Map(), retryAtMs: 0, failures: 0, tasks: new Map(), history: [] };
      this.#rules.set(key, state);
    }
    return state;
  }

  #approve(state: RuleCalls, pod: string, passed: Set<string>): void {
    state.approved.add(pod);
    passed.add(pod);
  }

  #retire(state: RuleCalls, task: PollTask, history: Map<string, TaskInfo>): void {
    task.timer?.cancel();
    state.tasks.delete(task.id);
    history.set(task.id, taskInfo(task));
  }

  /** Starts the call about `pods`; returns the reason they wait meanwhile. */
  #call(state: RuleCalls, key: string, transitionRule: PodTransitionRule, rule: TransitionRule, stage: string, pods: string[], targets: ReadonlyMap<string, Pod>): string {
    const traceId = (this.#options.newTraceId ?? randomUUID)();
    let request: unknown;
    try {
      request = {
        traceId,
        ruleName: rule.name ?? "",
        ...(rule.stage === undefined ? {} : { stage }),
        resources: pods.map((pod) => ({
          apiVersion: "core/v1",
          kind: "Pod",
          name: pod,
          parameters: Object.fromEntries((rule.webhook!.parameters ?? []).map((parameter) => [parameter.key ?? "", webhookParameter(parameter, targets.get(pod)!)])),
        })),
      };
    } catch (error) {
      state.retryAtMs = this.#options.clock.now() + REJECTED_RETRY_MS;
      return `${key} failed to parse parameter, ${error instanceof Error ? error.message : String(error)}`;
    }
    if (this.#inFlight >= (this.#options.maxInFlight ?? 16)) return `waiting for webhook ${key}: ${this.#inFlight} webhook calls are in flight`;
    this.#inFlight++;
    state.inFlight = { pods, traceId };
    const webhook = rule.webhook!;
    const transitionRuleKey = `${transitionRule.metadata.namespace ?? ""}/${transitionRule.metadata.name ?? ""}`;
    void this.#options.exchange("POST", webhook.clientConfig.url, request, { caBundle: webhook.clientConfig.caBundle, timeoutMs: this.#options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS })
      .then((body) => {
        const response = webhookResponse(body);
        state.answer = response === undefined ? { pods, traceId, error: `the answer is not a webhook response: ${preview(body)}` } : { pods, traceId, response };
      }, (error: unknown) => {
        state.answer = { pods, traceId, error: error instanceof Error ? error.message : String(error) };
      })
      .finally(() => {
        this.#inFlight--;
        state.inFlight = undefined;
        // A rule forgotten meanwhile (its PodTransitionRule deleted) keeps no answer.
        if (this.#rules.get(key) === state) this.#options.onAnswer(transitionRuleKey);
      });
    return `waiting for the answer of webhook ${key}, traceId ${traceId}`;
  }

  #startTask(state: RuleCalls, key: string, webhook: NonNullable<TransitionRule["webhook"]>, id: string, processing: readonly string[], approved: readonly string[], message: string, beginMs: number): PollTask {
    const poll = webhook.clientConfig.poll!;
    const query = `${poll.rawQueryKey === undefined || poll.rawQueryKey === "" ? "task-id" : poll.rawQueryKey}=${encodeURIComponent(id)}`;
    const task: PollTask = {
      id,
      url: `${poll.url}${poll.url.includes("?") ? "&" : "?"}${query}`,
      caBundle: poll.caBundle,
      intervalMs: (poll.intervalSeconds ?? DEFAULT_POLL_INTERVAL_SECONDS) * 1000,
      timeoutAtMs: beginMs + (poll.timeoutSeconds ?? DEFAULT_POLL_TIMEOUT_SECONDS) * 1000,
      beginMs,
      processing: [...processing],
      approved: new Set(approved),
      message,
      stopped: false,
      approveAll: false,
      polling: false,
    };
    state.tasks.set(id, task);
    this.#schedulePoll(state, key, task);
    return task;
  }

  #schedulePoll(state: RuleCalls, key: string, task: PollTask): void {
    task.timer = this.#options.clock.setTimeout(() => {
      if (state.tasks.get(task.id) !== task || task.stopped) return;
      if (this.#options.clock.now() >= task.timeoutAtMs) {
        task.stopped = true;
        task.message = `Polling Timeout. ${task.message}`;
        this.#options.onAnswer(state.transitionRuleKey);
        return;
      }
      task.polling = true;
      void this.#options.exchange("GET", task.url, undefined, { caBundle: task.caBundle, timeoutMs: Math.min(this.#options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, task.intervalMs * 4) })
        .then((body) => {
          const answer = pollResponse(body);
          task.lastMs = this.#options.clock.now();
          if (answer === undefined) {
            task.lastError = `polling task ${task.id} error, the answer is not a poll response: ${preview(body)}`;
            return;
          }
          task.lastError = undefined;
          for (const pod of answer.finishedNames) task.approved.add(pod);
          task.message = answer.message;
          if (answer.success && answer.finished) {
            task.approveAll = true;
            task.stopped = true;
          }
          if (answer.stop) task.stopped = true;
        }, (error: unknown) => {
          task.lastMs = this.#options.clock.now();
          task.lastError = `polling task ${task.id} error, ${error instanceof Error ? error.message : String(error)}`;
        })
        .finally(() => {
          task.polling = false;
          if (state.tasks.get(task.id) !== task) return;
          this.#options.onAnswer(state.transitionRuleKey);
          if (!task.stopped) this.#schedulePoll(state, key, task);
        });
    }, task.intervalMs);
  }
}

function taskInfo(task: PollTask): TaskInfo {
  return {
    taskId: task.id,
    processing: task.processing.filter((pod) => !task.approved.has(pod)).sort(),
    approved: [...task.approved].sort(),
    beginTime: formatTime(task.beginMs),
    ...(task.lastMs === undefined ? {} : { lastTime: formatTime(task.lastMs) }),
    message: task.message,
  };
}

function sortTasks(tasks: TaskInfo[]): TaskInfo[] {
  return tasks.sort((a, b) => ((a.taskId ?? "") < (b.taskId ?? "") ? -1 : (a.taskId ?? "") > (b.taskId ?? "") ? 1 : 0));
}

/** kube-api's WebhookResponse as Go would decode it: fields of the wrong type make it no response at all. */
function webhookResponse(body: unknown): WebhookResponse | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const value = body as Record<string, unknown>;
  const bool = (field: string) => (value[field] === undefined || value[field] === null ? false : typeof value[field] === "boolean" ? value[field] : undefined);
  const text = (field: string) => (value[field] === undefined || value[field] === null ? "" : typeof value[field] === "string" ? value[field] : undefined);
  const success = bool("success");
  const poll = bool("poll");
  const async = bool("async");
  const message = text("message");
  const traceId = text("traceId");
  const taskId = text("taskId");
  const names = value.finishedNames ?? [];
  if (success === undefined || poll === undefined || async === undefined || message === undefined || traceId === undefined || taskId === undefined) return undefined;
  if (!Array.isArray(names) || !names.every((name) => typeof name === "string")) return undefined;
  return { success, poll: poll || async, message, traceId, taskId, finishedNames: names };
}

function pollResponse(body: unknown): { success: boolean; finished: boolean; stop: boolean; message: string; finishedNames: string[] } | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const value = body as Record<string, unknown>;
  const bool = (field: string) => (value[field] === undefined || value[field] === null ? false : typeof value[field] === "boolean" ? value[field] : undefined);
  const success = bool("success");
  const finished = bool("finished");
  const stop = bool("stop");
  const message = value.message === undefined || value.message === null ? "" : typeof value.message === "string" ? value.message : undefined;
  const names = value.finishedNames ?? [];
  if (success === undefined || finished === undefined || stop === undefined || message === undefined) return undefined;
  if (!Array.isArray(names) || !names.every((name) => typeof name === "string")) return undefined;
  return { success, finished, stop, message, finishedNames: names };
}

function preview(body: unknown): string {
  const text = JSON.stringify(body) ?? String(body);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
