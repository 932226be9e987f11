#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make $TREE a git repository whose commit tagged "base" is the pristine
# kernel source of the installed linux-source package.  Done once per
# base version; the tree is then reused.
set -euo pipefail
. "$(dirname "$0")/common.sh"

version=$(dpkg-query -W -f='${Version}' "$BASE_PKG")
tarball=/usr/src/$BASE_PKG.tar.xz
[ -f "$tarball" ] || die "$tarball missing: run harness/setup.sh"
[ "$version" = "$BASE_VERSION" ] ||
	warn "base is $BASE_PKG $version, the series is tested on $BASE_VERSION"

if [ "$(cat "$TREE/.git/streamid-base" 2>/dev/null)" = "$version" ] &&
   tgit rev-parse -q --verify base >/dev/null; then
	exit 0
fi

echo "base: unpacking $BASE_PKG $version into $TREE" >&2
rm -rf "$TREE" "$OBJ"
mkdir -p "$TREE"
tar -C "$TREE" --strip-components=1 -xf "$tarball"
tgit init -q
# Debian's .gitignore ignores the whole top level: force.
tgit add -f -A .
sublevel=$(make -s -C "$TREE" kernelversion)
GIT_AUTHOR_DATE="2000-01-01 00:00 +0000" \
	GIT_COMMITTER_DATE="2000-01-01 00:00 +0000" \
	tgit commit -q -m "Linux $sublevel ($BASE_PKG $version)"
tgit tag -f base >/dev/null
echo "$version" > "$TREE/.git/streamid-base"
