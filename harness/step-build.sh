#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the series as it stands after patch N (1 = the first), so that a
# bisection never meets a tree that does not build, and compile the C
# files that patch changes with W=1 and sparse (C=2): a warning on a line
# the patch adds fails.  Works in $WORK/steps and $WORK/obj-steps, apart
# from the main build.  Usage: step-build.sh N
set -euo pipefail
. "$(dirname "$0")/common.sh"

n=$1
steps=$WORK/steps obj=$WORK/obj-steps
commit=$(tgit rev-list --reverse base..refs/streamid/tip | sed -n "${n}p")
[ -n "$commit" ] || die "the series has no patch $n"
tgit log -1 --format='patch %h %s' "$commit"

# A patch that changes no file the kernel is built from (documentation,
# tools, selftests) leaves the kernel of the patch before it; its tools
# must build, without warnings.
if tgit diff --quiet "$commit^" "$commit" -- . ':!Documentation/' \
	':!tools/' ':!MAINTAINERS'; then
	echo "the kernel is that of the patch before"
	if ! tgit diff --quiet "$commit^" "$commit" -- tools/streamid/; then
		rm -rf "$WORK/steps-tools"
		mkdir -p "$WORK/steps-tools/out"
		tgit archive "$commit" tools/streamid |
			tar -C "$WORK/steps-tools" -xf -
		make -C "$WORK/steps-tools/tools/streamid" \
			OUTPUT="$WORK/steps-tools/out/" CFLAGS="-O2 -Werror"
	fi
	exit 0
fi

# xfs and btrfs make up most of the test kernel, and every early patch
# changes headers they include: they are left out of the steps that do
# not touch them, which the full build of the series covers.
frag=$WORK/steps.config
cp "$TREE/$SELFTESTS/config" "$frag"
for fs in xfs:XFS btrfs:BTRFS; do
	tgit diff --quiet "$commit^" "$commit" -- "fs/${fs%:*}/" &&
		sed -i "/^CONFIG_${fs#*:}_FS=y\$/d" "$frag"
done
STREAMID_CONFIG=$frag "$TOP/harness/build.sh" --at "$commit"

# The C files of the kernel the patch changes that this configuration
# builds; their W=1 and sparse warnings, on the lines the patch adds.
mapfile -t objs < <(git -C "$steps" diff --name-only --diff-filter=AM \
	"$commit^" "$commit" -- '*.c' ':!tools/' ':!Documentation/' |
	while read -r c; do
		[ -f "$obj/${c%.c}.o" ] && echo "${c%.c}.o"
	done)
[ ${#objs[@]} -gt 0 ] || { echo "no C file of the kernel built"; exit 0; }
echo "W=1 C=2: ${objs[*]}"
kmake "$steps" "$obj" W=1 C=2 "${objs[@]}" > "$obj/warnings" 2>&1 || true
git -C "$steps" diff -U0 "$commit^" "$commit" |
python3 -c '
import re, sys
added, f = set(), None
for line in sys.stdin:
    m = re.match(r"\+\+\+ b/(.*)", line)
    if m:
        f = m.group(1)
    m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
    if m and f:
        start, count = int(m.group(1)), int(m.group(2) or 1)
        added.update((f, i) for i in range(start, start + count))
bad = 0
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(\S+?):(\d+):(?:\d+:)? (?:warning|error)", line)
    if not m:
        continue
    path = m.group(1)
    for root in (sys.argv[2] + "/", "../"):
        while path.startswith(root):
            path = path[len(root):]
    if (path, int(m.group(2))) in added:
        print(line.rstrip())
        bad += 1
print("%d warning(s) on lines the patch adds" % bad)
sys.exit(1 if bad else 0)
' "$obj/warnings" "$steps"
