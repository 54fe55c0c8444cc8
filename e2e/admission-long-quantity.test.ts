// Issue 29: one string must not stall every admission. A PodDecoration and a CollaSet carrying a
// 60,000-digit quantity are applied in one namespace while pods are created in another, on the
// real control plane: the decoration is refused at once with the field and the reason, the
// CollaSet is answered at once, and the pods elsewhere are admitted (and decorated) as fast as
// ever. The former quantity pattern spent seconds of the webhook's only event loop on each such
// value, holding every pod admission of the cluster meanwhile.
import { ApiException, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { clients, test } from "./support/cluster.ts";
import { apply, decorationYaml } from "./support/collaset-world.ts";
import { startOperator, troubleLines, type Operator } from "./support/operator.ts";
import { waitForAdmission } from "./support/webhook-routes.ts";

const WEB = { app: "web" };
const LONG_QUANTITY = `${"1".repeat(60_000)}x`;
/**
 * What a pod create may take while the attack runs: the API server's own work and one webhook
 * call are tens of milliseconds here; 2 s leaves room for a loaded machine, and is far below
 * the seconds a stalled event loop added to every create.
 */
const CREATE_BOUND_MS = 2000;
/** What answering the attacking object may take: the same two webhook calls (mutating, validating). */
const ANSWER_BOUND_MS = 2000;
/** Pods created after the attack was answered: the loop also shows the webhook serves on normally afterwards. */
const CREATES_AFTER_ATTACK = 3;

let operator: Operator;
beforeAll(async () => {
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

interface Answer {
  ms: number;
  status: number;
  message: string;
}

/** Creates a custom object and says how the API server answered: 201, or the refusal's code and message. */
async function createCustomObject(namespace: string, plural: string, body: object): Promise<Answer> {
  const started = performance.now();
  try {
    await clients().custom.createNamespacedCustomObject({ group: "apps.kusionstack.io", version: "v1alpha1", namespace, plural, body });
    return { ms: performance.now() - started, status: 201, message: "" };
  } catch (error) {
    const ms = performance.now() - started;
    if (!(error instanceof ApiException)) throw error;
    const message = typeof error.body === "string" ? ((JSON.parse(error.body) as { message?: string }).message ?? error.body) : String(error.body);
    return { ms, status: error.code, message };
  }
}

const container = (name: string, cpu: string) => ({ name, image: "e2e.local/app:1", resources: { limits: { cpu } } });

describe("a 60,000-digit quantity in a PodDecoration and a CollaSet", () => {
  test("is answered at once, the decoration refused with field and reason, while pod creates in another namespace stay fast", async ({ namespace, onTestFailed }) => {
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    await apply(decorationYaml(namespace, ["log-shipper=e2e.local/sidecar:1"]));
    await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
    const attackNamespace = `${namespace}-attack`;
    await clients().core.createNamespace({ body: { metadata: { name: attackNamespace } } });
    try {
      // Pods created one after another, each as soon as the one before is admitted: the loop is
      // paced by admission itself. A scheduling gate keeps them off any node (only admission counts).
      const creates: { startedAt: number; ms: number; pod?: V1Pod; refused?: string }[] = [];
      const attack: { answeredAt?: number } = {};
      let firstCreateStarted!: () => void;
      const creating = new Promise<void>((resolve) => (firstCreateStarted = resolve));
      const creator = (async () => {
        const createdAfterAttack = (answeredAt: number) => creates.filter((create) => create.startedAt > answeredAt).length;
        for (let index = 0; attack.answeredAt === undefined || createdAfterAttack(attack.answeredAt) < CREATES_AFTER_ATTACK; index++) {
          const startedAt = performance.now();
          const body = { metadata: { name: `beside-${index}`, labels: WEB }, spec: { schedulingGates: [{ name: "example.com/hold" }], containers: [{ name: "app", image: "e2e.local/app:1" }] } };
          const created = clients().core.createNamespacedPod({ namespace, body });
          firstCreateStarted();
          // A refusal is recorded, not thrown: it is what a stalled webhook does to pods (its deadline passes).
          const outcome = await created.then((pod) => ({ pod }), (error: unknown) => ({ refused: error instanceof ApiException ? `${error.code}: ${String(error.body)}` : String(error) }));
          creates.push({ startedAt, ms: performance.now() - startedAt, ...outcome });
        }
      })();
      await creating;
      const attackStarted = performance.now();
      const [decoration, collaSet] = await Promise.all([
        createCustomObject(attackNamespace, "poddecorations", {
          apiVersion: "apps.kusionstack.io/v1alpha1",
          kind: "PodDecoration",
          metadata: { name: "long-quantity" },
          spec: { selector: { matchLabels: WEB }, template: { containers: [container("sidecar", LONG_QUANTITY)] } },
        }),
        createCustomObject(attackNamespace, "collasets", {
          apiVersion: "apps.kusionstack.io/v1alpha1",
          kind: "CollaSet",
          metadata: { name: "long-quantity" },
          spec: { replicas: 0, selector: { matchLabels: WEB }, template: { metadata: { labels: WEB }, spec: { containers: [container("app", LONG_QUANTITY)] } } },
        }),
      ]);
      const attackAnsweredAt = performance.now();
      attack.answeredAt = attackAnsweredAt;
      await creator;

      // In flight while the attack was: started before it was answered, finished after it was sent.
      const during = creates.filter((create) => create.startedAt < attackAnsweredAt && create.startedAt + create.ms > attackStarted);
      const slowest = Math.max(...creates.map((create) => create.ms));
      console.log(
        `60,000-digit quantity: PodDecoration ${decoration.status} in ${Math.round(decoration.ms)} ms, CollaSet ${collaSet.status} in ${Math.round(collaSet.ms)} ms; ` +
          `${creates.length} pod creates beside it (${during.length} while it was in flight, ${creates.filter((create) => create.refused !== undefined).length} refused), slowest ${Math.round(slowest)} ms, ` +
          `attack answered ${Math.round(attackAnsweredAt - attackStarted)} ms after it was sent`,
      );
      expect(creates.flatMap((create) => create.refused ?? [])).toEqual([]);
      expect(decoration.status).toBe(422);
      expect(decoration.message).toContain("PodDecoration/long-quantity: spec.template.containers[0].resources.limits[cpu]: Too long: may not be more than 128 bytes");
      expect(decoration.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect([201, 422]).toContain(collaSet.status);
      expect(collaSet.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect(during.length).toBeGreaterThan(0);
      expect(slowest).toBeLessThan(CREATE_BOUND_MS);
      for (const { pod } of creates) expect(pod?.spec?.containers.map((each) => each.name)).toEqual(["log-shipper", "app"]);
      expect(operator.child.exitCode).toBeNull();
    } finally {
      await clients().core.deleteNamespace({ name: attackNamespace }).catch(() => undefined);
    }
  });
});
