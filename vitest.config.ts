import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        test: {
          name: "e2e",
          include: ["e2e/**/*.test.ts"],
          environment: "node",
          globalSetup: ["e2e/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Files share cluster-wide objects (the webhook configurations, CRDs): one file at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
