// SPDX-License-Identifier: GPL-2.0
/*
 * Flexible Data Placement at the NVMe target, over its loop and TCP
 * transports (fixture fdp_target: 4 placement handles of 1 MiB reclaim
 * units, the host leaving them alone), seen through nvme-cli, which this
 * project did not write, and raw commands: Identify, the FDP feature,
 * the four log pages, handle status and update, events, writes per
 * handle at the target and the null_blk device behind it, and every
 * error the specification gives.
 */
#define _GNU_SOURCE
#include "nvmet.h"

#define TGT_HANDLES	4
#define SC_CMD_SEQ_ERROR	0x400c
#define SC_FDP_DISABLED		0x4029

FIXTURE(fdp_target) {
	struct host h;
};

FIXTURE_VARIANT(fdp_target) {
	const char *transport;
};

FIXTURE_VARIANT_ADD(fdp_target, loop) { .transport = "loop" };
FIXTURE_VARIANT_ADD(fdp_target, tcp) { .transport = "tcp" };

FIXTURE_SETUP(fdp_target)
{
	nvmet_up_ns(_metadata, &self->h, variant->transport, 0, TGT_HANDLES,
		    false, 64);
}

FIXTURE_TEARDOWN(fdp_target)
{
	nvmet_down(&self->h);
}

/* Run "nvme @sub @dev @args": it fails, and says @pattern. */
static int cli_fails(const char *sub, const char *dev, const char *args,
		     const char *pattern)
{
	char *out = malloc(CLI_OUT);
	int ret;

	if (!out)
		return -1;
	ret = run_cmd(out, CLI_OUT, "nvme %s %s %s", sub, dev, args);
	ret = ret && grep_count(out, pattern) > 0 ? 0 : -1;
	free(out);
	return ret;
}

/* Get Log Page @lid of endurance group @endgid, @len bytes. */
static int fdp_log(int fd, int lid, int endgid, int lsp, void *data,
		   __u32 len)
{
	return admin(fd, 0x02, 0xffffffff, data, len,
		     lid | lsp << 8 | (len / 4 - 1) << 16, endgid << 16, 0,
		     NULL);
}

TEST_F(fdp_target, nvme_cli)
{
	const char *dev = self->h.dev;
	unsigned char *ev;
	long long bs = 512;
	char dir[512], ruamw[128];
	struct stats target, backing;

	snprintf(dir, sizeof(dir), "/sys/block/%s/queue", dev + 5);
	bs = sysfs_num(dir, "logical_block_size");
	ASSERT_LT(0, bs);

	EXPECT_EQ(0, cli_count("id-ctrl", dev, "-H",
			       "0x1.Flexible Data Placement Supported", 1));
	EXPECT_EQ(0, cli_count("id-ctrl", dev, "-H",
			       "0x1.Endurance Groups Supported", 1));
	EXPECT_EQ(0, cli_count("list-endgrp", dev, "",
			       "^num of endurance group ids: 1$", 1));
	EXPECT_EQ(0, cli_count("list-endgrp", dev, "", "^\\[ *0\\]:0x1$", 1));
	EXPECT_EQ(0, cli_count("list-endgrp", dev, "-i 2",
			       "^num of endurance group ids: 0$", 1));
	EXPECT_EQ(0, cli_count("id-ns", dev, "", "^endgid *: 1$", 1));
	EXPECT_EQ(0, cli_count("get-feature", dev, "-f 0x1d -c 1 -H",
			       "(FDPE) *: Yes", 1));
	EXPECT_EQ(0, cli_count("fdp configs", dev, "-e 1",
			       "Number of Reclaim Groups: 1$", 1));
	EXPECT_EQ(0, cli_count("fdp configs", dev, "-e 1",
			       "Number of Reclaim Unit Handles: 4$", 1));
	EXPECT_EQ(0, cli_count("fdp configs", dev, "-e 1",
			       "Reclaim Unit Nominal Size: 1048576$", 1));
	EXPECT_EQ(0, cli_count("fdp configs", dev, "-e 1",
			       "Initially Isolated", TGT_HANDLES));
	EXPECT_EQ(0, cli_count("fdp usage", dev, "-e 1",
			       "(Host Specified)", TGT_HANDLES));

	/* Writes: 2 to handle 1, 1 to handle 3, 1 with PID 9 (to 0). */
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	ASSERT_EQ(0, write_dir(self->h.fd, 0, DIR_FDP, 1, 1));
	ASSERT_EQ(0, write_dir(self->h.fd, 1, DIR_FDP, 1, 1));
	ASSERT_EQ(0, write_dir(self->h.fd, 2, DIR_FDP, 3, 3));
	ASSERT_EQ(0, write_dir(self->h.fd, 3, DIR_FDP, 9, 9));
	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	EXPECT_EQ(2, target.requests[2]);
	EXPECT_EQ(1, target.requests[4]);
	EXPECT_EQ(1, target.requests[1]);
	EXPECT_EQ(-1, only(&target, (const int []){ 1, 2, 4, -1 }));
	EXPECT_EQ(16, backing.sectors[2]);
	EXPECT_EQ(8, backing.sectors[4]);
	EXPECT_EQ(8, backing.sectors[1]);
	EXPECT_EQ(0, check_at(dev, 0, 8192, 1));
	EXPECT_EQ(0, check_at(dev, 12288, 4096, 9));
	/* 32 sectors: one thousand 512-byte units, rounded up. */
	EXPECT_EQ(0, cli_count("endurance-log", dev, "-g 1",
			       "^host_write_cmds\t*: 4$", 1));
	EXPECT_EQ(0, cli_count("endurance-log", dev, "-g 1",
			       "^data_units_written\t*: 1$", 1));
	EXPECT_EQ(0, cli_fails("endurance-log", dev, "-g 2",
			       "Invalid Field in Command"));

	EXPECT_EQ(0, cli_count("fdp stats", dev, "-e 1",
			       "Written (.*): 16384$", 2));
	EXPECT_EQ(0, cli_count("fdp stats", dev, "-e 1",
			       "Erased (MBE): 0$", 1));
	EXPECT_EQ(0, cli_count("fdp status", dev, "",
			       "^Placement Identifier [0-3]; Reclaim Unit Handle Identifier [0-3]$",
			       TGT_HANDLES));
	snprintf(ruamw, sizeof(ruamw), "(RUAMW): %lld$",
		 (FDP_RU_SIZE - 8192) / bs);
	EXPECT_EQ(0, cli_count("fdp status", dev, "", ruamw, 1));

	/* Events: Invalid PID on handle 0, RU not fully written on 1. */
	EXPECT_EQ(0, cli_count("fdp set-events", dev, "-n 1 -p 0 -e -t 3",
			       "Success", 1));
	EXPECT_EQ(0, cli_count("fdp set-events", dev, "-n 1 -p 1 -e -t 0",
			       "Success", 1));
	EXPECT_EQ(0, cli_count("get-feature", dev, "-f 0x1e -n 1 -c 1 -H",
			       "Not Fully Written *: Enabled", 1));
	EXPECT_EQ(0, cli_count("get-feature", dev, "-f 0x1e -n 1 -c 1 -H",
			       "Invalid Placement Identifier *: Not Enabled", 1));
	ASSERT_EQ(0, write_dir(self->h.fd, 3, DIR_FDP, 9, 9));
	EXPECT_EQ(0, cli_count("fdp update", dev, "-n 1 -p 1",
			       "update: Success", 1));
	EXPECT_EQ(0, cli_count("fdp events", dev, "-e 1 -E",
			       "Event Type: 0x3 (Invalid Placement Identifier)", 1));
	EXPECT_EQ(0, cli_count("fdp events", dev, "-e 1 -E",
			       "(PID): 0x9$", 1));
	EXPECT_EQ(0, cli_count("fdp events", dev, "-e 1 -E",
			       "Event Type: 0x0 (Reclaim Unit Not Fully Written)", 1));
	EXPECT_EQ(0, cli_count("fdp events", dev, "-e 1", "Event Type", 0));
	/* The log as the specification lays it out: 64-byte events. */
	ASSERT_EQ(0, posix_memalign((void **)&ev, 4096, 4096));
	ASSERT_EQ(0, fdp_log(self->h.fd, 0x23, 1, 1, ev, 4096));
	EXPECT_EQ(2, ev[0] | ev[1] << 8);
	EXPECT_EQ(3, ev[64]);			/* type */
	EXPECT_EQ(9, ev[66] | ev[67] << 8);	/* PID */
	EXPECT_EQ(1, ev[76]);			/* NSID */
	EXPECT_EQ(0, ev[128]);
	EXPECT_EQ(7, ev[129]);			/* PIV, NSIDV, LV */
	EXPECT_EQ(1, ev[130]);
	EXPECT_EQ(1, ev[140]);
	EXPECT_EQ(1, ev[162]);			/* RUHID */
	free(ev);
	/* Handle 1 is on a new reclaim unit now, handle 3 is not. */
	snprintf(ruamw, sizeof(ruamw), "(RUAMW): %lld$", FDP_RU_SIZE / bs);
	EXPECT_EQ(0, cli_count("fdp status", dev, "", ruamw, 2));
}

/* Every invalid field, and FDP disabled, answered with its status. */
TEST_F(fdp_target, errors)
{
	__u16 pids[2] = { 0, TGT_HANDLES };	/* 4 is not valid */
	char dir[512];
	__u32 result;
	long long bs;
	void *buf;

	snprintf(dir, sizeof(dir), "/sys/block/%s/queue", self->h.dev + 5);
	bs = sysfs_num(dir, "logical_block_size");
	ASSERT_LT(0, bs);
	ASSERT_EQ(0, posix_memalign(&buf, 4096, 4096));
	/* Endurance groups that do not exist; an unknown operation. */
	EXPECT_EQ(SC_INVALID_FIELD, fdp_log(self->h.fd, 0x20, 2, 0, buf, 64));
	EXPECT_EQ(SC_INVALID_FIELD, fdp_log(self->h.fd, 0x22, 0, 0, buf, 64));
	EXPECT_EQ(SC_INVALID_FIELD,
		  admin(self->h.fd, 0x0a, 0, NULL, 0, 0x1d, 2, 0, NULL));
	EXPECT_EQ(SC_INVALID_FIELD, io_mgmt(self->h.fd, 0x12, 2, buf, 64));
	/* Management operation 0: no operation. */
	EXPECT_EQ(0, io_mgmt(self->h.fd, 0x12, 0, buf, 64));
	EXPECT_EQ(0, io_mgmt(self->h.fd, 0x1d, 0, NULL, 0));
	/* ... which has no data to send. */
	EXPECT_EQ(SC_SGL_INVALID_DATA, io_mgmt(self->h.fd, 0x1d, 0, buf, 64));
	/* Set Features FDP: the group has a namespace. */
	EXPECT_EQ(SC_CMD_SEQ_ERROR,
		  admin(self->h.fd, 0x09, 0, NULL, 0, 0x1d, 1, 0, NULL));
	/* A handle the namespace does not have. */
	EXPECT_EQ(SC_INVALID_FIELD,
		  admin(self->h.fd, 0x0a, 1, buf, 2, 0x1e,
			TGT_HANDLES | 1 << 16, 0, NULL));
	/* An update with one invalid PID changes nothing. */
	ASSERT_EQ(0, write_dir(self->h.fd, 0, DIR_FDP, 0, 0));
	EXPECT_EQ(SC_INVALID_FIELD,
		  io_mgmt(self->h.fd, 0x1d, 1 | 1 << 16, pids, sizeof(pids)));
	/* Handle status, cut to 64 bytes: RUAMW of handle 0 at byte 24. */
	EXPECT_EQ(0, io_mgmt(self->h.fd, 0x12, 1, buf, 64));
	EXPECT_EQ((FDP_RU_SIZE - 4096) / bs, ((__u64 *)buf)[3]);
	EXPECT_EQ(TGT_HANDLES, ((__u16 *)buf)[7]);
	/* The Data Placement directive cannot be enabled by directive. */
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_IDENTIFY, 1, 0,
					     DIR_FDP << 8 | 1));

	/* FDP disabled under the namespace. */
	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "0"));
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, DIR_FDP, 1, 1));
	EXPECT_EQ(0, write_dir(self->h.fd, 0, 0, 0, 0));
	EXPECT_EQ(SC_FDP_DISABLED, fdp_log(self->h.fd, 0x22, 1, 0, buf, 64));
	EXPECT_EQ(SC_FDP_DISABLED, fdp_log(self->h.fd, 0x23, 1, 1, buf, 64));
	EXPECT_EQ(SC_FDP_DISABLED,
		  admin(self->h.fd, 0x0a, 1, buf, 2, 0x1e, 1 << 16, 0, NULL));
	EXPECT_EQ(SC_FDP_DISABLED, io_mgmt(self->h.fd, 0x12, 1, buf, 64));
	EXPECT_EQ(SC_FDP_DISABLED,
		  io_mgmt(self->h.fd, 0x1d, 1, pids, sizeof(pids[0])));
	EXPECT_EQ(0, fdp_log(self->h.fd, 0x20, 1, 0, buf, 64));
	EXPECT_EQ(0, admin(self->h.fd, 0x0a, 0, NULL, 0, 0x1d, 1, 0, &result));
	EXPECT_EQ(0, result & 1);
	free(buf);

	/* Bounds of the attributes. */
	EXPECT_NE(0, write_attr(self->h.ns, "fdp_handles", "1"));
	ASSERT_EQ(0, write_attr(self->h.ns, "enable", "0"));
	EXPECT_NE(0, write_attr(self->h.ns, "fdp_handles", "256"));
	EXPECT_EQ(0, write_attr(self->h.ns, "fdp_handles", "255"));
	EXPECT_NE(0, write_attr(self->h.ns, "fdp_ru_size", "4095"));
	EXPECT_NE(0, write_attr(self->h.ns, "fdp_ru_size", "0"));
	EXPECT_NE(0, write_attr(self->h.ns, "fdp_ru_size", "281474976714752"));
	EXPECT_EQ(0, write_attr(self->h.ns, "fdp_ru_size", "281474976710656"));
}

/*
 * The bounds of the FDP commands: log page offsets (LPO) dword-aligned and
 * inside the log; the number of event types (NOET) at least 1, and as
 * many as there are returned; an update of at most as many placement
 * identifiers (MOS + 1) as there are handles; a reclaim unit written full
 * left for a new one; the events log keeping the 63 newest events.
 */
TEST_F(fdp_target, bounds)
{
	__u16 pids[TGT_HANDLES + 1] = { 0, 1, 2, 3, 0 };
	unsigned char *full, *buf;
	unsigned int size, i;
	char dir[512];
	__u32 result;
	long long bs;

	snprintf(dir, sizeof(dir), "/sys/block/%s/queue", self->h.dev + 5);
	bs = sysfs_num(dir, "logical_block_size");
	ASSERT_LT(0, bs);
	ASSERT_EQ(0, posix_memalign((void **)&full, 4096, 4096));
	ASSERT_EQ(0, posix_memalign((void **)&buf, 4096, 4096));

	/* LPO, in CDW12, of the FDP Configurations log. */
	ASSERT_EQ(0, fdp_log(self->h.fd, 0x20, 1, 0, full, 4096));
	size = full[4] | full[5] << 8 | full[6] << 16 | full[7] << 24;
	ASSERT_LT(16, size);
	ASSERT_GE(4096, size);
	memset(buf, 0xff, 64);
	EXPECT_EQ(0, admin(self->h.fd, 0x02, 0xffffffff, buf, 64,
			   0x20 | 15 << 16, 1 << 16, 16, NULL));
	EXPECT_EQ(0, memcmp(buf, full + 16, size - 16 < 64 ? size - 16 : 64));
	/* The last dword, and zeroes past the end of the log. */
	memset(buf, 0xff, 64);
	EXPECT_EQ(0, admin(self->h.fd, 0x02, 0xffffffff, buf, 64,
			   0x20 | 15 << 16, 1 << 16, size - 4, NULL));
	EXPECT_EQ(0, memcmp(buf, full + size - 4, 4));
	for (i = 4; i < 64; i++)
		EXPECT_EQ(0, buf[i]);
	EXPECT_EQ(SC_INVALID_FIELD,
		  admin(self->h.fd, 0x02, 0xffffffff, buf, 4, 0x20, 1 << 16,
			size, NULL));
	EXPECT_EQ(SC_INVALID_FIELD,
		  admin(self->h.fd, 0x02, 0xffffffff, buf, 4, 0x20, 1 << 16,
			2, NULL));

	/* NOET of Get Features FDP Events: 0 is not valid; 255 gives both. */
	EXPECT_EQ(SC_INVALID_FIELD,
		  admin(self->h.fd, 0x0a, 1, NULL, 0, 0x1e, 0, 0, NULL));
	EXPECT_EQ(0, admin(self->h.fd, 0x0a, 1, buf, 510, 0x1e, 255 << 16, 0,
			   &result));
	EXPECT_EQ(2, result);
	EXPECT_EQ(0x00, buf[0]);	/* RU Not Fully Written */
	EXPECT_EQ(0x03, buf[2]);	/* Invalid Placement Identifier */

	/* MOS: at most as many identifiers as handles. */
	EXPECT_EQ(SC_INVALID_FIELD,
		  io_mgmt(self->h.fd, 0x1d, 1 | TGT_HANDLES << 16, pids,
			  sizeof(pids)));
	EXPECT_EQ(0, io_mgmt(self->h.fd, 0x1d, 1 | (TGT_HANDLES - 1) << 16,
			     pids, TGT_HANDLES * sizeof(pids[0])));

	/* A reclaim unit of 1 MiB written full: RUAMW of handle 1 is whole. */
	for (i = 0; i < FDP_RU_SIZE / 4096 - 1; i++)
		ASSERT_EQ(0, write_dir(self->h.fd, i, DIR_FDP, 1, 1));
	ASSERT_EQ(0, io_mgmt(self->h.fd, 0x12, 1, buf, 4096));
	EXPECT_EQ(4096 / bs, ((__u64 *)buf)[3 + 4]);
	ASSERT_EQ(0, write_dir(self->h.fd, i, DIR_FDP, 1, 1));
	ASSERT_EQ(0, io_mgmt(self->h.fd, 0x12, 1, buf, 4096));
	EXPECT_EQ(FDP_RU_SIZE / bs, ((__u64 *)buf)[3 + 4]);

	/* 70 writes with invalid PIDs 100 to 169: events 107 to 169 kept. */
	buf[0] = 0x03;
	buf[1] = 0;
	ASSERT_EQ(0, admin(self->h.fd, 0x09, 1, buf, 2, 0x1e, 1 << 16, 1,
			   NULL));
	for (i = 0; i < 70; i++)
		ASSERT_EQ(0, write_dir(self->h.fd, i, DIR_FDP, 100 + i, 0));
	ASSERT_EQ(0, fdp_log(self->h.fd, 0x23, 1, 1, buf, 4096));
	EXPECT_EQ(63, buf[0] | buf[1] << 8 | buf[2] << 16 | buf[3] << 24);
	for (i = 0; i < 63; i++)
		EXPECT_EQ(107 + i, buf[66 + 64 * i] | buf[67 + 64 * i] << 8)
			TH_LOG("event %u", i);
	free(full);
	free(buf);
}

/* The handle count and reclaim unit size, while it is being disabled. */
TEST_F(fdp_target, attributes_while_disabling)
{
	change_while_disabling(_metadata, &self->h, "fdp_handles", "255");
	change_while_disabling(_metadata, &self->h, "fdp_ru_size", "4096");
}

TEST_HARNESS_MAIN
