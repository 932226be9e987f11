#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo ("make"), run in the guest: the kernel that was built writes
# to QEMU's NVMe disk, and the disk's own counters show what arrived.
set -euo pipefail
cd /tmp

dev=
for d in /sys/block/nvme*; do
	read -r serial < "$d/device/serial"
	[ "$serial" != "$STREAMID_NVME_SERIAL" ] || dev=${d##*/}
done
[ -n "$dev" ] || { echo "demo: no NVMe disk $STREAMID_NVME_SERIAL" >&2; exit 1; }
ctrl=$(basename "$(readlink "/sys/block/$dev/device")")
read -r model < "/sys/block/$dev/device/model"

# The controller's count of 512,000-byte units written (SMART log).
written()
{
	nvme smart-log "/dev/$ctrl" -o json |
		sed -n 's/.*"data_units_written" *: *"\{0,1\}\([0-9]*\).*/\1/p'
}

echo "Guest kernel:  $(uname -r) $(uname -v)"
echo "NVMe disk:     /dev/$dev ($model, serial $serial)"
echo
echo "fio writes 64 MiB with O_DIRECT, reads it back and verifies it:"
before=$(written)
fio --name=demo --filename="/dev/$dev" --rw=write --bs=128k --size=64M \
	--direct=1 --verify=crc32c --verify_state_save=0 |
	grep -E '^ +(READ|WRITE):'
after=$(written)
echo
echo "The disk counted $((after - before)) units of 1000 sectors written:" \
	"$(((after - before) * 512000 / 1048576)) MiB."
