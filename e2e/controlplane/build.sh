#!/usr/bin/env bash
# Builds the control-plane binary once per machine and prints its path.
# The binary is cached outside the work tree, keyed by the module's content,
# so a clean clone reuses it and an edit to go.mod/go.sum/main.go rebuilds it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
key=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)
cache=${POD_DECORATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pod-decorator}/controlplane/$key
bin=$cache/controlplane

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

version=$(sed -n 's/^\s*k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/go.mod" | head -n1)
major=${version#v}; major=${major%%.*}
minor=${version#v*.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version"
ldflags+=" -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor"

echo "building the control plane (kube-apiserver, kube-controller-manager, kubectl $version, etcd) from Go modules" >&2
echo "a cold build takes 15-30 minutes on 2 cores; it happens once per machine, cached in $cache" >&2
start=$(date +%s)
(
  cd "$here"
  CGO_ENABLED=0 "$go" build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$bin.tmp" . &
  pid=$!
  trap 'kill $pid 2>/dev/null' EXIT
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null && echo "  still building... $(( $(date +%s) - start ))s" >&2
  done
  wait "$pid"
  trap - EXIT
)
mv "$bin.tmp" "$bin"
echo "built in $(( $(date +%s) - start ))s: $bin" >&2
echo "$bin"
