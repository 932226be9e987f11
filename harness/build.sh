#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the kernel in $TREE out of tree in $OBJ: tinyconfig plus the
# selftests' config fragment, with ccache.  Leaves build/bzImage and
# build/build-id (the GNU build id of the vmlinux the image holds) and
# build/kernel-id (a hash of what it was built from: the sources but
# Documentation/ and tools/, which the image does not hold, any edit not
# committed, the .config, which names the compiler, and the arguments;
# rebuilds of the same kernel share it).
# With --base, the pristine base instead, with the same configuration,
# for comparisons: its tree in $WORK/base, build/bzImage-base.  With
# --at COMMIT, that commit of the series (tree $WORK/steps, objects
# $WORK/obj-steps, build/bzImage-step).  With --debug, the series with
# harness/debug.config added (tree $WORK/debug, objects $WORK/obj-debug,
# build/bzImage-debug).
# STREAMID_CONFIG names another config fragment.  Further arguments go
# to make.
set -euo pipefail
. "$(dirname "$0")/common.sh"

frag=${STREAMID_CONFIG:-$TREE/$SELFTESTS/config}
[ -f "$frag" ] || die "$frag missing: run harness/tree.sh"
# worktree DIR COMMIT: a work tree of $TREE's repository at COMMIT.
worktree()
{
	if [ ! -e "$1/.git" ]; then
		tgit worktree prune
		tgit worktree add -q --detach "$1" "$2"
	fi
	git -C "$1" checkout -q -f --detach "$2"
}
suffix=
case ${1:-} in
--base)
	worktree "$WORK/base" base
	TREE=$WORK/base OBJ=$WORK/obj-base suffix=-base
	shift ;;
--at)
	worktree "$WORK/steps" "$2"
	TREE=$WORK/steps OBJ=$WORK/obj-steps suffix=-step
	shift 2 ;;
--debug)
	worktree "$WORK/debug" refs/streamid/tip
	TREE=$WORK/debug OBJ=$WORK/obj-debug suffix=-debug
	mkdir -p "$OBJ"
	cat "$frag" "$TOP/harness/debug.config" > "$OBJ/fragment-debug"
	frag=$OBJ/fragment-debug
	shift ;;
esac
mkdir -p "$OBJ" "$OUT"
export KBUILD_BUILD_USER=streamid KBUILD_BUILD_HOST=harness

# Regenerate .config only when the fragment changed.
if ! cmp -s "$frag" "$OBJ/.config.fragment"; then
	kmake "$TREE" "$OBJ" tinyconfig >/dev/null
	"$TREE/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" \
		"$frag" >/dev/null
	kmake "$TREE" "$OBJ" olddefconfig >/dev/null
	# merge_config only warns: an option the fragment asks for and
	# Kconfig dropped is an error here, unless this tree has no such
	# option (the base, or a patch before the one that adds it).
	while IFS= read -r line; do
		case $line in CONFIG_*=*) ;; *) continue ;; esac
		sym=${line%%=*}
		grep -qxF "$line" "$OBJ/.config" ||
			! git -C "$TREE" grep -qE "^(menu)?config ${sym#CONFIG_}\$" \
				-- '*Kconfig*' ||
			die "config fragment: '$line' not set in .config" \
				"(dependency missing?)"
	done < "$frag"
	cp "$frag" "$OBJ/.config.fragment"
fi

# Written last, so that an image whose build stopped short has none.
rm -f "$OUT/kernel-id$suffix"
kmake "$TREE" "$OBJ" "$@" bzImage
cp "$OBJ/arch/x86/boot/bzImage" "$OUT/bzImage$suffix"
readelf -n "$OBJ/vmlinux" |
	awk '/Build ID:/ { print $3 }' > "$OUT/build-id$suffix"
{
	git -C "$TREE" ls-tree HEAD |
		awk -F '\t' '$2 != "Documentation" && $2 != "tools"'
	git -C "$TREE" diff HEAD -- . ':!Documentation' ':!tools'
	cat "$OBJ/.config"
	echo "$*"
} | sha1sum | cut -c1-12 > "$OUT/kernel-id$suffix.new"
mv "$OUT/kernel-id$suffix.new" "$OUT/kernel-id$suffix"
