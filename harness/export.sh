#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write the upstream-ready series to build/series/: a cover letter (from
# series/cover-letter: subject line, blank line, text) with shortlog and
# diffstat, and one patch per commit, as git format-patch writes them.
set -euo pipefail
. "$(dirname "$0")/common.sh"

tip=$("$TOP/harness/series.sh")
rm -rf "$OUT/series"
tgit format-patch -q --cover-letter --no-signature -o "$OUT/series" \
	"base..$tip"
cover=("$OUT"/series/0000-*.patch)
subject=$(head -n 1 "$TOP/series/cover-letter")
tail -n +3 "$TOP/series/cover-letter" > "$OUT/series/.blurb"
sed -i -e "s|\*\*\* SUBJECT HERE \*\*\*|$subject|" \
	-e "/\*\*\* BLURB HERE \*\*\*/{r $OUT/series/.blurb
d}" "${cover[0]}"
rm "$OUT/series/.blurb"
ls "$OUT"/series/*.patch
