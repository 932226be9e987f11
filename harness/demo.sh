#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo ("make"), run in the guest: an application writes "hot" data
# (rewritten again and again) and "cold" data (written once), in step, to
# a disk with streams, tagging each with its own stream ID; the disk
# counts what arrived in each stream.  Then flashsim (FLASHSIM, built by
# make) replays what the disk received on a model of a small flash
# device, with and without the stream IDs: what the placement is worth.
# Usage: demo.sh FLASHSIM
set -euo pipefail
flashsim=$1
T=/sys/kernel/tracing

# The stream_stats lines on stdin as a table.
table()
{
	printf '  %-8s %-6s %10s %10s\n' stream data requests MiB
	while read -r id requests sectors; do
		case $id in 0) what=meta ;; 1) what=hot ;; 2) what=cold ;; *) what=? ;; esac
		printf '  %-8s %-6s %10s %10s\n' "$id" "$what" "$requests" \
			"$((sectors / 2048))"
	done
}

nullb=/sys/kernel/config/nullb/demo
mkdir "$nullb"
echo 512 > "$nullb/size"
echo 1 > "$nullb/memory_backed"
echo 4 > "$nullb/streams"
echo 1 > "$nullb/power"
dev=/dev/demo	# null_blk names the disk after its configfs directory

echo "Kernel:  $(uname -r)"
echo "Disk:    $dev, null_blk, max_write_streams $(cat "/sys/block/${dev#/dev/}/queue/max_write_streams")"
echo
echo "hot:  a 4 MiB log rewritten 16 times, stream 1"
echo "cold: a 32 MiB archive written once, stream 2, a little after each"
echo "      stretch of the log (64 KiB of it to 128 KiB of log, O_DIRECT)"
echo "meta: 1 MiB written with no stream"
write_data()
{
	python3 - "$1" <<'PY'
import mmap, os, sys

MiB, KiB = 1 << 20, 1 << 10

def open_stream(dev, stream):
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
    # POSIX_FADV_STREAMID is 8
    os.posix_fadvise(fd, stream, 0, 8)
    return fd

buf = mmap.mmap(-1, 128 * KiB)	# page-aligned, as O_DIRECT needs
buf.write(os.urandom(128 * KiB))
hot, cold = open_stream(sys.argv[1], 1), open_stream(sys.argv[1], 2)
archive = 4 * MiB
for _ in range(16):
    for off in range(0, 4 * MiB, 128 * KiB):
        os.pwrite(hot, buf, off)
        os.pwrite(cold, memoryview(buf)[:64 * KiB], archive)
        archive += 64 * KiB
meta = open_stream(sys.argv[1], 0)
for off in range(0, MiB, 128 * KiB):
    os.pwrite(meta, buf, 36 * MiB + off)
for fd in hot, cold, meta:
    os.close(fd)
PY
}
# The disk's requests, for flashsim.
devt=$(stat -L -c '%t %T' "$dev")
read -r major minor <<< "$devt"
echo "dev == $(((0x$major << 20) | 0x$minor))" > $T/events/block/block_rq_issue/filter
echo 1 > $T/events/block/block_rq_issue/enable
write_data "$dev"
echo 0 > $T/events/block/block_rq_issue/enable
cat $T/trace > /tmp/demo.trace
echo
echo "What the disk received, per stream (its stream_stats):"
table < "$nullb/stream_stats"
echo
echo "Each data set reached the disk in its own stream: a drive with streams"
echo "(NVMe Streams) puts the hot log and the archive in different erase"
echo "blocks, so that rewriting the log never makes it copy the archive."
waf()	# waf single|streams: flashsim's write amplification at steady state
{
	"$flashsim" -c 37M -b 256K -o 7 -s 1 -k -m "$1" /tmp/demo.trace |
		awk '{ for (i = 1; i <= NF; i++)
			if ($i ~ /^waf=/) printf "%.2f\n", substr($i, 5) }'
}
echo "What it is worth on flash (flashsim: these requests on a 37 MiB device,"
echo "7 % spare, 256 KiB erase blocks): write amplification $(waf single) with"
echo "the streams mixed, $(waf streams) with them kept apart."
