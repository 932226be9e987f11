#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo ("make"), run in the guest: the kernel that was built writes
# to QEMU's NVMe disk, and the disk's own counters show what arrived.
set -euo pipefail

dev=
for d in /sys/block/nvme*; do
	[ "$(cat "$d/device/serial")" = "$STREAMID_NVME_SERIAL" ] && dev=${d##*/}
done
[ -n "$dev" ] || { echo "demo: no NVMe disk $STREAMID_NVME_SERIAL" >&2; exit 1; }
ctrl=$(basename "$(readlink "/sys/block/$dev/device")")

written()
{
	nvme smart-log "/dev/$ctrl" -o json |
		sed -n 's/.*"data_units_written" *: *\([0-9]*\).*/\1/p'
}

echo "Guest kernel:   $(uname -r) $(uname -v)"
echo "NVMe disk:      /dev/$dev, $(cat "/sys/block/$dev/device/model"), serial $STREAMID_NVME_SERIAL"
before=$(written)
fio --name=demo --filename="/dev/$dev" --rw=write --bs=128k --size=64M \
	--direct=1 --verify=crc32c --output-format=terse --terse-version=3 |
	awk -F';' '{ printf "fio:            wrote %d KiB, read back and verified %d KiB\n", $48, $7 }'
after=$(written)
echo "Device counter: $((after - before)) data units written (1 unit = 1000 x 512 bytes)"
