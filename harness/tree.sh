#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bring the work tree $TREE to the series as the repository holds it.
# Only files that differ are rewritten, so the next build is incremental.
# Refuses to drop work done in $TREE that "make refresh" has not taken
# into the repository.
set -euo pipefail
. "$(dirname "$0")/common.sh"

"$TOP/harness/base.sh"
tip=$("$TOP/harness/series.sh")
head=$(tgit rev-parse HEAD)
# What this script last checked out; the base on first use.
last=$(tgit rev-parse -q --verify refs/streamid/checkout || tgit rev-parse base)
# CI has a tree of its own, where nobody works: whatever an earlier run
# left there goes.
if [ -n "${STREAMID_FORCE:-}" ]; then
	tgit checkout -q -f --detach HEAD
	tgit clean -q -f -d -x
	tgit update-ref refs/streamid/checkout HEAD
fi
# checkpatch leaves a cache file behind: that is not work.
changes=$(tgit status --porcelain --ignored | grep -v ' \.checkpatch-camelcase\.' || true)
if [ -n "$changes" ]; then
	head -n 20 <<< "$changes" >&2
	die "$TREE has changes that are not committed: commit them and run" \
		"'make refresh', or remove them"
fi
if [ "$head" != "$last" ] &&
   [ "$(tgit rev-parse "$head^{tree}")" != "$(tgit rev-parse "$tip^{tree}")" ]
then
	die "$TREE has commits the repository does not hold" \
		"(HEAD $head): run 'make refresh' to take them into the" \
		"repository, or 'git -C $TREE checkout --detach $last' to drop them"
fi
tgit checkout -q --detach "$tip"
tgit update-ref refs/streamid/checkout "$tip"
