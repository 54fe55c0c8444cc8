#!/usr/bin/env bash
# Builds Prometheus's promtool (the alert rules' checker and unit-test runner) from Go modules,
# once per machine, and prints its path; see ../cached-go-build.sh. go.mod names it as a tool.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's/^\s*github.com\/prometheus\/prometheus \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -n1)
dir=$("$here/../cached-go-build.sh" promtool "$here" "-s -w -X github.com/prometheus/common/version.Version=$version" \
  "promtool $version (a few minutes on 2 cores)" github.com/prometheus/prometheus/cmd/promtool)
echo "$dir/promtool"
