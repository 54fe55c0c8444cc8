#!/usr/bin/env bash
# Builds the Helm binary the chart tests use, once per machine, and prints its path.
# Like e2e/controlplane/build.sh: cached outside the work tree, keyed by the module's
# content, so a clean clone reuses it and an edit to go.mod/go.sum/main.go rebuilds it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
key=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)
cache=${POD_DECORATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pod-decorator}/helm/$key
bin=$cache/helm

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

version=$(sed -n 's/^\s*require helm.sh\/helm\/v4 \(v[0-9.]*\)$/\1/p; s/^\s*helm.sh\/helm\/v4 \(v[0-9.]*\)$/\1/p' "$here/go.mod" | head -n1)
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$version"

echo "building helm $version from Go modules (a few minutes on 2 cores, once per machine; cached in $cache)" >&2
start=$(date +%s)
(
  cd "$here"
  CGO_ENABLED=0 "$go" build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$bin.tmp" . &
  pid=$!
  trap 'kill $pid 2>/dev/null' EXIT
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null && echo "  still building helm... $(( $(date +%s) - start ))s" >&2
  done
  wait "$pid"
  trap - EXIT
)
mv "$bin.tmp" "$bin"
echo "built helm in $(( $(date +%s) - start ))s: $bin" >&2
echo "$bin"
