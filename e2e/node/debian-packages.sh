#!/usr/bin/env bash
# Unpacks the node's Debian parts once per machine, without installing anything on the system,
# and prints the directory they are unpacked into (a root with usr/, sbin/, ...):
#   runc               the OCI runtime containerd runs (Debian builds it with seccomp)
#   busybox-static     the shell and tools of the test images
#   iptables + libs    for kube-proxy, so pods reach the API server through its Service;
#                      alternatives/ links iptables, ip6tables and their -save/-restore to the
#                      nft backend, as Debian's update-alternatives would
# `apt-get download` needs the package lists; when they are missing it runs `apt-get update`.
set -euo pipefail

packages=(runc busybox-static iptables libip4tc2 libip6tc2 libxtables12 libnftnl11 libnetfilter-conntrack3 libnfnetlink0 libmnl0)
layout=2 # bump when what this script makes changes
key=$(printf '%s\n' "$layout" "${packages[@]}" | sha256sum | cut -c1-16)
cache=${POD_DECORATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pod-decorator}/debian/$key
root=$cache/root

if [ -d "$root" ]; then
  echo "$root"
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -d "$root" ]; then
  echo "$root"
  exit 0
fi

echo "downloading ${packages[*]} from Debian into $cache (once per machine)" >&2
start=$(date +%s)
rm -rf "$cache/debs" "$root.tmp"
mkdir -p "$cache/debs" "$root.tmp"
download() { (cd "$cache/debs" && apt-get download -q "${packages[@]}") >&2; }
if ! download; then
  echo "apt-get download failed; refreshing the package lists (apt-get update) and trying again" >&2
  apt-get update -q >&2
  download
fi
for deb in "$cache"/debs/*.deb; do
  dpkg-deb -x "$deb" "$root.tmp"
  dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >>"$root.tmp/VERSIONS"
done
rm -rf "$cache/debs"
mkdir -p "$root.tmp/alternatives"
for command in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -s ../usr/sbin/xtables-nft-multi "$root.tmp/alternatives/$command"
done
mv "$root.tmp" "$root"
echo "unpacked $(wc -l <"$root/VERSIONS") Debian packages in $(( $(date +%s) - start ))s: $root" >&2
echo "$root"
