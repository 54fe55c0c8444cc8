#!/usr/bin/env bash
# Builds the Helm binary the chart tests use, once per machine, and prints its path; see
# ../cached-go-build.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's/^\s*require helm.sh\/helm\/v4 \(v[0-9.]*\)$/\1/p; s/^\s*helm.sh\/helm\/v4 \(v[0-9.]*\)$/\1/p' "$here/go.mod" | head -n1)
exec "$here/../cached-go-build.sh" helm "$here" "-s -w -X helm.sh/helm/v4/internal/version.version=$version" \
  "helm $version (a few minutes on 2 cores)"
