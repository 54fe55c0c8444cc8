// The images the real node runs in tests: the sandbox ("pause") image and small busybox images,
// one per name and tag, each with its own bytes (the reference is written into the image), so
// changing a container's image from one tag to another is a real image change with a new id.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Image, LayerEntry } from "../../image/oci-archive.ts";

export const PAUSE_IMAGE = "e2e.local/pause:1";

/** Names and tags of the test images: `e2e.local/<name>:<tag>`. */
export const TEST_IMAGE_NAMES = ["app", "sidecar", "logger", "proxy", "init"] as const;
export const TEST_IMAGE_TAGS = ["1", "2", "3"] as const;

export type TestImageName = (typeof TEST_IMAGE_NAMES)[number];
export type TestImageTag = (typeof TEST_IMAGE_TAGS)[number];

export function testImage(name: TestImageName, tag: TestImageTag = "1"): string {
  return `e2e.local/${name}:${tag}`;
}

/** busybox applets the tests use, as links to the one static binary. */
const APPLETS = ["sh", "sleep", "httpd", "wget", "nc", "cat", "echo", "ls", "date", "env", "grep", "mkdir", "touch", "printf", "kill", "ps", "true", "false", "id", "hostname", "ip", "test", "["];

/**
 * Every test image: a shared layer with busybox and the pause program, and a layer of its own
 * naming it. By default a container runs `pause` (waits, exits at once on SIGTERM); tests give a
 * `command` for anything else, such as `httpd` for a readiness probe.
 */
export async function testImages(paths: { busybox: string; pause: string }): Promise<Image[]> {
  const [busybox, pause] = await Promise.all([readFile(paths.busybox), readFile(paths.pause)]);
  const base: LayerEntry[] = [
    { path: "bin/busybox", content: busybox, mode: 0o755 },
    ...APPLETS.map((applet) => ({ path: `bin/${applet}`, symlink: "busybox" })),
    { path: "pause", content: pause, mode: 0o755 },
    { path: "tmp", directory: true as const, mode: 0o1777 },
    { path: "www/index.html", content: "ok\n" },
  ];
  const env = ["PATH=/bin"];
  const images: Image[] = [{ reference: PAUSE_IMAGE, layers: [[{ path: "pause", content: pause, mode: 0o755 }]], config: { entrypoint: ["/pause"], env } }];
  for (const name of TEST_IMAGE_NAMES) {
    for (const tag of TEST_IMAGE_TAGS) {
      const reference = testImage(name, tag);
      images.push({
        reference,
        layers: [base, [{ path: "etc/image-reference", content: `${reference}\n` }]],
        config: { entrypoint: ["/pause"], env, labels: { "e2e.pod-decorator.io/reference": reference } },
      });
    }
  }
  return images;
}

/** Where the Debian busybox-static package puts its binary, under an unpacked root. */
export function busyboxPath(debianRoot: string): string {
  return join(debianRoot, "bin", "busybox");
}
