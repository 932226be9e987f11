// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe controllers without Directives: the NVMe target with a namespace
 * without streams (fixture plain), and QEMU's emulated NVMe controller
 * (fixture qemu; vm.sh -n adds one), under a host that would use
 * streams.
 */
#define _GNU_SOURCE
#include "nvmet.h"

/* A namespace without streams, over the loop transport. */
FIXTURE(plain) {
	struct host h;
};

FIXTURE_SETUP(plain)
{
	nvmet_up(_metadata, &self->h, "loop", 0, true, 64);
}

FIXTURE_TEARDOWN(plain)
{
	nvmet_down(&self->h);
}

/*
 * A subsystem whose namespaces have no streams behaves as before: no
 * Directives in OACS or the effects log, Directive commands are invalid
 * opcodes, and DTYPE in a write is ignored as it always was.
 */
TEST_F(plain, no_directives)
{
	__u32 effects_send, effects_recv;
	int oacs, sup, en;
	struct stats st;

	ASSERT_EQ(0, directive_support(self->h.fd, &oacs, &effects_send,
				       &effects_recv));
	EXPECT_EQ(0, oacs);
	EXPECT_EQ(0, effects_send);
	EXPECT_EQ(0, effects_recv);
	EXPECT_EQ(SC_INVALID_OPCODE, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(SC_INVALID_OPCODE, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	EXPECT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 1, 1));
	/* The target has no counters of its own here: the device's. */
	ASSERT_EQ(0, read_stats(self->h.nullb, &st));
	EXPECT_EQ(8, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));
	EXPECT_EQ(0, check_at(self->h.dev, 0, 4096, 1));
}

FIXTURE(qemu) {
	char dev[300];
	char ctrl[300];
};

FIXTURE_SETUP(qemu)
{
	const char *serial = getenv("STREAMID_NVME_SERIAL");
	char path[600], buf[256];

	if (!serial)
		SKIP(return, "no NVMe disk attached (STREAMID_NVME_SERIAL unset)");
	ASSERT_TRUE(sysfs_find("/sys/class/nvme", "serial", serial, NULL,
			       self->ctrl, sizeof(self->ctrl)));
	snprintf(path, sizeof(path), "/sys/class/nvme/%s/subsysnqn",
		 self->ctrl);
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	ASSERT_EQ(0, find_host(buf, self->dev, sizeof(self->dev), self->ctrl,
			       sizeof(self->ctrl)));
}

FIXTURE_TEARDOWN(qemu)
{
	write_attr(TRACING "/events/nvme/nvme_setup_cmd", "enable", "0");
}

/*
 * QEMU's NVMe controller has no Directives: the host sends it no
 * directive command when it sets up the controller, its disk has no
 * streams, and a tagged write goes out as an ordinary write.
 */
TEST_F(qemu, no_directives)
{
	char *buf = malloc(1 << 20), *p;
	int fd, writes = 0;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(0, max_write_streams(self->dev));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(TRACING "/events/nvme/nvme_setup_cmd",
				"enable", "1"));
	/* Streams on: what keeps the host quiet is the controller's OACS. */
	ASSERT_EQ(0, write_attr(NVME_CORE, "streams", "Y"));
	ASSERT_EQ(0, reset_and_wait(self->ctrl, self->dev, 0));
	ASSERT_EQ(0, write_attr(NVME_CORE, "streams", "N"));
	fd = open_stream(self->dev, O_WRONLY | O_DIRECT, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 3));
	close(fd);
	ASSERT_EQ(0, write_attr(TRACING "/events/nvme/nvme_setup_cmd",
				"enable", "0"));
	ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
	EXPECT_NE(NULL, strstr(buf, "nvme_admin_identify"));
	EXPECT_EQ(NULL, strstr(buf, "nvme_admin_directive"));
	for (p = buf; (p = strstr(p, "cmd=(nvme_cmd_write ")); p++) {
		writes++;
		EXPECT_NE(NULL, strstr(p, "ctrl=0x0, dsmgmt=0,"));
	}
	EXPECT_LE(1, writes);
	free(buf);
	EXPECT_EQ(0, check_at(self->dev, 0, 4096, 3));
}

TEST_HARNESS_MAIN
