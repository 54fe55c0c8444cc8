// A webhook rule's calls: never on the reconcile's time, kuperator's request and answer shapes,
// asked again after a no (5 s) or a failure (backoff), polling, and endpoints that hang or answer
// garbage holding their own pods and nothing else.
import { describe, expect, it } from "vitest";
import type { PodTransitionRule, TransitionRule } from "../../../src/api/podtransitionrule.ts";
import { WebhookCalls, type Exchange } from "../../../src/controller/transition-rules/webhook-calls.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { FakeClock, settle } from "../fake-clock.ts";

interface Call {
  method: string;
  url: string;
  body: unknown;
  answer: (value: unknown) => void;
  fail: (error: Error) => void;
}

/** An exchange whose calls the test answers (or never does). */
function endpoint(): { exchange: Exchange; calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    exchange: (method, url, body) => new Promise((resolve, reject) => calls.push({ method, url, body, answer: resolve, fail: reject })),
  };
}

const hook: TransitionRule = { name: "hook", webhook: { clientConfig: { url: "https://checker/check", poll: { url: "https://checker/poll", intervalSeconds: 5, timeoutSeconds: 60 } }, parameters: [{ key: "ip", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }, { key: "zone", value: "a" }] } };

function transitionRule(name = "ptr", ruleStates?: PodTransitionRule["status"]): PodTransitionRule {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodTransitionRule", metadata: { name, namespace: "shop" }, spec: { selector: {}, rules: [hook] }, ...(ruleStates === undefined ? {} : { status: ruleStates }) };
}

const targets = new Map<string, Pod>(["a", "b", "c"].map((name, index) => [name, { metadata: { name, namespace: "shop" }, status: { podIP: `10.0.0.${index + 1}` } }]));

function calls(options: { maxInFlight?: number } = {}) {
  const clock = new FakeClock();
  const { exchange, calls: made } = endpoint();
  const answers: string[] = [];
  let trace = 0;
  const webhooks = new WebhookCalls({ exchange, clock, onAnswer: (key) => answers.push(key), newTraceId: () => `trace-${++trace}`, ...options });
  const check = (subjects: string[], rule = transitionRule(), approved: (pod: string) => boolean = () => false) => {
    const result = webhooks.check(rule, hook, "PreCheck", subjects, targets, approved);
    return { passed: [...result.passed].sort(), rejected: Object.fromEntries(result.rejected), retryInMs: result.retryInMs, ruleState: result.ruleState };
  };
  return { clock, made, answers, check, webhooks };
}

describe("WebhookCalls", () => {
  it("asks once for the pods in the stage, in kuperator's shape, and passes them when the answer is success", async () => {
    const { made, answers, check, webhooks } = calls();
    const first = check(["a", "b"]);
    expect(first.passed).toEqual([]);
    expect(first.rejected).toEqual({ a: "waiting for the answer of webhook shop/ptr/hook, traceId trace-1", b: "waiting for the answer of webhook shop/ptr/hook, traceId trace-1" });
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ method: "POST", url: "https://checker/check" });
    // No stage on the rule: none in the request (kube-api's Stage is a pointer, omitted).
    expect(made[0]!.body).toEqual({ traceId: "trace-1", ruleName: "hook", resources: [{ apiVersion: "core/v1", kind: "Pod", name: "a", parameters: { ip: "10.0.0.1", zone: "a" } }, { apiVersion: "core/v1", kind: "Pod", name: "b", parameters: { ip: "10.0.0.2", zone: "a" } }] });
    // Checking again while the call is out asks nothing more.
    check(["a", "b"]);
    expect(made).toHaveLength(1);
    made[0]!.answer({ success: true, message: "ok" });
    await settle();
    expect(answers).toEqual(["shop/ptr"]);
    expect(check(["a", "b"]).passed).toEqual(["a", "b"]);
    // Passed pods stay passed while they are in the stage; they are not asked again.
    expect(check(["a", "b"]).passed).toEqual(["a", "b"]);
    expect(made).toHaveLength(1);
    // Out of the stage (no check runs while no pod is in one), then back for another operation: asked again.
    webhooks.retain("shop/ptr", new Set());
    expect(check(["a"]).passed).toEqual([]);
    expect(made).toHaveLength(2);
  });

  it("a no holds the pods but those it names finished, and asks again 5 s later", async () => {
    const { clock, made, check } = calls();
    check(["a", "b"]);
    made[0]!.answer({ success: false, finishedNames: ["a", "stranger"], message: "not yet" });
    await settle();
    const answered = check(["a", "b"]);
    expect(answered.passed).toEqual(["a"]);
    expect(answered.rejected).toEqual({ b: "Webhook check shop/ptr/hook rejected, traceId trace-1, taskId , msg: not yet" });
    expect(answered.retryInMs).toBe(5000);
    await clock.advance(4000);
    expect(check(["a", "b"]).rejected.b).toContain("rejected");
    expect(made).toHaveLength(1);
    await clock.advance(1000);
    check(["a", "b"]);
    expect(made).toHaveLength(2);
    expect((made[1]!.body as { resources: { name: string }[] }).resources.map((resource) => resource.name)).toEqual(["b"]);
  });

  it("an endpoint that hangs holds its pods, not another rule's; its failure is the reason, asked again after a backoff", async () => {
    const { clock, made, check } = calls();
    check(["a"], transitionRule("hangs"));
    const other = check(["b"], transitionRule("other"));
    expect(made).toHaveLength(2);
    made[1]!.answer({ success: true });
    await settle();
    expect(check(["b"], transitionRule("other")).passed).toEqual(["b"]);
    // The hung call ends by its timeout (the exchange's), as an error.
    made[0]!.fail(new Error("no answer within 30s"));
    await settle();
    const failed = check(["a"], transitionRule("hangs"));
    expect(failed.rejected).toEqual({ a: "Fail to do webhook request shop/hangs/hook, no answer within 30s, traceId trace-1" });
    expect(failed.retryInMs).toBe(1000);
    expect(other.rejected.b).toContain("waiting for the answer");
    await clock.advance(1000);
    check(["a"], transitionRule("hangs"));
    made[2]!.fail(new Error("connection refused"));
    await settle();
    expect(check(["a"], transitionRule("hangs")).retryInMs).toBe(2000);
  });

  it("an answer that is not kuperator's response is a failure, with what came", async () => {
    const { made, check } = calls();
    for (const garbage of ["<html>", [1, 2], { success: "yes" }, { success: true, finishedNames: "a" }, null]) {
      const rule = transitionRule(`g${made.length}`);
      check(["a"], rule);
      made.at(-1)!.answer(garbage);
      await settle();
      expect(check(["a"], rule).rejected.a).toMatch(/^Fail to do webhook request .*the answer is not a webhook response: /);
    }
  });

  it("polls a task the answer starts until it finishes, recording it in the rule's state", async () => {
    const { clock, made, answers, check } = calls();
    check(["a", "b", "c"]);
    made[0]!.answer({ success: true, poll: true, taskId: "t-1", finishedNames: ["a"], message: "started" });
    await settle();
    const started = check(["a", "b", "c"]);
    expect(started.passed).toEqual(["a"]);
    expect(started.rejected.b).toBe("Polling task shop/ptr/hook initialized, will polling by taskId t-1, msg: started");
    expect(started.ruleState?.webhookStatus?.taskStates).toEqual([expect.objectContaining({ taskId: "t-1", processing: ["b", "c"], approved: ["a"], message: "started" })]);
    await clock.advance(5000);
    expect(made[1]).toMatchObject({ method: "GET", url: "https://checker/poll?task-id=t-1" });
    made[1]!.answer({ success: true, finished: false, finishedNames: ["b"], message: "half" });
    await settle();
    expect(answers.at(-1)).toBe("shop/ptr");
    const half = check(["a", "b", "c"]);
    expect(half.passed).toEqual(["a", "b"]);
    expect(half.rejected.c).toBe("Not approved by webhook shop/ptr/hook, polling task t-1 is running half");
    await clock.advance(5000);
    made[2]!.answer({ success: true, finished: true, message: "done" });
    await settle();
    const done = check(["a", "b", "c"]);
    expect(done.passed).toEqual(["a", "b", "c"]);
    expect(done.ruleState?.webhookStatus?.taskStates).toEqual([]);
    expect(done.ruleState?.webhookStatus?.history).toEqual([expect.objectContaining({ taskId: "t-1" })]);
  });

  it("takes up a task recorded in the status after a restart, polling it again", async () => {
    const { clock, made, check } = calls();
    const recorded = transitionRule("ptr", { ruleStates: [{ name: "hook", webhookStatus: { taskStates: [{ taskId: "t-9", processing: ["b"], approved: ["a"], beginTime: new Date(clock.now()).toISOString() }] } }] });
    const resumed = check(["a", "b"], recorded, (pod) => pod === "a");
    expect(resumed.passed).toEqual(["a"]);
    expect(resumed.rejected.b).toMatch(/polling task t-9 is running/);
    expect(made).toHaveLength(0);
    await clock.advance(5000);
    expect(made[0]).toMatchObject({ method: "GET", url: "https://checker/poll?task-id=t-9" });
  });

  it("starts no more than maxInFlight calls at once; the others wait with the reason", () => {
    const { made, check } = calls({ maxInFlight: 1 });
    check(["a"], transitionRule("one"));
    const second = check(["b"], transitionRule("two"));
    expect(made).toHaveLength(1);
    expect(second.rejected.b).toBe("waiting for webhook shop/two/hook: 1 webhook calls are in flight");
    expect(second.retryInMs).toBe(1000);
  });
});
