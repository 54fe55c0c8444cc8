// YAML the Kubernetes tools read back as written. kubectl parses YAML 1.1, where unquoted
// `yes`, `on` or `0755` are not strings; writing in 1.1 quotes them. No line folding, so
// output is stable and diffs stay readable.
import { stringify } from "yaml";

export function toYaml(value: unknown): string {
  return stringify(value, { version: "1.1", lineWidth: 0 });
}
