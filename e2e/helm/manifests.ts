// The plain manifests under config/ (kustomize layout) are the chart rendered with its default
// values, so there is one source for both: `make manifests` writes them, and the chart tests
// fail when the committed files differ from what it would write.
import { readdir, readFile, rm, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Document, parseAllDocuments } from "yaml";
import { crdFiles } from "../../src/cli/crds.ts";
import { renderChart, repositoryRoot } from "./helm.ts";

export const RELEASE = "pod-decorator";
export const NAMESPACE = "pod-decorator-system";

/** Labels that describe a Helm release; the plain manifests are applied without Helm. */
export const HELM_ONLY_LABELS = ["helm.sh/chart", "app.kubernetes.io/managed-by"] as const;

/** The folders `make manifests` owns entirely, and which kinds go into each. */
const FOLDERS: Record<string, readonly string[]> = {
  rbac: ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
  manager: ["Namespace", "Deployment", "PodDisruptionBudget", "NetworkPolicy"],
  webhook: ["Service", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"],
};
export const OWNED_FOLDERS = [...Object.keys(FOLDERS), "default"];

const HEADER = "Generated from charts/pod-decorator (default values) by `make manifests`; do not edit.";

function snake(text: string): string {
  return text.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/-/g, "_").toLowerCase();
}

function folderOf(kind: string): string {
  const folder = Object.entries(FOLDERS).find(([, kinds]) => kinds.includes(kind))?.[0];
  if (folder === undefined) throw new Error(`the chart renders a ${kind}, which no folder of config/ takes: add it to FOLDERS in e2e/helm/manifests.ts`);
  return folder;
}

/** e.g. ClusterRole pod-decorator-collaset → cluster_role_collaset.yaml */
function fileNameOf(kind: string, name: string): string {
  const suffix = name === RELEASE ? "" : `_${snake(name.replace(new RegExp(`^${RELEASE}-`), ""))}`;
  return `${snake(kind)}${suffix}.yaml`;
}

function kustomization(resources: readonly string[], comment: string): string {
  const document = new Document({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources: [...resources] });
  document.commentBefore = ` ${HEADER}\n ${comment.replaceAll("\n", "\n ")}`;
  return document.toString({ lineWidth: 0 });
}

/** Every file `make manifests` writes, by path relative to config/. */
export async function plainManifestFiles(): Promise<Map<string, string>> {
  const rendered = await renderChart({ release: RELEASE, namespace: NAMESPACE });
  const documents = parseAllDocuments(rendered).filter((document) => document.contents !== null);
  const namespace = new Document({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } });
  namespace.commentBefore = " Helm installs into a namespace it is given; applied by hand, it comes with the manifests.";
  documents.push(namespace as (typeof documents)[number]);

  const files = new Map<string, string>();
  for (const document of documents) {
    const kind = String(document.get("kind"));
    const name = String(document.getIn(["metadata", "name"]));
    for (const label of HELM_ONLY_LABELS) if (document.hasIn(["metadata", "labels", label])) document.deleteIn(["metadata", "labels", label]);
    // Helm's "# Source: <template>" line names a file that is not here; the template's own comments stay.
    const contents = document.contents as { commentBefore?: string | null } | null;
    if (contents?.commentBefore?.startsWith(" Source:") === true) contents.commentBefore = contents.commentBefore.split("\n").slice(1).join("\n") || null;
    document.directives.docStart = null;
    const path = `${folderOf(kind)}/${fileNameOf(kind, name)}`;
    if (files.has(path)) throw new Error(`two objects would be written to config/${path}`);
    files.set(path, `# ${HEADER}\n${document.toString({ lineWidth: 0, flowCollectionPadding: false })}`);
  }
  for (const folder of Object.keys(FOLDERS)) {
    const resources = [...files.keys()].filter((path) => path.startsWith(`${folder}/`)).map((path) => path.slice(folder.length + 1)).sort();
    files.set(`${folder}/kustomization.yaml`, kustomization(resources, `The ${folder} objects of the chart.`));
  }
  // config/crd holds the generated CRDs, which `kubectl apply -f config/crd/` applies as they are;
  // a kustomization.yaml there would be applied too, so this one uses kustomize's extensionless name.
  files.set("crd/Kustomization", kustomization(crdFiles().map((file) => file.fileName), "The CRDs `make crds` generates (kustomize reads this extensionless name; kubectl apply -f skips it)."));
  files.set("default/kustomization.yaml", kustomization(
    ["../crd", "../rbac", "../manager", "../webhook"],
    `Everything, into namespace ${NAMESPACE}: kubectl apply --server-side -k config/default\nFor another namespace or other settings, install the chart instead.`,
  ));
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The files under config/ that `make manifests` owns, as committed. */
export async function committedManifestFiles(): Promise<Map<string, string>> {
  const config = join(repositoryRoot, "config");
  const files = new Map<string, string>();
  for (const folder of OWNED_FOLDERS) {
    const names = await readdir(join(config, folder)).catch(() => [] as string[]);
    for (const name of names) files.set(`${folder}/${name}`, await readFile(join(config, folder, name), "utf8"));
  }
  const crdKustomization = await readFile(join(config, "crd", "Kustomization"), "utf8").catch(() => undefined);
  if (crdKustomization !== undefined) files.set("crd/Kustomization", crdKustomization);
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Rewrites the owned folders of config/ (stale files removed); returns the paths written. */
export async function writePlainManifests(): Promise<string[]> {
  const config = join(repositoryRoot, "config");
  const files = await plainManifestFiles();
  for (const folder of OWNED_FOLDERS) await rm(join(config, folder), { recursive: true, force: true });
  for (const [path, text] of files) {
    await mkdir(join(config, path, ".."), { recursive: true });
    await writeFile(join(config, path), text);
  }
  return [...files.keys()].map((path) => `config/${path}`);
}
