#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run in the guest by harness/check.sh: every selftest program in DIR,
# then the kselftest runner on the series' tree, each framed by
# "# selftest: NAME" and "# exit: STATUS" for check.sh to read.
# Usage: guest-tests.sh DIR TREE [TOOLS]
# TOOLS: where tools/streamid was built; its hint2stream.so is tested.
set -uo pipefail
dir=$1 tree=$2 tools=${3:-}

for t in "$dir"/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	echo "# selftest: ${t##*/}"
	"$t" 2>&1
	echo "# exit: $?"
done

if [ -n "$tools" ]; then
	echo "# selftest: hint2stream"
	"$(dirname "$0")/../tools/streamid/hint2stream-test.sh" \
		"$tools/hint2stream.so" 2>&1
	echo "# exit: $?"
fi

# As a kselftest user runs it: installed with "make install", and run by
# the installed run_kselftest.sh; the programs ran above, so it runs just
# fadvise_test, with the timeout of the settings file.  The tree is
# read-only here, so it builds in /tmp.  Its own TAP is nested under "# ".
echo "# selftest: kselftest"
echo "1..1"
ks=/tmp/kselftest
out=$(make -C "$tree/tools/testing/selftests" TARGETS=streamid O=$ks \
	INSTALL_PATH=$ks/install install 2>&1 &&
	$ks/install/run_kselftest.sh -t streamid:fadvise_test 2>&1)
rc=$?
sed 's/^/# /' <<< "$out"
if [ $rc -eq 0 ] && grep -q '^ok 1 selftests: streamid: fadvise_test' <<< "$out" &&
   ! grep -q '^not ok' <<< "$out"; then
	echo "ok 1 kselftest: install, run_kselftest.sh -t streamid:fadvise_test"
else
	echo "not ok 1 kselftest: install, run_kselftest.sh -t streamid:fadvise_test"
fi
echo "# exit: 0"
