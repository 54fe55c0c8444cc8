#!/usr/bin/env bash
# Builds one of the e2e Go modules once per machine and prints where the result is.
# usage: cached-go-build.sh NAME MODULE_DIR LDFLAGS DESCRIPTION [PACKAGE...]
#   no PACKAGE: the module's main package becomes the binary NAME; its path is printed.
#   PACKAGEs:   each becomes a binary in the directory NAME; the directory is printed.
# GO_BUILD_TAGS adds build tags. GO_MODFILE builds with that go.mod (and the go.sum beside it)
# instead of the module's own (-modfile); GO_CACHE_LABEL starts the cache key (a version, say).
# The result is cached outside the work tree, keyed by the module's content and these
# arguments, so a clean clone reuses it, an edit rebuilds it, and versions live side by side.
# Progress goes to stderr.
set -euo pipefail

name=$1 module=$2 ldflags=$3 description=$4
shift 4
packages=("$@")
tags=${GO_BUILD_TAGS:-}
modfile=${GO_MODFILE:-}
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
key=$(
  cd "$module"
  if [ -n "$modfile" ]; then cat "$modfile" "${modfile%.mod}.sum"; else cat go.mod go.sum; fi
  cat $(find . -name '*.go' | LC_ALL=C sort)
  [ -z "$tags${packages[*]}" ] || echo "$tags|${packages[*]}"
) && key=${GO_CACHE_LABEL:+$GO_CACHE_LABEL-}$(sha256sum <<<"$key" | cut -c1-16)
cache=${POD_DECORATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pod-decorator}/$name/$key
result=$cache/$name

if [ -e "$result" ]; then
  echo "$result"
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -e "$result" ]; then
  echo "$result"
  exit 0
fi

echo "building $description from Go modules; it happens once per machine, cached in $cache" >&2
start=$(date +%s)
rm -rf "$result.tmp"
if [ ${#packages[@]} -eq 0 ]; then
  output=$result.tmp targets=(.)
else
  mkdir -p "$result.tmp"
  output=$result.tmp/ targets=("${packages[@]}")
fi
(
  cd "$module"
  CGO_ENABLED=0 "$go" build ${modfile:+-modfile="$modfile"} -trimpath -buildvcs=false -tags "$tags" -ldflags "$ldflags" -o "$output" "${targets[@]}" &
  pid=$!
  trap 'kill $pid 2>/dev/null' EXIT
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null && echo "  still building $name... $(( $(date +%s) - start ))s" >&2
  done
  wait "$pid"
  trap - EXIT
)
mv "$result.tmp" "$result"
echo "built $name in $(( $(date +%s) - start ))s: $result" >&2
echo "$result"
