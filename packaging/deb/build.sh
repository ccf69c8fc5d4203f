#!/bin/sh
# Builds a Debian package of floe from a compiled executable, with dpkg-deb (no debhelper).
#
#   packaging/deb/build.sh ARCH EXECUTABLE MANPAGE OUTDIR     (make deb runs it for amd64 and arm64)
#
# ARCH is Debian's name (amd64, arm64). The completions are printed by an executable that runs
# here: EXECUTABLE itself, or FLOE_HOST_BIN when EXECUTABLE is for another architecture.
# DEB_COMPRESSION (xz by default) and DEB_LEVEL go to dpkg-deb -Z and -z. Prints the package path.
set -eu

[ $# -eq 4 ] || { echo "usage: $0 ARCH EXECUTABLE MANPAGE OUTDIR" >&2; exit 2; }
arch=$1 bin=$2 man=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
host_bin=${FLOE_HOST_BIN:-$bin}
command -v dpkg-deb >/dev/null || { echo "$0: dpkg-deb is needed (apt-get install dpkg)" >&2; exit 1; }
for f in "$bin" "$man" "$host_bin"; do [ -f "$f" ] || { echo "$0: $f is missing (make build man)" >&2; exit 1; }; done

version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$root/package.json")
maintainer="${FLOE_DEB_MAINTAINER:-floe maintainers <floe@maintainers.invalid>}"
# The changelog's date: the last commit's, so that two builds of one commit are alike.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/floe
doc=$pkg/usr/share/doc/floe
# Files written by redirection below get 0644, directories 0755.
umask 022
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/lib/systemd/system" "$pkg/etc/floe" "$pkg/usr/share/man/man1" \
  "$doc/examples" "$pkg/usr/share/bash-completion/completions" "$pkg/usr/share/zsh/vendor-completions" \
  "$pkg/usr/share/fish/vendor_completions.d" "$pkg/usr/share/lintian/overrides"

install -m 0755 "$bin" "$pkg/usr/bin/floe"
ln -s floe "$pkg/usr/bin/kuiper"
# The unit as make install writes it, with the package's paths and its system user instead of a
# dynamic one (so /var/lib/floe and /var/log/floe keep one owner across restarts).
sed -e 's|/usr/local/bin/floe|/usr/bin/floe|' \
    -e 's|^# floe as a service.*|# floe as a service (the Debian package: enabled and started by the administrator only).|' \
    -e 's|^# Hardened: a dynamic user,|# Hardened: the floe system user,|' \
    -e 's|^DynamicUser=yes$|User=floe\nGroup=floe|' \
  "$root/packaging/floe.service" > "$pkg/lib/systemd/system/floe.service"
install -m 0644 "$root/packaging/kuiper.yaml" "$pkg/etc/floe/kuiper.yaml"
gzip -9n < "$man" > "$pkg/usr/share/man/man1/floe.1.gz"
ln -s floe.1.gz "$pkg/usr/share/man/man1/kuiper.1.gz"
"$host_bin" completion bash > "$pkg/usr/share/bash-completion/completions/floe"
"$host_bin" completion zsh > "$pkg/usr/share/zsh/vendor-completions/_floe"
"$host_bin" completion fish > "$pkg/usr/share/fish/vendor_completions.d/floe.fish"
install -m 0644 "$root/rules/demo.sql" "$root/fixtures/demo.jsonl" "$doc/examples/"
install -m 0644 "$here/copyright" "$doc/copyright"
printf 'floe (%s) unstable; urgency=medium\n\n  * Built by make deb from the compiled executable.\n\n -- %s  %s\n' \
  "$version" "$maintainer" "$(LC_ALL=C date -u -R -d "@$epoch")" | gzip -9n > "$doc/changelog.gz"
install -m 0644 "$here/lintian-overrides" "$pkg/usr/share/lintian/overrides/floe"

install -m 0755 "$here/postinst" "$here/prerm" "$here/postrm" "$pkg/DEBIAN/"
echo /etc/floe/kuiper.yaml > "$pkg/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: floe
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: libc6 (>= 2.17), adduser, init-system-helpers (>= 1.52)
Section: net
Priority: optional
Description: edge stream processing speaking eKuiper's SQL, rules and REST API
 floe runs LF Edge eKuiper rules (its SQL dialect, stream options and rule
 JSON) from one executable: as a Unix filter over JSON lines (floe run) or as
 a daemon with eKuiper's REST API and CLI grammar (floe serve; kuiper is the
 same executable under eKuiper's CLI name).
 .
 The package installs the systemd unit floe.service but enables and starts
 nothing: run "systemctl enable --now floe" once /etc/floe/kuiper.yaml is as
 wanted. The service runs as the system user floe, created at installation,
 with its state in /var/lib/floe and its logs in /var/log/floe; purging the
 package deletes both.
CONTROL
(cd "$pkg" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$pkg/DEBIAN/md5sums"

mkdir -p "$out"
deb=$out/floe_${version}_$arch.deb
dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" ${DEB_LEVEL:+-z"$DEB_LEVEL"} --build "$pkg" "$deb" >/dev/null
echo "$deb"
