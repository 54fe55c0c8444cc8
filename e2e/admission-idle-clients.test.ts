// Issue 29: idle clients must not hold the admission budget. Connections to serve's webhook port,
// each declaring a 3 MiB AdmissionReview and sending nothing, reopened as soon as the server closes
// one (as an attacker would), while pods are created through the real API server: every create is
// admitted and decorated. The sizes repeat issue 29's probe, 3 + 3 + 3 + 1 MiB, which filled the
// former budget (charged from declared lengths) exactly: every create was refused.
import { ApiException, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { declaredSizes, idleClients } from "../test/bench/idle-clients.ts";
import { clients, test } from "./support/cluster.ts";
import { apply, decorationYaml } from "./support/collaset-world.ts";
import { startOperator, troubleLines, type Operator } from "./support/operator.ts";
import { waitForAdmission } from "./support/webhook-routes.ts";

const WEB = { app: "web" };
/** Longer than serve's arrival deadline (5 s) and than the 10 s deadline the former budget was held for. */
const ATTACK_MS = 12_000;
const MIN_CREATES = 10;

let operator: Operator;
beforeAll(async () => {
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

function containerNames(pod: V1Pod): string[] {
  return (pod.spec?.containers ?? []).map((container) => container.name);
}

describe("clients that declare 3 MiB bodies and send nothing, on serve's webhook port", () => {
  test.for([4, 50])("%i of them, reconnecting when closed: every pod created through the API server meanwhile is admitted and decorated", async (count, { namespace, onTestFailed }) => {
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    await apply(decorationYaml(namespace, ["log-shipper=e2e.local/sidecar:1"]));
    await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
    const attack = await idleClients(operator.port, declaredSizes(count));
    const creates: { openIdle: number; ms: number; pod?: V1Pod; refused?: string }[] = [];
    try {
      const until = performance.now() + ATTACK_MS;
      // One after another, each as soon as the one before is admitted; a scheduling gate keeps
      // them off any node (only admission counts).
      for (let index = 0; performance.now() < until || creates.length < MIN_CREATES; index++) {
        const openIdle = attack.open();
        const started = performance.now();
        const body = { metadata: { name: `beside-idle-${index}`, labels: WEB }, spec: { schedulingGates: [{ name: "example.com/hold" }], containers: [{ name: "app", image: "e2e.local/app:1" }] } };
        const outcome = await clients().core.createNamespacedPod({ namespace, body }).then(
          (pod) => ({ pod }),
          (error: unknown) => ({ refused: error instanceof ApiException ? `${error.code}: ${String(error.body)}` : String(error) }),
        );
        creates.push({ openIdle, ms: performance.now() - started, ...outcome });
      }
    } finally {
      attack.stop();
    }
    const endings = attack.endings();
    console.log(`${count} idle clients: ${creates.length} pod creates, ${creates.filter((create) => create.refused !== undefined).length} refused; ` +
      `slowest ${Math.round(Math.max(...creates.map((create) => create.ms)))} ms; all ${count} idle connections open at ${creates.filter((create) => create.openIdle === count).length} creates, fewest ${Math.min(...creates.map((create) => create.openIdle))}; ` +
      `${attack.opened()} idle connections made, the server ended them with ${JSON.stringify(endings)}`);
    expect(creates.filter((create) => create.refused !== undefined).map((create) => create.refused)).toEqual([]);
    for (const create of creates) expect(containerNames(create.pod!)).toEqual(["log-shipper", "app"]);
    // The first creates went in beside every idle connection; they were held until the server
    // closed them at its arrival deadline, and reopened.
    expect(creates[0]!.openIdle).toBe(count);
    expect(Object.keys(endings)).toEqual(["HTTP/1.1 408 Request Timeout"]);
    expect(endings["HTTP/1.1 408 Request Timeout"]).toBeGreaterThanOrEqual(count);
  });
});
