#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo ("make"), run in the guest: an application writes "hot" data
# (rewritten again and again) and "cold" data (written once) to a disk
# with streams, tagging each with its own stream ID; the disk counts what
# arrived in each stream.
set -euo pipefail

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
echo "hot:  a 4 MiB log rewritten 8 times, stream 1"
echo "cold: a 32 MiB archive written once, stream 2"
echo "meta: 1 MiB written with no stream"
write_data()
{
	python3 - "$1" <<'PY'
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
}
write_data "$dev"
echo
echo "What the disk received, per stream (its stream_stats):"
table < "$nullb/stream_stats"
echo
echo "Each data set reached the disk in its own stream: a drive with streams"
echo "(NVMe Streams) puts the hot log and the archive in different erase"
echo "blocks, so that rewriting the log never makes it copy the archive."
echo 0 > "$nullb/power"
rmdir "$nullb"

# The same through NVMe: the kernel's NVMe target offers the Streams
# directive on a namespace backed by a null_blk disk; the NVMe host
# driver enables it and passes each write's stream as DSPEC.
echo
echo "== Through NVMe: an NVMe target with Streams over the loop transport"
back=/sys/kernel/config/nullb/demoback
T=/sys/kernel/config/nvmet
sub=$T/subsystems/demo-streams
mkdir "$back"
echo 512 > "$back/size"
echo 1 > "$back/memory_backed"
echo 4 > "$back/streams"
echo 1 > "$back/power"
mkdir "$sub"
echo 1 > "$sub/attr_allow_any_host"
mkdir "$sub/namespaces/1"
echo /dev/demoback > "$sub/namespaces/1/device_path"
echo 4 > "$sub/namespaces/1/streams"
echo 1 > "$sub/namespaces/1/enable"
mkdir "$T/ports/1"
echo loop > "$T/ports/1/addr_trtype"
ln -s "$sub" "$T/ports/1/subsystems/demo-streams"
# The host enables a drive's Streams only when told to (off by default).
echo Y > /sys/module/nvme_core/parameters/streams
nvme connect -t loop -n demo-streams > /dev/null
nvmedev=
for _ in $(seq 50); do
	for d in /sys/block/nvme*n*; do
		[ "$(cat "$d/hidden" 2>/dev/null)" = 1 ] && continue
		[ "$(cat "$d/device/subsysnqn" 2>/dev/null)" = demo-streams ] &&
			nvmedev=/dev/${d##*/}
	done
	[ -n "$nvmedev" ] && [ -e "$nvmedev" ] && break
	sleep 0.1
done
echo "Disk:    $nvmedev, NVMe over loop, max_write_streams $(cat "/sys/block/${nvmedev#/dev/}/queue/max_write_streams")"
write_data "$nvmedev"
echo
echo "What the NVMe target received, per stream (its stream_stats):"
table < "$sub/namespaces/1/stream_stats"
nvme disconnect -n demo-streams > /dev/null
rm "$T/ports/1/subsystems/demo-streams"
rmdir "$T/ports/1"
echo 0 > "$sub/namespaces/1/enable"
rmdir "$sub/namespaces/1" "$sub"
echo 0 > "$back/power"
rmdir "$back"
