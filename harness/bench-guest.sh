#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run in the guest by harness/bench.sh: 4 KiB random O_DIRECT writes with
# fio on a null_blk device that stores nothing, RUNS times per case, each
# printed as "result KERNEL CASE RUN NS_PER_WRITE REQUESTS_PER_WRITE".
# Cases: "unset" (no stream) and "set" (stream 1, set by the preload
# library SETSTREAM_SO); and the cost of the merge rule with MERGE_LOAD,
# sequential writes 16 at a time alternating between two descriptors:
# "merge0" (no ID), "merge1" (both ID 1), "merge2" (IDs 1 and 2).  The
# device keeps no streams (max_write_streams 0), where merging them would be
# harmless.  And what close() costs with CLOSE_LOAD, of a file on ext4
# with 64 MiB dirty: "close0" (no ID), "close1" (ID 1); for these the
# last two figures are the guest ns of the close and the sectors the
# disk wrote during it.  And what opening a file for writing costs when
# its inode is not cached, with OPEN_LOAD, 2000 files on ext4: "open0" on
# the device without streams, "open1" on one with streams, the files given
# ID 1 by their directory; the last two figures are the guest ns of an
# open() and close() and the sectors read during all of them.
# Usage: bench-guest.sh KERNEL RUNS WRITES SETSTREAM_SO MERGE_LOAD
#        CLOSE_LOAD OPEN_LOAD CASE...
set -euo pipefail
kernel=$1 runs=$2 writes=$3 so=$4 merge=$5 closer=$6 opener=$7
shift 7

nullb=/sys/kernel/config/nullb/bench
mkdir "$nullb"
echo 1024 > "$nullb/size"
echo 0 > "$nullb/memory_backed"
echo 0 > "$nullb/irqmode"	# complete in the submitter's context
echo 1 > "$nullb/power"
dev=/dev/bench
[ "$(cat /sys/block/bench/queue/max_write_streams 2>/dev/null || echo 0)" = 0 ] ||
	{ echo "bench: /dev/bench keeps streams" >&2; exit 1; }

# Write requests the device completed (the 5th field of its stat).
requests()
{
	awk '{ print $5 }' /sys/block/bench/stat
}

job()
{
	fio --name=bench --filename="$dev" --rw=randwrite --bs=4k --direct=1 \
		--ioengine=psync --size=1g --number_ios="$1" --randrepeat=1 \
		--norandommap --output-format=json --output=/tmp/fio.json
	python3 -c 'import json, sys
w = json.load(open("/tmp/fio.json"))["jobs"][0]["write"]
assert w["total_ios"] == int(sys.argv[1]), w["total_ios"]
print("%.1f" % w["lat_ns"]["mean"])' "$1"
}

job 1000 > /dev/null	# warm up

# The preload library really tags the writes: on a device with streams,
# they all arrive in stream 1.
if [[ " $* " == *" set "* ]]; then
	proof=/sys/kernel/config/nullb/proof
	mkdir "$proof"
	echo 0 > "$proof/memory_backed"
	echo 4 > "$proof/streams"
	echo 1 > "$proof/power"
	LD_PRELOAD=$so SETSTREAM_PATH=/dev/proof SETSTREAM_ID=1 \
		fio --name=proof --filename=/dev/proof --rw=randwrite --bs=4k \
		--direct=1 --ioengine=psync --size=64m --number_ios=100 \
		--output=/dev/null
	got=$(cat "$proof/stream_stats")
	[ "$got" = "1 100 800" ] || { echo "proof: stream_stats '$got'" >&2; exit 1; }
	echo 0 > "$proof/power"
	rmdir "$proof"
fi
# ext4fs NAME STREAMS: ext4 on a memory-backed null_blk /dev/NAME with
# STREAMS streams, mounted on /tmp/NAME, with an empty directory "open".
ext4fs()
{
	local d=/sys/kernel/config/nullb/$1

	mkdir "$d"
	echo 256 > "$d/size"
	echo 1 > "$d/memory_backed"
	[ "$2" = 0 ] || echo "$2" > "$d/streams"	# the base has no such file
	echo 1 > "$d/power"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "/dev/$1"
	mkdir -p "/tmp/$1"
	mount "/dev/$1" "/tmp/$1"
	mkdir "/tmp/$1/open"
	fss+=("$1")
}
fss=()
# Without streams for the close and open cases.
if [[ " $* " == *" close"* || " $* " == *" open"* ]]; then
	ext4fs closefs 0
fi
# With streams, where the series reads the ID the files got from their
# directory when they are opened.
if [[ " $* " == *" open1 "* ]]; then
	ext4fs openfs 4
	python3 -c 'import os; fd = os.open("/tmp/openfs/open", os.O_RDONLY)
os.posix_fadvise(fd, 1, 0, 8)'
	"$opener" /tmp/openfs/open 2000 openfs > /dev/null
	[ "$(python3 -c 'import os
print(os.getxattr("/tmp/openfs/open/1999", "trusted.streamid").decode())')" \
		= 1 ] ||
		{ echo "open1: the files have no ID" >&2; exit 1; }
fi
for run in $(seq "$runs"); do
	for c in "$@"; do
		case $c in
		close[01])
			echo "result $kernel $c $run $("$closer" /tmp/closefs/f \
				64 "${c#close}" closefs)"
			continue ;;
		open0)
			echo "result $kernel $c $run $("$opener" \
				/tmp/closefs/open 2000 closefs)"
			continue ;;
		open1)
			echo "result $kernel $c $run $("$opener" \
				/tmp/openfs/open 2000 openfs)"
			continue ;;
		esac
		r0=$(requests)
		case $c in
		unset) ns=$(job "$writes") ;;
		set) ns=$(LD_PRELOAD=$so SETSTREAM_PATH=$dev SETSTREAM_ID=1 \
				job "$writes") ;;
		merge0) ns=$("$merge" "$dev" "$writes" 16 0 0) ;;
		merge1) ns=$("$merge" "$dev" "$writes" 16 1 1) ;;
		merge2) ns=$("$merge" "$dev" "$writes" 16 1 2) ;;
		esac
		r1=$(requests)
		echo "result $kernel $c $run $ns $(awk -v r=$((r1 - r0)) \
			-v w="$writes" 'BEGIN { printf "%.4f", r / w }')"
	done
done
echo 0 > "$nullb/power"
rmdir "$nullb"
for fs in "${fss[@]}"; do
	umount "/tmp/$fs"
	echo 0 > "/sys/kernel/config/nullb/$fs/power"
	rmdir "/sys/kernel/config/nullb/$fs"
done
