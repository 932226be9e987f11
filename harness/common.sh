# SPDX-License-Identifier: GPL-2.0
# Sourced by the harness scripts: paths and small helpers.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Everything big lives outside the clone: the base tree (a git repository
# whose first commit is the pristine base), the kernel objects and ccache.
WORK=${STREAMID_WORK:-/var/tmp/streamid}
TREE=$WORK/linux
OBJ=$WORK/obj
OUT=$TOP/build
SELFTESTS=tools/testing/selftests/streamid
export CCACHE_DIR=${CCACHE_DIR:-$WORK/ccache}
# Paths relative to $WORK, so that trees in other work dirs share the cache.
export CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=true

# The pinned base: package name and version (series/base).
read -r BASE_PKG BASE_VERSION < "$TOP/series/base"

die()
{
	echo "${0##*/}: $*" >&2
	exit 1
}

warn()
{
	echo "${0##*/}: warning: $*" >&2
}

# git in the base tree, with a fixed identity and hash length so that
# regenerated commits and patches are identical from run to run.
tgit()
{
	git -C "$TREE" -c user.name="Write Stream ID Developers" \
		-c user.email=streamid@kernel.invalid -c core.abbrev=12 "$@"
}

# kmake TREE OBJ ARGS...: make in the kernel tree TREE, out of tree in
# OBJ, with ccache, on every core.
kmake()
{
	local tree=$1 obj=$2

	shift 2
	make -s -C "$tree" O="$obj" CC="ccache gcc" -j"$(nproc)" "$@"
}
