#!/usr/bin/env bash
# Builds the binary of one of the e2e Go modules once per machine and prints its path.
# usage: cached-go-build.sh NAME MODULE_DIR LDFLAGS DESCRIPTION
# The binary is cached outside the work tree, keyed by the module's content, so a clean
# clone reuses it and an edit to go.mod/go.sum/main.go rebuilds it. Progress goes to stderr.
set -euo pipefail

name=$1 module=$2 ldflags=$3 description=$4
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
key=$(cat "$module/go.mod" "$module/go.sum" "$module/main.go" | sha256sum | cut -c1-16)
cache=${POD_DECORATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pod-decorator}/$name/$key
bin=$cache/$name

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

echo "building $description from Go modules; it happens once per machine, cached in $cache" >&2
start=$(date +%s)
(
  cd "$module"
  CGO_ENABLED=0 "$go" build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$bin.tmp" . &
  pid=$!
  trap 'kill $pid 2>/dev/null' EXIT
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null && echo "  still building $name... $(( $(date +%s) - start ))s" >&2
  done
  wait "$pid"
  trap - EXIT
)
mv "$bin.tmp" "$bin"
echo "built $name in $(( $(date +%s) - start ))s: $bin" >&2
echo "$bin"
