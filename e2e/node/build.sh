#!/usr/bin/env bash
# Builds the node's Go parts once per machine and prints the directory that holds them:
# containerd, containerd-shim-runc-v2, ctr, the CNI plugins bridge, host-local and loopback,
# and the pause program of the sandbox and test images; see ../cached-go-build.sh.
# kubelet, kube-scheduler and kube-proxy are in the control-plane binary.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
containerd=$(sed -n 's/^\s*github.com\/containerd\/containerd\/v2 \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -n1)
plugins=$(sed -n 's/^\s*github.com\/containernetworking\/plugins \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -n1)
export GO_BUILD_TAGS="no_btrfs no_devmapper no_zfs"
exec "$here/../cached-go-build.sh" node "$here" \
  "-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd" \
  "containerd $containerd and the CNI plugins $plugins (2-4 minutes on 2 cores)" \
  github.com/containerd/containerd/v2/cmd/containerd \
  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr \
  github.com/containernetworking/plugins/plugins/main/bridge \
  github.com/containernetworking/plugins/plugins/main/loopback \
  github.com/containernetworking/plugins/plugins/ipam/host-local \
  ./pause
