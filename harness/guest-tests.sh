#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run in the guest by harness/check.sh: every selftest program in DIR,
# then the kselftest runner on the series' tree, each framed by
# "# selftest: NAME" and "# exit: STATUS" for check.sh to read.
# Usage: guest-tests.sh DIR TREE
set -uo pipefail
dir=$1 tree=$2

for t in "$dir"/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	echo "# selftest: ${t##*/}"
	"$t" 2>&1
	echo "# exit: $?"
done

# "make run_tests" as a kselftest user runs it.  The tree is read-only
# here, so it builds in /tmp.  Its own TAP is nested under "# ".
echo "# selftest: kselftest"
echo "1..1"
out=$(make -C "$tree/tools/testing/selftests" TARGETS=streamid \
	O=/tmp/kselftest run_tests 2>&1)
rc=$?
sed 's/^/# /' <<< "$out"
if [ $rc -eq 0 ] && grep -q '^ok 1 selftests: streamid: harness_test' <<< "$out" &&
   ! grep -q '^not ok' <<< "$out"; then
	echo "ok 1 make -C tools/testing/selftests TARGETS=streamid run_tests"
else
	echo "not ok 1 make -C tools/testing/selftests TARGETS=streamid run_tests"
fi
echo "# exit: 0"
