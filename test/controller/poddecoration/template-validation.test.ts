// TemplateValid's sample pod: the template is judged by the API server (a server-side dry run),
// in the first matched pod or, when none matches yet, in a minimal pod that provides the volumes
// the template expects pods to provide; a render the engine already knows would be refused is
// reported without asking.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../../src/api/pod.ts";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { droppedFields, validateTemplate } from "../../../src/controller/poddecoration/template-validation.ts";
import { liveRevision } from "../../../src/decoration/decorate.ts";

const decoration: PodDecoration = {
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "certs", namespace: "shop" },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: { containers: [{ name: "proxy", image: "envoy:1", volumeMounts: [{ name: "tls", mountPath: "/etc/tls" }], volumeDevices: [{ name: "disk", devicePath: "/dev/disk" }] }] },
  },
};

function recordingDryRun() {
  const sent: Pod[] = [];
  return { sent, dryRun: (pod: Pod) => (sent.push(pod), Promise.resolve({ valid: true as const })) };
}

describe("validateTemplate", () => {
  it("gives a minimal sample the volumes the template expects pods to provide", async () => {
    const { sent, dryRun } = recordingDryRun();
    expect(await validateTemplate(decoration, liveRevision(decoration), undefined, dryRun)).toEqual({ valid: true });
    expect(sent[0]?.spec?.volumes).toEqual([{ name: "disk", persistentVolumeClaim: { claimName: "disk" } }, { name: "tls", emptyDir: {} }]);
  });

  it("reports, without a dry run, a matched pod the decoration cannot be rendered into", async () => {
    const { sent, dryRun } = recordingDryRun();
    const matched = { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "web:1" }] } };
    const verdict = await validateTemplate(decoration, liveRevision(decoration), matched, dryRun);
    expect(verdict).toEqual({ valid: false, message: expect.stringMatching(/^PodDecoration shop\/certs: rendering revision \S+ into this pod would make a pod the API server refuses: .*volume "tls"/) as unknown });
    expect(sent).toEqual([]);
  });
});

describe("validateTemplate: what the API server drops", () => {
  const sidecar: PodDecoration = {
    ...decoration,
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: { initContainers: [{ name: "proxy", image: "envoy:1", restartPolicy: "Always", resizePolicy: [{ resourceName: "cpu", restartPolicy: "NotRequired" }] }] },
    },
  };

  it("reports the fields the stored pod lacks (a feature gate off, an older version), by container name", async () => {
    const dryRun = (pod: Pod) => {
      const stored = structuredClone(pod);
      // What a 1.30 API server does: InPlacePodVerticalScaling is off, resizePolicy is dropped; defaults are added.
      for (const container of stored.spec?.initContainers ?? []) {
        delete (container as { resizePolicy?: unknown }).resizePolicy;
        Object.assign(container, { imagePullPolicy: "IfNotPresent", terminationMessagePath: "/dev/termination-log" });
      }
      return Promise.resolve({ valid: true as const, stored });
    };
    expect(await validateTemplate(sidecar, liveRevision(sidecar), undefined, dryRun)).toEqual({ valid: true, dropped: ["spec.initContainers[name=proxy].resizePolicy"] });
  });

  it("finds nothing dropped when the API server only adds defaults and rewrites values", async () => {
    const dryRun = (pod: Pod) => {
      const stored = structuredClone(pod) as Pod & { spec: { initContainers: Record<string, unknown>[] } };
      stored.spec.initContainers[0]!.resources = { requests: { cpu: "500m" } };
      stored.spec.initContainers[0]!.stdin = undefined;
      return Promise.resolve({ valid: true as const, stored });
    };
    const withZeroes: PodDecoration = { ...sidecar, spec: { ...sidecar.spec, template: { initContainers: [{ name: "proxy", image: "envoy:1", restartPolicy: "Always", stdin: false, args: [], resources: { requests: { cpu: "0.5" } } }] } } };
    expect(await validateTemplate(withZeroes, liveRevision(withZeroes), undefined, dryRun)).toEqual({ valid: true });
  });
});

describe("droppedFields", () => {
  it("compares named lists by name and other lists by position", () => {
    const sent = { containers: [{ name: "a", ports: [{ containerPort: 80 }, { containerPort: 81, name: "x" }] }, { name: "b", restartPolicyRules: [{ action: "Restart" }] }] };
    const stored = { containers: [{ name: "b" }, { name: "a", ports: [{ containerPort: 80, protocol: "TCP" }, { containerPort: 81, protocol: "TCP" }] }] };
    expect(droppedFields(sent, stored, "spec")).toEqual(["spec.containers[name=a].ports[1].name", "spec.containers[name=b].restartPolicyRules"]);
  });

  it("reports a whole container or volume the stored pod lacks", () => {
    expect(droppedFields({ volumes: [{ name: "img", image: { reference: "x" } }] }, { volumes: [] }, "spec")).toEqual(["spec.volumes[name=img]"]);
  });
});
