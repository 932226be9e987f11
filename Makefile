# SPDX-License-Identifier: GPL-2.0
# The write stream ID series: build, boot and test it.  See README.

H := harness
VM := tools/testing/selftests/streamid/vm.sh

# make: build the patched kernel, boot it and run the demo.
all: build
	$(MAKE) -s -C tools/streamid OUTPUT=$(CURDIR)/build/
	$(VM) -t 300 build/bzImage -- $(H)/demo.sh $(CURDIR)/build/flashsim

build:
	$(H)/setup.sh
	$(H)/tree.sh
	$(H)/build.sh

# make check: the whole test suite (TAP).
check:
	@$(H)/check.sh

# make check-debug: the guest tests on a kernel with KASAN, lockdep and
# DEBUG_ATOMIC_SLEEP, which must report nothing (not part of make check).
check-debug:
	@$(H)/check.sh --debug

# make bench: the cost of the series, patched against base (not a test).
bench:
	$(H)/bench.sh

# make check-steps: the series builds after each patch, with no new W=1
# or sparse warning (not part of make check: hours cold, ccache helps).
check-steps:
	@$(H)/check.sh --steps

# make waf [WORKLOAD="rocksdb-ext4 ..."]: write amplification without and
# with stream IDs, of all workloads or those named (not a test).
waf:
	$(H)/waf.sh

# make suites BLKTESTS=DIR FSTESTS=DIR [KERNEL=bzImage]: the blktests and
# fstests cases of suites/ and a comparison set, in a guest (not a test of
# make check).
suites:
	@$(H)/suites.sh

# make patches: the upstream-ready series in build/series/.
patches:
	$(H)/setup.sh
	$(H)/export.sh

# make refresh: take the commits of the work tree into the repository.
refresh:
	$(H)/refresh.sh

clean:
	rm -rf build

.PHONY: all bench build check check-debug check-steps patches refresh clean \
	suites waf
