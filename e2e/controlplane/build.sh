#!/usr/bin/env bash
# Builds the control-plane binary (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy, kubectl) of one Kubernetes minor once per machine and
# prints its path; see ../cached-go-build.sh.
#   KUBERNETES_VERSION=1.30   a minor with a folder versions/<minor>/ (its go.mod, go.sum and,
#                             optionally, a file `tags` of build tags); default: the newest.
#   build.sh --versions       prints the minors there are, oldest first, and exits.
# Each minor is cached on its own (its go.mod is part of the key, its version starts it), so
# switching between them costs nothing once both are built.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
minors=$(cd "$here/versions" && ls -d [0-9]*.[0-9]* | sort -V)
if [ "${1:-}" = --versions ]; then
  echo "$minors"
  exit 0
fi
minor=${KUBERNETES_VERSION:-$(tail -n1 <<<"$minors")}
minor=${minor#v}
if [ ! -f "$here/versions/$minor/go.mod" ]; then
  echo "KUBERNETES_VERSION=$minor: there is no such control-plane build; the minors are: $(echo $minors)" >&2
  exit 2
fi
modfile=versions/$minor/go.mod
version=$(sed -n 's/^\s*k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/$modfile" | head -n1)
major=${version#v}; major=${major%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version"
ldflags+=" -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=${minor#*.}"
tags=""
[ ! -f "$here/versions/$minor/tags" ] || tags=$(tr '\n' ' ' <"$here/versions/$minor/tags")
GO_MODFILE=$modfile GO_BUILD_TAGS=${tags% } GO_CACHE_LABEL=$version exec "$here/../cached-go-build.sh" controlplane "$here" "$ldflags" \
  "the control plane (kube-apiserver, kube-controller-manager, kubectl $version, etcd; a cold build takes 15-30 minutes on 2 cores)"
