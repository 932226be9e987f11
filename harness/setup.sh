#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the harness needs, and the pinned kernel
# source; or, given a package list (harness/suites-packages), only the
# packages of that list.  Idempotent and quiet when everything is there
# already.
set -euo pipefail
. "$(dirname "$0")/common.sh"

installed_version()
{
	dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "installed" { print $2 }' || true
}

list=${1:-$TOP/harness/packages}
mapfile -t pkgs < <(grep -v '^#' "$list")
missing=()
for p in "${pkgs[@]}"; do
	[ -n "$(installed_version "$p")" ] || missing+=("$p")
done
have=$(installed_version "$BASE_PKG")
# A list of its own: the kernel source is not needed.
[ $# -eq 0 ] || have=$BASE_VERSION

[ ${#missing[@]} -eq 0 ] && [ "$have" = "$BASE_VERSION" ] && exit 0

[ "$(id -u)" = 0 ] || die "need root to install: ${missing[*]} $BASE_PKG"
export DEBIAN_FRONTEND=noninteractive
apt_get()
{
	apt-get -y -q -o Dpkg::Use-Pty=0 --no-install-recommends "$@"
}

echo "setup: installing ${missing[*]} $BASE_PKG=$BASE_VERSION" >&2
apt-get -q update >/dev/null
[ ${#missing[@]} -eq 0 ] || apt_get install "${missing[@]}" >/dev/null

if [ "$have" != "$BASE_VERSION" ]; then
	if ! apt_get install --allow-downgrades "$BASE_PKG=$BASE_VERSION" \
			>/dev/null 2>&1; then
		[ -n "$have" ] || apt_get install "$BASE_PKG" >/dev/null
		warn "$BASE_PKG $BASE_VERSION (series/base) cannot be installed;" \
			"using $(installed_version "$BASE_PKG") instead"
	fi
fi
