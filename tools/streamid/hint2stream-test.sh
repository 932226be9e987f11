#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check hint2stream.so on a kernel with write stream IDs, as root: a
# program that sets a lifetime hint as RocksDB does (a pointer to a
# 4-byte value, followed by bytes that are not zero) gets its file's data
# to the stream of the hint, as a null_blk disk with streams counts it.
# Prints TAP.
#
# Usage: hint2stream-test.sh HINT2STREAM_SO
set -euo pipefail

so=$(realpath "$1")
nullb=/sys/kernel/config/nullb/hint2stream
mnt=$(mktemp -d)
n=0 failed=0

result()	# result DESCRIPTION OK
{
	n=$((n + 1))
	if [ "$2" = 1 ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		failed=$((failed + 1))
	fi
}

cleanup()
{
	umount "$mnt" 2>/dev/null || true
	rmdir "$mnt"
	if [ -d "$nullb" ]; then
		echo 0 > "$nullb/power"
		rmdir "$nullb"
	fi
}
trap cleanup EXIT

echo "TAP version 13"
if [ ! -d /sys/kernel/config/nullb ] || ! python3 -c '' 2>/dev/null; then
	echo "1..0 # SKIP needs null_blk's configfs and python3"
	exit 4
fi
mkdir "$nullb"
echo 64 > "$nullb/size"
echo 1 > "$nullb/memory_backed"
echo 8 > "$nullb/streams"
echo 1 > "$nullb/power"
mkfs.ext4 -q -F /dev/hint2stream
mount /dev/hint2stream "$mnt"

# write FILE HINT[,HINT...] [ENV...]: 1 MiB written to FILE after
# RocksDB-style F_SET_RW_HINT calls with each HINT in turn, and synced;
# prints the last call's result (0 or the errno) and the file's streamid
# from fdinfo (0 if none).
write()
{
	local file=$1 hint=$2

	shift 2
	env "$@" python3 - "$file" "$hint" <<'PY'
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for hint in sys.argv[2].split(","):
    try:
        # The hint, then 4 bytes of something else: where a u64 is
        # read, the call fails.
        fcntl.fcntl(fd, 1036, struct.pack("<II", int(hint), 0x7777))
        res = 0
    except OSError as e:
        res = e.errno
os.write(fd, os.urandom(1 << 20))
os.fsync(fd)
sid = 0
with open("/proc/self/fdinfo/%d" % fd) as f:
    for line in f:
        if line.startswith("streamid:"):
            sid = int(line.split()[1])
print(res, sid)
PY
}

# sectors ID: what the disk counted in stream ID.
sectors()
{
	awk -v id="$1" '$1 == id { s += $3 } END { print s + 0 }' \
		"$nullb/stream_stats"
}

# Without the library the hint is refused and the data goes untagged.
echo 1 > "$nullb/stream_stats"
read -r res sid <<< "$(write "$mnt/plain" 2)"
result "without hint2stream the call fails with EINVAL ($res)" \
	"$([ "$res" = 22 ] && echo 1)"
result "without hint2stream no data in stream 1 ($(sectors 1) sectors)" \
	"$([ "$(sectors 1)" -eq 0 ] && echo 1)"

for hint in 2:1 3:2 4:3 5:4; do
	echo 1 > "$nullb/stream_stats"
	read -r res sid <<< "$(write "$mnt/h${hint%:*}" "${hint%:*}" \
		LD_PRELOAD="$so" HINT2STREAM_LOG="$mnt/log")"
	s=$(sectors "${hint#*:}")
	result "hint ${hint%:*}: call succeeds ($res), file in stream $sid, $s sectors there" \
		"$([ "$res" = 0 ] && [ "$sid" = "${hint#*:}" ] && [ "$s" -ge 2048 ] && echo 1)"
done
result "HINT2STREAM_LOG has a line per call" \
	"$([ "$(wc -l < "$mnt/log")" = 4 ] && echo 1)"

echo 1 > "$nullb/stream_stats"
read -r res sid <<< "$(write "$mnt/h9" 2 LD_PRELOAD="$so" HINT2STREAM=9,8,7,6)"
result "HINT2STREAM=9,8,7,6: SHORT goes to stream $sid, $(sectors 9) sectors" \
	"$([ "$sid" = 9 ] && [ "$(sectors 9)" -ge 2048 ] && echo 1)"

echo 1 > "$nullb/stream_stats"
read -r res sid <<< "$(write "$mnt/h1" 2,1 LD_PRELOAD="$so")"
result "hint NONE after SHORT clears the stream ($sid, $(sectors 1) sectors in 1)" \
	"$([ "$sid" = 0 ] && [ "$(sectors 1)" -eq 0 ] && echo 1)"

echo "1..$n"
[ "$failed" -eq 0 ]
