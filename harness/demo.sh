#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo ("make"), run in the guest: an application writes "hot" data
# (rewritten again and again) and "cold" data (written once) to a disk
# with streams, tagging each with its own stream ID; the disk counts what
# arrived in each stream.
set -euo pipefail

nullb=/sys/kernel/config/nullb/demo
mkdir "$nullb"
echo 512 > "$nullb/size"
echo 1 > "$nullb/memory_backed"
echo 4 > "$nullb/streams"
echo 1 > "$nullb/power"
dev=/dev/demo	# null_blk names the disk after its configfs directory

echo "Kernel:  $(uname -r)"
echo "Disk:    $dev, null_blk, max_streams $(cat "/sys/block/${dev#/dev/}/queue/max_streams")"
echo
echo "hot:  a 4 MiB log rewritten 8 times, stream 1"
echo "cold: a 32 MiB archive written once, stream 2"
echo "meta: 1 MiB written with no stream"
python3 - "$dev" <<'PY'
import os, sys

def write(dev, stream, offset, size, times):
    fd = os.open(dev, os.O_WRONLY)
    # POSIX_FADV_STREAMID is 8; stream 0 clears what the last writer set
    # for the disk's page cache.
    os.posix_fadvise(fd, stream, 0, 8)
    block = os.urandom(1 << 20)
    for _ in range(times):
        os.lseek(fd, offset, os.SEEK_SET)
        for _ in range(size >> 20):
            os.write(fd, block)
        os.fsync(fd)
    os.close(fd)

MiB = 1 << 20
write(sys.argv[1], 1, 0, 4 * MiB, 8)
write(sys.argv[1], 2, 64 * MiB, 32 * MiB, 1)
write(sys.argv[1], 0, 128 * MiB, 1 * MiB, 1)
PY
echo
echo "What the disk received, per stream (its stream_stats):"
printf '  %-8s %-6s %10s %10s\n' stream data requests MiB
while read -r id requests sectors; do
	case $id in 0) what=meta ;; 1) what=hot ;; 2) what=cold ;; *) what=? ;; esac
	printf '  %-8s %-6s %10s %10s\n' "$id" "$what" "$requests" \
		"$((sectors / 2048))"
done < "$nullb/stream_stats"
echo
echo "Each data set reached the disk in its own stream: a drive with streams"
echo "(NVMe Streams) puts the hot log and the archive in different erase"
echo "blocks, so that rewriting the log never makes it copy the archive."
echo 0 > "$nullb/power"
rmdir "$nullb"
