#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test suite ("make check"): host-side checks of the series and of
# its tools, tests of the VM runner, the selftests in a guest running the
# built kernel.
# Prints TAP; the last line is "N passed, N failed, N skipped".  Logs are
# kept in build/check/.
# With --debug ("make check-debug"), only the guest tests, on a kernel
# with KASAN, lockdep and DEBUG_ATOMIC_SLEEP (harness/debug.config),
# whose log must hold none of their reports.
# With --steps ("make check-steps"), a build of the series after each of
# its patches, with no new W=1 or sparse warning: from a cold cache that
# rebuilds the kernel for each of the patches that change headers.
set -euo pipefail
. "$(dirname "$0")/common.sh"

debug= steps=
case ${1:-} in
--debug) debug=-debug ;;
--steps) steps=-steps ;;
"") ;;
*) die "usage: check.sh [--debug | --steps]" ;;
esac

LOGS=$OUT/check$debug$steps
rm -rf "$LOGS"
mkdir -p "$LOGS"
n=0 passed=0 failed=0 skipped=0

finish()
{
	echo "1..$n"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

# tap ok|fail|skip DESCRIPTION [LOG]: one result; a failure shows the
# end of its log as diagnostics.
tap()
{
	n=$((n + 1))
	case $1 in
	ok)	passed=$((passed + 1)); echo "ok $n - $2" ;;
	skip)	skipped=$((skipped + 1)); echo "ok $n - $2 # SKIP" ;;
	*)	failed=$((failed + 1)); echo "not ok $n - $2"
		[ -z "${3:-}" ] || tail -n 30 "$3" | sed 's/^/# /' ;;
	esac
}

# check DESCRIPTION COMMAND...: ok when COMMAND succeeds.
check()
{
	local desc=$1 log start
	shift
	log=$LOGS/$((n + 1)).log
	start=$SECONDS
	if "$@" > "$log" 2>&1; then
		tap ok "$desc"
	else
		tap fail "$desc" "$log"
		return 1
	fi
	[ $((SECONDS - start)) -lt 5 ] || echo "# $((SECONDS - start))s"
}

# require DESCRIPTION COMMAND...: as check, but nothing after it can run
# if it fails.
require()
{
	check "$@" || finish
}

echo "TAP version 13"

# --- The series: it applies, exports, re-applies with git am, is clean.

require "set-up: Debian packages and the pinned base installed" \
	"$TOP/harness/setup.sh"
require "series: every patch applies to the base" "$TOP/harness/tree.sh"
# --- Every patch builds, without new W=1 or sparse warnings.
if [ -n "$steps" ]; then
	i=0
	for p in "$TOP"/series/[0-9]*.patch; do
		i=$((i + 1))
		check "builds, no new W=1/sparse warnings: ${p##*/}" \
			"$TOP/harness/step-build.sh" "$i" || true
	done
	finish
fi

# Everything but the guest tests: skipped by --debug.
series_checks()
{
	require "series: exports one patch per change, with a cover letter" \
		"$TOP/harness/export.sh"

	patches=()
	for p in "$OUT"/series/[0-9]*.patch; do
		case ${p##*/} in 0000-*) ;; *) patches+=("$p") ;; esac
	done
	[ ${#patches[@]} -eq "$(ls "$TOP"/series/[0-9]*.patch | wc -l)" ] ||
		tap fail "series: as many exported patches as series/ has"

	# git am of the exported series onto a pristine base, in a work tree of
	# its own, must give commit by commit the trees that are built.
	git_am_gives_the_built_tree()
	{
		local am=$WORK/am series got

		if [ ! -d "$am" ]; then
			tgit worktree prune
			tgit worktree add -q --detach "$am" base
		fi
		git -C "$am" am --abort >/dev/null 2>&1 || true
		git -C "$am" checkout -q -f --detach base
		git -C "$am" clean -q -f -d -x
		git -C "$am" -c user.name=am -c user.email=am@streamid.invalid \
			am -q "${patches[@]}"
		series=$(tgit log --format=%T base..refs/streamid/tip)
		got=$(git -C "$am" log --format=%T base..HEAD)
		[ "$series" = "$got" ] ||
			{ echo "git am gave trees $got, the series has $series"; return 1; }
		[ "$(tgit rev-parse HEAD^{tree})" = "${series%%$'\n'*}" ] ||
			{ echo "$TREE is not at the series"; return 1; }
		[ -z "$(tgit status --porcelain --untracked-files=no)" ] ||
			{ echo "$TREE has changes"; return 1; }
	}
	check "series: git am onto a pristine base gives the tree that is built" \
		git_am_gives_the_built_tree || true

	# The repository is in the form "make refresh" writes: refreshing a copy
	# of it from the tree changes nothing.
	# A copy of the repository without .git and build/, in a new directory.
	copy_top()
	{
		local copy

		copy=$(mktemp -d)
		tar -C "$TOP" --exclude=./.git --exclude=./build -cf - . |
			tar -C "$copy" -xf -
		echo "$copy"
	}

	refresh_round_trip()
	{
		local copy

		copy=$(copy_top)
		"$copy/harness/refresh.sh" >/dev/null
		diff -r -x .git -x build "$TOP" "$copy"
		local rc=$?
		rm -rf "$copy"
		return $rc
	}
	check "series: the repository is what 'make refresh' writes from the tree" \
		refresh_round_trip || true

	# A patch that no longer applies stops the set-up with its name and the
	# name of the file that failed.
	conflict_is_reported()
	{
		local copy p f rc=0

		copy=$(copy_top)
		p=$(grep -l '^diff --git' "$copy"/series/[0-9]*.patch | head -n 1)
		f=$(sed -n 's|^+++ b/||p' "$p" | head -n 1)
		# Change the first context line of the first hunk.
		awk '!done && hunk && /^ / { $0 = " conflict" $0; done = 1 }
		     /^@@ / { hunk = 1 } { print }' "$p" > "$copy/p"
		mv "$copy/p" "$p"
		"$copy/harness/series.sh" > "$copy/out" 2>&1 || rc=$?
		cat "$copy/out"
		grep -q "series/${p##*/} does not apply" "$copy/out" &&
			grep -q "error: .*$f" "$copy/out" && [ "$rc" -ne 0 ]
		rc=$?
		rm -rf "$copy"
		return $rc
	}
	check "series: a patch that does not apply is named, with its file" \
		conflict_is_reported || true

	# The base tree is Debian's source, without upstream's history, so
	# the commit a Fixes: tag names cannot be looked up in it.
	for p in "${patches[@]}"; do
		name=${p##*/}
		check "checkpatch --strict: $name" \
			env -C "$TREE" PATH=/usr/bin:/bin \
			scripts/checkpatch.pl --strict -q \
			--ignore UNKNOWN_COMMIT_ID "$p" || true
	done

	# Files at kernel paths must be files the series adds, not upstream ones.
	only_new_files()
	{
		local f bad=0

		while IFS= read -r f; do
			case $f in */*) ;; *) continue ;; esac
			case $f in harness/*|series/*|.ci/*|build/*|suites/*) continue ;; esac
			if tgit cat-file -e "base:$f" 2>/dev/null; then
				echo "$f is an upstream file: keep hunks for it"
				bad=1
			elif ! grep -qxF "Adds: $f" "$TOP"/series/[0-9]*.patch; then
				echo "$f is added by no patch (no 'Adds: $f')"
				bad=1
			fi
		done < <(git -C "$TOP" ls-files --cached --others --exclude-standard)
		return $bad
	}
	check "repository: holds no upstream file, only files the series adds" \
		only_new_files || true
}

[ -n "$debug" ] || series_checks

# --- The tools: flashsim is checked against the theory of garbage
# --- collection (seconds), and the checks must fail a wrong model.
tool_checks()
{
	local sim=$OUT/tools/flashsim line

	mkdir -p "$OUT/tools"
	require "build: tools/streamid builds without warnings" \
		make -C "$TOP/tools/streamid" OUTPUT="$OUT/tools/" \
		CFLAGS="-O2 -Werror"
	while IFS= read -r line; do
		case $line in
		"ok "*) tap ok "flashsim: ${line#ok * }" ;;
		"not ok "*) tap fail "flashsim: ${line#not ok * }" ;;
		esac
	done < <("$TOP/tools/streamid/flashsim-test.sh" "$sim" 2>&1 || true)
	check "flashsim: these checks fail a model whose GC picks any block" \
		sh -c "! '$TOP/tools/streamid/flashsim-test.sh' -g random '$sim'" ||
		true
	check "flashsim: these checks fail a model whose GC picks the oldest block" \
		sh -c "! '$TOP/tools/streamid/flashsim-test.sh' -g fifo '$sim'" ||
		true
}
[ -n "$debug" ] || tool_checks

# --- The kernel and the tests.

require "build: the kernel builds (build/bzImage$debug)" \
	"$TOP/harness/build.sh" ${debug:+--debug}
selftests_build()
{
	# lib.mk does not know the programs depend on streamid.h: from scratch.
	rm -rf "$WORK/selftests"
	mkdir -p "$WORK/selftests"
	{
		make -s -C "$TREE/$SELFTESTS" OUTPUT="$WORK/selftests" &&
		# The test of the test environment, with them.
		gcc -Wall -O2 -I "$TREE/$SELFTESTS" -I "$TREE/${SELFTESTS%/*}" \
			-o "$WORK/selftests/harness_test" \
			"$TOP/harness/harness_test.c"
	} 2>&1 | tee /dev/stderr | { ! grep -q 'warning:'; }
}
require "build: the selftests build without warnings" selftests_build

# vm VM_OPTIONS... -- COMMAND...: vm.sh with the kernel that was built.
vm()
{
	local opts=()

	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	"$TOP/$SELFTESTS/vm.sh" "${opts[@]}" "$OUT/bzImage$debug" "$@"
}

# vm_status WANT MAX_SECONDS VM_ARGS... -- COMMAND: vm.sh must exit with
# WANT within MAX_SECONDS.
vm_status()
{
	local want=$1 max=$2 start=$SECONDS rc=0

	shift 2
	vm "$@" || rc=$?
	echo "vm.sh exited $rc after $((SECONDS - start))s"
	[ "$rc" -eq "$want" ] || { echo "expected $want"; return 1; }
	[ $((SECONDS - start)) -le "$max" ] ||
		{ echo "took more than ${max}s"; return 1; }
}

vm_checks()
{
	local lkdtm=/sys/kernel/debug/provoke-crash/DIRECT

	check "vm.sh: boots and runs a command in under 30s" \
		vm_status 0 30 -t 60 -- true || true
	check "vm.sh: passes the command's exit status back" \
		vm_status 3 60 -t 60 -- sh -c 'exit 3' || true
	check "vm.sh: kills a hung guest at its timeout and reports it" \
		vm_status 124 45 -t 30 -- sleep 600 || true
	check "vm.sh: reports a guest that panics" \
		vm_status 125 60 -t 60 -- sh -c 'echo c > /proc/sysrq-trigger' || true
	check "vm.sh: fails a run with a kernel WARNING whose command succeeded" \
		vm_status 126 60 -t 60 -- sh -c "echo WARNING > $lkdtm" || true
	check "vm.sh: fails a run with a kernel oops whose command succeeded" \
		vm_status 126 60 -t 60 -- sh -c "(echo BUG > $lkdtm); exit 0" || true
}
[ -n "$debug" ] || vm_checks

# The selftests in one guest, framed by harness/guest-tests.sh: each
# program's TAP results become results here.
export STREAMID_BUILD_ID STREAMID_KERNEL_RELEASE
STREAMID_BUILD_ID=$(cat "$OUT/build-id$debug")
STREAMID_KERNEL_RELEASE=$(cat "$OBJ$debug/include/config/kernel.release")
guest=$LOGS/guest.log
rc=0
# The tools were built above, but not for --debug.
tools=()
[ -n "$debug" ] || tools=("$OUT/tools")
# scsi_test adds its scsi_debug disks itself, on a store large enough for
# xfs.
sdebug="scsi_debug.add_host=0 scsi_debug.dev_size_mb=320"
vm -t "$([ -n "$debug" ] && echo 5400 || echo 1800)" -n 256 -a "$sdebug" \
	-k "$WORK" -o "$LOGS/vm" -- \
	"$TOP/harness/guest-tests.sh" "$WORK/selftests" "$TREE" \
	"${tools[@]}" > "$guest" 2>&1 ||
	rc=$?
prog= plan=0 seen=0 bad=0
while IFS= read -r line; do
	case $line in
	"# selftest: "*)
		prog=${line#"# selftest: "} plan=0 seen=0 bad=0 ;;
	"# exit: "*)
		code=${line#"# exit: "}
		if [ "$seen" -eq 0 ] || [ "$seen" -ne "$plan" ]; then
			tap fail "guest: $prog: $seen of $plan results (exit $code)"
		elif [ "$code" -ne 0 ] && [ "$bad" -eq 0 ]; then
			tap fail "guest: $prog: exit $code with no failed test"
		fi ;;
	"1.."*)
		plan=${line#1..} ;;
	"ok "*"# SKIP"*)
		seen=$((seen + 1))
		desc=${line#ok * }
		tap skip "guest: $prog: ${desc%% # SKIP*}"
		echo "# ${desc#* # SKIP}" ;;
	"ok "*)
		seen=$((seen + 1))
		tap ok "guest: $prog: ${line#ok * }" ;;
	"not ok "*)
		seen=$((seen + 1)) bad=$((bad + 1))
		tap fail "guest: $prog: ${line#not ok * }" ;;
	"#"*)
		echo "$line" ;;
	esac
done < "$guest"
if [ "$rc" -eq 0 ]; then
	tap ok "guest: the test run ended cleanly (no timeout, crash or warning)"
else
	tap fail "guest: the test run ended cleanly (vm.sh exited $rc)" "$guest"
fi

finish
