#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under QEMU with the host's root file system shared
# read-only over 9p, run one command in the guest and exit with its
# status.  The guest never outlives the timeout.
#
# Usage: vm.sh [options] KERNEL [--] COMMAND [ARG...]
#   -t SECONDS  kill the guest after this long (default 300)
#   -m MIB      guest memory (default 2048)
#   -c CPUS     guest CPUs (default 2)
#   -n MIB      add a QEMU NVMe disk of this size; repeat for more.  The
#               first has serial streamid-nvme0; the command gets its
#               serial and size as STREAMID_NVME_SERIAL and STREAMID_NVME_MIB
#   -a ARGS     append to the kernel command line
#   -q ARG      pass an extra argument to QEMU; repeat for more
#   -k DIR      keep this host directory visible in the guest although it
#               is under /tmp (the current one and vm.sh's always are)
#   -o DIR      keep the console log in DIR/console and what the guest
#               wrote to /run/vm (its output in out) in DIR/share
#
# The command runs in the current directory with the STREAMID_* variables
# of the caller; /tmp and /run are fresh tmpfs; configfs, debugfs and
# tracefs are mounted.  Its output is shown as it comes.
#
# Exit status: the command's; 124 if the guest timed out; 125 if the guest
# died before the command finished (panic, reboot); 126 if the kernel
# logged an oops, BUG or WARNING while the command succeeded.

guest_init()
{
	mount -t proc none /proc
	mount -t sysfs none /sys
	mountpoint -q /dev || mount -t devtmpfs none /dev
	mount -t tmpfs none /run
	mount -t configfs none /sys/kernel/config
	mount -t debugfs none /sys/kernel/debug
	mount -t tracefs none /sys/kernel/tracing
	mkdir /run/vm /run/host-tmp
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 vm /run/vm
	# A fresh /tmp, in which the host's directories the command needs
	# stay where they are.
	mount --bind /tmp /run/host-tmp
	mount -t tmpfs none /tmp
	while read -r p; do
		mkdir -p "$p"
		mount --bind "/run/host-tmp/${p#/tmp/}" "$p"
	done < /run/vm/keep
	ip link set lo up
	export HOME=/tmp PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin
	bash /run/vm/cmd > /run/vm/out 2>&1 < /dev/null
	echo $? > /run/vm/rc
	echo b > /proc/sysrq-trigger
}

if [ $$ -eq 1 ]; then
	guest_init
	exit 1
fi

set -euo pipefail

usage()
{
	sed -n '/^# Usage/,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

timeout=300 mem=2048 cpus=2 append= outdir=
nvme=() qemu_args=() keep_dirs=()
while getopts t:m:c:n:a:q:o:k:h opt; do
	case $opt in
	t) timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	n) nvme+=("$OPTARG") ;;
	a) append="$append $OPTARG" ;;
	q) qemu_args+=("$OPTARG") ;;
	o) outdir=$OPTARG ;;
	k) keep_dirs+=("$OPTARG") ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
kernel=$1
shift
[ "$1" = -- ] && shift
[ -f "$kernel" ] || { echo "vm.sh: no kernel image $kernel" >&2; exit 2; }

if [ -n "$outdir" ]; then
	dir=$outdir
	mkdir -p "$dir"
	rm -rf "$dir/share" "$dir/console" "$dir"/nvme*.img
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
mkdir "$dir/share"
: > "$dir/share/out"

devs=()
for i in "${!nvme[@]}"; do
	truncate -s "${nvme[i]}M" "$dir/nvme$i.img"
	devs+=(-drive "file=$dir/nvme$i.img,if=none,id=nvme$i,format=raw"
	       -device "nvme,serial=streamid-nvme$i,drive=nvme$i")
done
if [ ${#nvme[@]} -gt 0 ]; then
	export STREAMID_NVME_SERIAL=streamid-nvme0 STREAMID_NVME_MIB=${nvme[0]}
fi

vmsh=$(realpath "$0")
for p in "$PWD" "${vmsh%/*}" "${keep_dirs[@]}"; do
	p=$(realpath "$p")
	case $p in /tmp/*) echo "$p" ;; esac
done > "$dir/share/keep"

{
	export -p | grep '^declare -x STREAMID_' || true
	printf 'cd %q || exit 1\n' "$PWD"
	printf '%q ' "$@"
	echo
} > "$dir/share/cmd"

# /dev/kvm can be there on a CPU that does not expose VMX or SVM: then
# KVM hangs rather than fails, so look at the CPU first.
accel=tcg
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	accel=kvm
fi
start=$SECONDS
set +e
timeout -k 5 "$timeout" qemu-system-x86_64 -nodefaults -no-user-config \
	-display none -no-reboot -accel "$accel" -cpu max -smp "$cpus" -m "$mem" \
	-serial "file:$dir/console" -kernel "$kernel" \
	-append "console=ttyS0 root=root rootfstype=9p ro panic=-1 loglevel=5 \
rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose \
init=$vmsh$append" \
	-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$dir/share,mount_tag=vm,security_model=none" \
	"${devs[@]}" "${qemu_args[@]}" < /dev/null &
qemu=$!
tail -n +1 -f --pid=$qemu "$dir/share/out" &
wait $qemu
qrc=$?
wait
set -e
elapsed=$((SECONDS - start))

console_tail()
{
	echo "vm.sh: $1; the last lines of the console:" >&2
	tail -n 40 "$dir/console" | sed 's/^/  /' >&2
}

# What the kernel prints when something went wrong.
oops='Oops|BUG:|kernel BUG at|WARNING:|Kernel panic|general protection fault'
oops="$oops|Call Trace:|UBSAN:|KASAN:|INFO: task .* blocked|rcu: INFO"
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	console_tail "guest killed after ${elapsed}s (timeout ${timeout}s)"
	exit 124
fi
if [ ! -s "$dir/share/rc" ]; then
	console_tail "guest died before the command finished (qemu status $qrc)"
	exit 125
fi
rc=$(cat "$dir/share/rc")
if grep -Eq "$oops" "$dir/console"; then
	grep -E -m 5 "$oops" "$dir/console" | sed 's/^/  /' >&2
	console_tail "the kernel reported a problem"
	[ "$rc" -ne 0 ] || rc=126
fi
exit "$rc"
