#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make suites BLKTESTS=DIR FSTESTS=DIR [KERNEL=bzImage]: the blktests and
# fstests cases of suites/ and a comparison set around them, in one guest
# (not part of make check).  BLKTESTS and FSTESTS are checkouts with the
# patches of suites/blktests and suites/fstests applied and built; the
# guest runs them from copies in its /tmp.  blktests: the groups block and
# nvme (nvme_trtype=loop, TEST_DEVS the QEMU NVMe disk, TIMEOUT=10 for the
# timed tests).  fstests, on two 1 GiB null_blk devices, the scratch one
# with 8 streams: generic/788 on each of STREAMID_SUITES_NEWFS, and on
# each of STREAMID_SUITES_FS also STREAMID_SUITES_FSTESTS, quick tests of
# the paths the series changes (buffered writeback, direct I/O, AIO, mmap,
# fsync) that fit in about 30 minutes under TCG.  TAP, ending "N passed,
# N failed, N skipped"; the logs go to build/suites/<kernel file name>.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# What runs; the guest gets them as STREAMID_* variables.
export STREAMID_SUITES_NEWFS=${STREAMID_SUITES_NEWFS:-ext4 xfs btrfs}
export STREAMID_SUITES_FS=${STREAMID_SUITES_FS:-ext4 xfs}
export STREAMID_SUITES_FSTESTS=${STREAMID_SUITES_FSTESTS:-generic/001 \
generic/013 generic/075 generic/091 generic/112 generic/130 generic/215 \
generic/247 generic/263 generic/469}
export STREAMID_SUITES_BLKTESTS=${STREAMID_SUITES_BLKTESTS:-block nvme}

if [ "${1:-}" = --guest ]; then
	shift
	blk=$1 fst=$2 builtin=$3
	out=/run/vm/results
	mkdir -p "$out"
	# No udev in the guest: the links it would make.
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	for n in 0:stdin 1:stdout 2:stderr; do
		[ -e "/dev/${n#*:}" ] || ln -s "/proc/self/fd/${n%:*}" "/dev/${n#*:}"
	done
	if [ -d /sys/fs/cgroup ] && ! mountpoint -q /sys/fs/cgroup; then
		mount -t cgroup2 none /sys/fs/cgroup
	fi
	# Drivers are built in: modprobe and modinfo learn so from the
	# kernel's modules.builtin, in a module directory of our own.  Not
	# modules.builtin.modinfo: the base kernel's modules have fewer
	# parameters, which blktests looks for in /sys/module.
	kver=$(uname -r)
	mkdir -p "/tmp/mod/lib/modules/$kver" /tmp/bin
	cp "$builtin" "/tmp/mod/lib/modules/$kver/"
	: > "/tmp/mod/lib/modules/$kver/modules.order"
	depmod -b /tmp/mod "$kver"
	printf '#!/bin/sh\nexec /usr/sbin/modprobe -d /tmp/mod "$@"\n' > /tmp/bin/modprobe
	printf '#!/bin/sh\nexec /usr/sbin/modinfo -b /tmp/mod "$@"\n' > /tmp/bin/modinfo
	chmod +x /tmp/bin/*
	export PATH=/tmp/bin:$PATH

	cp -a "$blk" /tmp/blktests
	cd /tmp/blktests
	cat > config <<-CONF
	NVMET_TRTYPES=loop
	TEST_DEVS=(/dev/nvme0n1)
	NVME_IMG_SIZE=256M
	NVME_NUM_ITER=10
	TIMEOUT=10
	CONF
	start=$SECONDS
	# shellcheck disable=SC2086
	./check $STREAMID_SUITES_BLKTESTS > "$out/blktests.log" 2>&1 || true
	echo "# blktests: $((SECONDS - start)) s"
	cp -a results "$out/blktests-results"
	# "block/040 [=> dev] [(conditions)] (description) [passed]"
	sed -nE 's/^([a-z0-9]+\/[0-9]+)( => [a-z0-9]+)?( \([^)]*\))? \(.*\) +\[(passed|failed|not run)\]$/\4 blktests \1\2\3/p' \
		"$out/blktests.log"

	cp -a "$fst" /tmp/fstests
	cd /tmp/fstests
	nullb=/sys/kernel/config/nullb
	for d in fstest:0 fscratch:8; do
		mkdir "$nullb/${d%:*}"
		echo 1024 > "$nullb/${d%:*}/size"
		echo 1 > "$nullb/${d%:*}/memory_backed"
		[ "${d#*:}" = 0 ] || echo "${d#*:}" > "$nullb/${d%:*}/streams" ||
			echo "# fstests: this kernel's null_blk has no streams"
		echo 1 > "$nullb/${d%:*}/power"
	done
	mkdir -p /tmp/test /tmp/scratch
	for fs in $STREAMID_SUITES_NEWFS; do
		cases=generic/788
		case " $STREAMID_SUITES_FS " in
		*" $fs "*) cases="$cases $STREAMID_SUITES_FSTESTS" ;;
		esac
		cat > local.config <<-CONF
		export FSTYP=$fs
		export TEST_DEV=/dev/fstest
		export TEST_DIR=/tmp/test
		export SCRATCH_DEV=/dev/fscratch
		export SCRATCH_MNT=/tmp/scratch
		export RESULT_BASE=/tmp/fstests-results/$fs
		CONF
		force=-f
		[ "$fs" != ext4 ] || force=-F
		"mkfs.$fs" -q "$force" /dev/fstest > /dev/null
		start=$SECONDS
		# shellcheck disable=SC2086
		./check $cases > "$out/fstests-$fs.log" 2>&1 || true
		echo "# fstests $fs: $((SECONDS - start)) s"
		cp -a "/tmp/fstests-results/$fs" "$out/fstests-results-$fs"
		awk -v fs="$fs" '
			/^Not run:/ { for (i = 3; i <= NF; i++) notrun[$i] = 1 }
			/^Failures:/ { for (i = 2; i <= NF; i++) failed[$i] = 1 }
			/^Ran:/ { for (i = 2; i <= NF; i++) ran[++n] = $i }
			END {
				for (i = 1; i <= n; i++) {
					t = ran[i]
					s = t in failed ? "failed" : \
					    t in notrun ? "not run" : "passed"
					print s " fstests " fs " " t
				}
			}' "$out/fstests-$fs.log"
		grep -q '^Ran:' "$out/fstests-$fs.log" ||
			echo "failed fstests $fs ./check ran nothing (fstests-$fs.log)"
		umount /tmp/test 2>/dev/null || true
	done
	exit 0
fi

[ -n "${BLKTESTS:-}" ] && [ -n "${FSTESTS:-}" ] ||
	die "usage: make suites BLKTESTS=DIR FSTESTS=DIR [KERNEL=bzImage]"
blk=$(realpath "$BLKTESTS") fst=$(realpath "$FSTESTS")
kernel=$(realpath "${KERNEL:-$OUT/bzImage}")
# Both kernels are built with the same configuration: one list of the
# drivers built in serves them both.
builtin=$(realpath "${MODULES_BUILTIN:-$OBJ/modules.builtin}")
[ -x "$blk/check" ] && [ -f "$blk/tests/block/041" ] &&
	[ -x "$blk/src/streamid_write" ] ||
	die "$blk: not a blktests checkout with suites/blktests applied and built"
[ -x "$fst/check" ] && [ -f "$fst/tests/generic/788" ] &&
	[ -x "$fst/src/streamid_write" ] ||
	die "$fst: not an fstests checkout with suites/fstests applied and built"
[ -f "$builtin" ] || die "no $builtin (MODULES_BUILTIN)"

"$TOP/harness/setup.sh" "$TOP/harness/suites-packages"

logs=$OUT/suites/$(basename "$kernel")
mkdir -p "$logs"
echo "# suites: $kernel; logs in $logs"
start=$SECONDS
rc=0
(cd "$TOP" && nice "$SELFTESTS/vm.sh" -t 7200 -m 4096 -n 256 -o "$logs" \
	-k "$blk" -k "$fst" "$kernel" -- \
	harness/suites.sh --guest "$blk" "$fst" "$builtin") > "$logs/tap.raw" || rc=$?
grep '^#' "$logs/tap.raw" || true
n=0 pass=0 fail=0 skip=0
while read -r status rest; do
	case $status in
	passed) n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $rest" ;;
	failed) n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $rest" ;;
	not) n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - ${rest#run } # SKIP" ;;
	esac
done < <(grep -E '^(passed|failed|not run) ' "$logs/tap.raw")
if [ $rc -ne 0 ]; then
	n=$((n + 1)); fail=$((fail + 1))
	echo "not ok $n - guest ended with status $rc (vm.sh)"
fi
echo "1..$n"
echo "# $((SECONDS - start)) s"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
