// Wires the PodTransitionRule reconciler to its informers: a rule's own changes, and a pod's —
// to every rule of its namespace that selects it before or after, or lists it as a target (as
// kuperator's event handler maps them) — and a webhook's answer, enqueue the rule's key.
import type { CollaSet } from "../../api/collaset.ts";
import { transitionRuleSelector } from "../../api/podtransitionrule.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { CustomResourceClient } from "../../kube/custom-objects.ts";
import { namespacedKey, type KubeObject, type Pod } from "../../kube/objects.ts";
import { enqueueObjects, reconcilerController, type ControllerWiring } from "../reconciler-controller.ts";
import type { Controller } from "../runtime/controller.ts";
import { Expectations } from "../runtime/expectations.ts";
import type { Informer } from "../runtime/informer.ts";
import type { CachedTransitionRule } from "./gate.ts";
import { TransitionRuleReconciler } from "./reconciler.ts";
import { exchangeJson } from "./webhook-http.ts";
import { WebhookCalls, type Exchange } from "./webhook-calls.ts";

export interface TransitionRuleControllerOptions extends ControllerWiring {
  informers: { transitionRules: Informer<CachedTransitionRule>; pods: Informer<Pod>; collaSets: Informer<CollaSet & KubeObject> };
  client: KubeClient;
  /** How a webhook is called (tests inject it); default HTTP(S) with the rule's caBundle. */
  exchange?: Exchange;
  /** One webhook call's limit (default kuperator's 30 s). */
  webhookTimeoutMs?: number;
}

export function transitionRuleController(options: TransitionRuleControllerOptions): Controller {
  const { transitionRules, pods, collaSets } = options.informers;
  const webhooks = new WebhookCalls({
    exchange: options.exchange ?? exchangeJson,
    clock: options.clock,
    // An answer comes after a reconcile started the call, so after the controller below exists.
    onAnswer: (key) => controller.enqueue(key),
    ...(options.webhookTimeoutMs === undefined ? {} : { timeoutMs: options.webhookTimeoutMs }),
  });
  const reconciler = new TransitionRuleReconciler({
    transitionRules: transitionRules.cache,
    pods: pods.cache,
    collaSets: collaSets.cache,
    client: {
      // The custom objects client is untyped; the objects are PodTransitionRules.
      transitionRules: options.client.kusion.podTransitionRules as unknown as CustomResourceClient<CachedTransitionRule>,
      pods: options.client.core.pods,
    },
    webhooks,
    events: options.events,
    expectations: new Expectations({ clock: options.clock }),
    clock: options.clock,
    logger: options.logger.child({ controller: "podtransitionrule" }),
  });
  const controller = reconcilerController({ ...options, name: "podtransitionrule", reconcile: reconciler.reconcile, caches: [transitionRules, pods, collaSets] });
  enqueueObjects(controller, transitionRules);
  const podChanged = (pod: Pod) => {
    const namespace = pod.metadata?.namespace ?? "";
    const name = pod.metadata?.name ?? "";
    for (const transitionRule of transitionRules.cache.list(namespace)) {
      if (transitionRuleSelector(transitionRule)?.(pod.metadata?.labels ?? {}) === true || (transitionRule.status?.targets ?? []).includes(name)) {
        controller.enqueue(namespacedKey(namespace, transitionRule.metadata.name ?? ""));
      }
    }
  };
  controller.watch(pods, { onAdd: podChanged, onUpdate: (old, pod) => { podChanged(old); podChanged(pod); }, onDelete: podChanged });
  return controller;
}
