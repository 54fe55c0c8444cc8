// TemplateValid's sample pod: the template is judged by the API server (a server-side dry run),
// in the first matched pod or, when none matches yet, in a minimal pod that provides the volumes
// the template expects pods to provide; a render the engine already knows would be refused is
// reported without asking.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../../src/api/pod.ts";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { validateTemplate } from "../../../src/controller/poddecoration/template-validation.ts";
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
