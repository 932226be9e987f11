#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The inverse of series.sh: take the commits base..HEAD of $TREE into the
# repository.  Each commit becomes series/NNNN-<subject>.patch (message
# and hunks to upstream files and to new files of earlier commits); the
# files the series adds are copied whole to their paths in the repository.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -z "$(tgit status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes: commit them first"
mapfile -t commits < <(tgit rev-list --reverse base..HEAD)
[ ${#commits[@]} -gt 0 ] || die "$TREE has no commits on the base"
if tgit diff --name-only --diff-filter=D base HEAD |
	grep -qvxFf <(tgit ls-tree -r --name-only base); then
	die "a file added by the series is removed again later in it"
fi

# A file the series adds that was changed here since the tree was last
# brought to the repository would be overwritten: refuse.
last=$(tgit rev-parse -q --verify refs/streamid/checkout || tgit rev-parse base)
while read -r f; do
	[ -f "$TOP/$f" ] || continue
	tgit show "HEAD:$f" | cmp -s - "$TOP/$f" && continue
	tgit show "$last:$f" 2>/dev/null | cmp -s - "$TOP/$f" ||
		die "$f was changed in the repository after the tree was made:" \
			"run 'make build' to take it into the tree first"
done < <(tgit diff --name-only --diff-filter=A base HEAD)

# What the series added so far: a file it no longer adds goes too.
mapfile -t before < <(sed -n 's/^Adds: //p' "$TOP"/series/[0-9]*.patch 2>/dev/null)
rm -f "$TOP"/series/[0-9]*.patch
n=0
for c in "${commits[@]}"; do
	n=$((n + 1))
	name=$(printf '%04d-%s.patch' "$n" "$(tgit log -1 --format=%f "$c")")
	mapfile -t added < <(tgit diff-tree -r --no-commit-id --name-only \
		--diff-filter=A "$c^" "$c")
	{
		tgit log -1 --format='From: %an <%ae>%nDate: %aD%nSubject: %s%n%n%b' "$c" |
			sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
		echo "---"
		for f in "${added[@]}"; do
			echo "Adds: $f"
		done
		tgit diff --no-renames "$c^" "$c" -- . \
			"${added[@]/#/:(exclude)}"
	} > "$TOP/series/$name"
	echo "series/$name"
done

# The files the series adds, whole, as HEAD has them.
while read -r mode _ _ f; do
	mkdir -p "$TOP/$(dirname "$f")"
	tgit show "HEAD:$f" > "$TOP/$f"
	if [ "$mode" = 100755 ]; then chmod +x "$TOP/$f"; else chmod -x "$TOP/$f"; fi
done < <(tgit diff --no-renames --diff-filter=A --raw base HEAD |
	awk '{ sub(/^:/, ""); print $2, $3, $4, $6 }')

for f in "${before[@]}"; do
	tgit cat-file -e "HEAD:$f" 2>/dev/null || rm -f "$TOP/$f"
done

# The repository now holds HEAD: the next tree.sh may move on from it.
tgit update-ref refs/streamid/checkout HEAD
