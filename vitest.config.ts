import { defineConfig } from "vitest/config";

const clusterTests = {
  environment: "node",
  testTimeout: 120_000,
  hookTimeout: 180_000,
  // Files share cluster-wide objects (the webhook configurations, CRDs): one file at a time.
  fileParallelism: false,
} as const;

export default defineConfig({
  test: {
    // CI keeps the tail of the output: the last reporter lists every failure there.
    reporters: ["default", "./test/support/failure-summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        // The real control plane with a simulated kubelet.
        test: {
          name: "e2e",
          include: ["e2e/**/*.test.ts"],
          exclude: ["e2e/on-node/**"],
          globalSetup: ["e2e/support/global-setup.ts"],
          ...clusterTests,
        },
      },
      {
        // The real control plane with one real node: kubelet, containerd, runc, CNI, kube-proxy.
        // The rollout stories and the admission fault tests run here too, against the real kubelet
        // (e2e/support/kubelet.ts).
        test: {
          name: "node",
          include: ["e2e/on-node/**/*.test.ts", "e2e/collaset-rollout.test.ts", "e2e/reliability-*.test.ts", "e2e/admission-*.test.ts"],
          globalSetup: ["e2e/support/node-global-setup.ts"],
          ...clusterTests,
          testTimeout: 240_000,
        },
      },
    ],
  },
});
