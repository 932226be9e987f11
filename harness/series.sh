#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Turn the repository into commits on the base in $TREE, one per
# series/NNNN-*.patch, and point refs/streamid/tip at the last one.
# Works on a private index only: the work tree in $TREE is not touched.
#
# A series/*.patch file is a mail header (From, Date, Subject), the commit
# message, a line "---", one "Adds: PATH" line per new file the patch adds
# (taken whole from the repository), then the hunks to upstream files and
# to new files of earlier patches.  A new file added by patch k and changed
# by later patches is added in the state those later hunks start from.
set -euo pipefail
. "$(dirname "$0")/common.sh"

patches=("$TOP"/series/[0-9]*.patch)
[ -e "${patches[0]}" ] || die "no patches in series/"
idx=$WORK/series.index
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$idx"' EXIT

header()	# header NAME FILE
{
	sed -n "/^\$/q; s/^$1: //p" "$2"
}

message()
{
	awk 'm && /^---$/ { exit } m { print } /^$/ { m = 1 }' "$1"
}

adds()
{
	awk '/^diff --git / { exit } a && sub(/^Adds: /, "") { print }
	     /^---$/ { a = 1 }' "$1"
}

hunks()
{
	sed -n '/^diff --git /,$p' "$1"
}

# The new files, as the repository holds them (the state after the last
# patch), walked back patch by patch to the state each was added in.
declare -A blob
for p in "${patches[@]}"; do
	while read -r f; do
		[ -f "$TOP/$f" ] || die "${p#"$TOP"/}: adds $f, which is missing"
		if tgit cat-file -e "base:$f" 2>/dev/null; then
			die "${p#"$TOP"/}: $f is an upstream file: keep hunks" \
				"for it, not a copy"
		fi
		mkdir -p "$tmp/new/$(dirname "$f")"
		cp -p "$TOP/$f" "$tmp/new/$f"
	done < <(adds "$p")
done
for ((i = ${#patches[@]} - 1; i >= 0; i--)); do
	p=${patches[i]}
	while read -r f; do
		blob[$i:$f]=$(tgit hash-object -w "$tmp/new/$f")
	done < <(adds "$p")
	hunks "$p" > "$tmp/hunks"
	inc=()
	while read -r f; do
		[ -e "$tmp/new/$f" ] && inc+=("--include=$f")
	done < <(sed -n 's|^+++ b/||p' "$tmp/hunks")
	[ ${#inc[@]} -eq 0 ] && continue
	(cd "$tmp/new" && git apply -R "${inc[@]}" "$tmp/hunks") ||
		die "${p#"$TOP"/}: its hunks to new files do not reverse-apply"
done

export GIT_INDEX_FILE=$idx
tgit read-tree base
parent=$(tgit rev-parse base)
for ((i = 0; i < ${#patches[@]}; i++)); do
	p=${patches[i]}
	hunks "$p" > "$tmp/hunks"
	if [ -s "$tmp/hunks" ] &&
	   ! tgit apply --cached "$tmp/hunks" 2> "$tmp/err"; then
		sed 's/^/  /' "$tmp/err" >&2
		die "${p#"$TOP"/} does not apply to the base" \
			"($BASE_PKG $(cat "$TREE/.git/streamid-base"))"
	fi
	while read -r f; do
		mode=100644
		[ -x "$TOP/$f" ] && mode=100755
		tgit update-index --add --cacheinfo "$mode,${blob[$i:$f]},$f"
	done < <(adds "$p")
	author=$(header From "$p")
	email=${author##*<}
	date=$(header Date "$p")
	{
		header Subject "$p"
		echo
		message "$p"
	} > "$tmp/msg"
	tree=$(tgit write-tree)
	parent=$(GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=${email%>} \
		GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
		tgit commit-tree "$tree" -p "$parent" -F "$tmp/msg")
done
tgit update-ref refs/streamid/tip "$parent"
echo "$parent"
