// Everything a controller process talks to the API server with, made once from a KubeConfig
// and passed in (no module-level clients).
import type { KubeConfig } from "@kubernetes/client-node";
import { admissionClient, type AdmissionClient } from "./admission.ts";
import { appsClient, type AppsClient } from "./apps.ts";
import { coordinationClient, type CoordinationClient } from "./coordination.ts";
import { coreClient, type CoreClient } from "./core.ts";
import { kusionClient, type KusionClient } from "./custom-objects.ts";
import type { KubeObject } from "./objects.ts";
import { RestTransport } from "./rest-transport.ts";

export interface KubeClient<PodDecoration extends KubeObject = KubeObject, CollaSet extends KubeObject = KubeObject> {
  config: KubeConfig;
  core: CoreClient;
  apps: AppsClient;
  admission: AdmissionClient;
  coordination: CoordinationClient;
  kusion: KusionClient<PodDecoration, CollaSet>;
  /** Raw JSON list and watch, for informers. */
  rest: RestTransport;
}

export function createKubeClient<PodDecoration extends KubeObject = KubeObject, CollaSet extends KubeObject = KubeObject>(
  config: KubeConfig,
): KubeClient<PodDecoration, CollaSet> {
  return {
    config,
    core: coreClient(config),
    apps: appsClient(config),
    admission: admissionClient(config),
    coordination: coordinationClient(config),
    kusion: kusionClient<PodDecoration, CollaSet>(config),
    rest: new RestTransport(config),
  };
}
