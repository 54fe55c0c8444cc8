#!/usr/bin/env bash
# Builds the control-plane binary (etcd, kube-apiserver, kube-controller-manager, kubectl)
# once per machine and prints its path; see ../cached-go-build.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's/^\s*k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/go.mod" | head -n1)
major=${version#v}; major=${major%%.*}
minor=${version#v*.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version"
ldflags+=" -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor"
exec "$here/../cached-go-build.sh" controlplane "$here" "$ldflags" \
  "the control plane (kube-apiserver, kube-controller-manager, kubectl $version, etcd; a cold build takes 15-30 minutes on 2 cores)"
