// A one-node cluster: the control plane started for a node (with kube-scheduler) and one real
// node with the test images and, when it has been built, the project's image (`make image`).
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeOciArchive } from "../../image/oci-archive.ts";
import { startControlPlane, stopControlPlane, type ControlPlane } from "../controlplane/controlplane.ts";
import { nodeLeftovers, nodeParts, startNode, stopNode, type RealNode } from "./node.ts";
import { busyboxPath, testImages } from "./test-images.ts";

const TEST_IMAGES_ARCHIVE = "test-images.oci.tar";

/** Where `make image` writes the project's image. */
export const PROJECT_IMAGE_ARCHIVE = fileURLToPath(new URL("../../build/image/pod-decorator.oci.tar", import.meta.url));

export interface Cluster {
  plane: ControlPlane;
  node: RealNode;
  /** Whether the project's image was loaded (it is when `make image` has built it). */
  projectImage: boolean;
}

export interface StartClusterOptions {
  crds?: readonly string[];
  /** Fail when the project's image has not been built, instead of starting without it. */
  requireProjectImage?: boolean;
  ownerPid?: number;
  log?: (line: string) => void;
}

export async function startCluster(dirArgument: string, options: StartClusterOptions = {}): Promise<Cluster> {
  const dir = resolve(dirArgument);
  const log = options.log ?? (() => {});
  const projectImage = existsSync(PROJECT_IMAGE_ARCHIVE);
  if (options.requireProjectImage === true && !projectImage) throw new Error(`${PROJECT_IMAGE_ARCHIVE} is missing: run make image`);
  const parts = nodeParts();
  const plane = await startControlPlane(dir, {
    forNode: true,
    log,
    ...(options.crds === undefined ? {} : { crds: options.crds }),
    ...(options.ownerPid === undefined ? {} : { ownerPid: options.ownerPid }),
  });
  try {
    const testArchive = join(dir, TEST_IMAGES_ARCHIVE);
    await writeOciArchive(testArchive, await testImages({ busybox: busyboxPath(parts.debian), pause: join(parts.bin, "pause") }));
    const images = [testArchive, ...(projectImage ? [PROJECT_IMAGE_ARCHIVE] : [])];
    const node = await startNode(dir, { plane, images, ...(options.ownerPid === undefined ? {} : { ownerPid: options.ownerPid }), log });
    if (!projectImage) log(`the project's image is not loaded (${PROJECT_IMAGE_ARCHIVE} is missing: make image builds it)`);
    return { plane, node, projectImage };
  } catch (error) {
    await stopControlPlane(dir);
    throw error;
  }
}

export async function stopCluster(dirArgument: string): Promise<void> {
  await stopNode(dirArgument);
  await stopControlPlane(dirArgument);
  await rm(join(resolve(dirArgument), TEST_IMAGES_ARCHIVE), { force: true });
}

/** What a cluster started in DIR left behind (see nodeLeftovers); empty after stopCluster. */
export function clusterLeftovers(dirArgument: string): string[] {
  return nodeLeftovers(dirArgument);
}
