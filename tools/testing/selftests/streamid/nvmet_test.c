// SPDX-License-Identifier: GPL-2.0
/*
 * The NVMe target's Streams directive, as a host sees it over the loop
 * and TCP transports: a namespace backed by a null_blk device with
 * streams, its Identify and Streams directives driven with admin commands
 * (and nvme-cli), writes with the Streams directive counted per stream at
 * the target and at the backing device, every invalid field answered with
 * its status, the state gone after a controller reset, and random
 * directive commands that leave the target working.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <linux/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "streamid.h"

#define NVMET		"/sys/kernel/config/nvmet"
#define NQN		"streamid-test"
#define NQN_DIR		NVMET "/subsystems/" NQN
#define NS_DIR		NQN_DIR "/namespaces/1"
#define PORT		"7"
#define PORT_DIR	NVMET "/ports/" PORT
#define TCP_PORT	"4427"
#define BACKING		"nvmetback"
#define MSL		4

/*
 * NVMe status codes as the ioctls return them, with DNR (0x4000) and
 * without More (0x2000), which only says the error log has an entry.
 */
#define SC_MORE			0x2000
#define SC_SUCCESS		0x0000
#define SC_INVALID_OPCODE	0x4001
#define SC_INVALID_FIELD	0x4002
#define SC_INVALID_NS		0x400b
#define SC_STREAM_ALLOC_FAILED	0x417f

enum { DIR_IDENTIFY = 0, DIR_STREAMS = 1 };

/* One namespace of a target and the host connected to it. */
struct host {
	char nullb[256];	/* backing device, configfs */
	char ns[256];		/* target namespace, configfs */
	char dev[300];		/* host namespace block device */
	char ctrl[300];		/* host controller, nvmeN */
	int fd;
};

FIXTURE(nvmet) {
	struct host h;
};

FIXTURE_VARIANT(nvmet) {
	const char *transport;
};

FIXTURE_VARIANT_ADD(nvmet, loop) { .transport = "loop" };
FIXTURE_VARIANT_ADD(nvmet, tcp) { .transport = "tcp" };

/* A namespace without streams, over the loop transport. */
FIXTURE(plain) {
	struct host h;
};

static int admin(int fd, __u8 opcode, __u32 nsid, void *data,
		 __u32 len, __u32 cdw10, __u32 cdw11, __u32 cdw12,
		 __u32 *result)
{
	struct nvme_passthru_cmd cmd = {
		.opcode = opcode, .nsid = nsid,
		.addr = (uintptr_t)data, .data_len = len,
		.cdw10 = cdw10, .cdw11 = cdw11, .cdw12 = cdw12,
	};
	int ret = ioctl(fd, NVME_IOCTL_ADMIN_CMD, &cmd);

	if (result)
		*result = cmd.result;
	return ret < 0 ? -errno : ret & ~SC_MORE;
}

/* Directive Receive of @len bytes (NUMD from it; 0 for none). */
static int dir_recv(int fd, __u32 nsid, int dtype, int doper, int dspec,
		    void *data, __u32 len, __u32 cdw12, __u32 *result)
{
	return admin(fd, 0x1a, nsid, data, len, len ? len / 4 - 1 : 0,
		     doper | dtype << 8 | dspec << 16, cdw12, result);
}

static int dir_send(int fd, __u32 nsid, int dtype, int doper, int dspec,
		    __u32 cdw12)
{
	return admin(fd, 0x19, nsid, NULL, 0, 0,
		     doper | dtype << 8 | dspec << 16, cdw12, NULL);
}

static int enable_streams(int fd, __u32 nsid, int on)
{
	return dir_send(fd, nsid, DIR_IDENTIFY, 1, 0, DIR_STREAMS << 8 | on);
}

struct streams_params {
	__u16 msl, nssa, nsso;
	__u8 nssc, rsvd[9];
	__u32 sws;
	__u16 sgs, nsa, nso;
	__u8 rsvd2[6];
};

static int streams_params(int fd, struct streams_params *p)
{
	return dir_recv(fd, 1, DIR_STREAMS, 1, 0, p, sizeof(*p), 0, NULL);
}

/* Byte 0 of the supported and enabled bitmaps of the Identify directive. */
static int identify_dirs(int fd, __u32 nsid, int *supported, int *enabled)
{
	__u8 buf[4096];
	int ret = dir_recv(fd, nsid, DIR_IDENTIFY, 1, 0, buf, sizeof(buf), 0,
			   NULL);

	*supported = buf[0];
	*enabled = buf[32];
	return ret;
}

/* Write 4 KiB of the pattern for @id at block (4 KiB) @blk, stream @dspec. */
static int write_dir(int fd, int blk, int dtype, int dspec, int id)
{
	struct nvme_passthru_cmd cmd = {
		.opcode = 0x01, .nsid = 1, .data_len = 4096,
		.cdw10 = blk * 8, .cdw12 = 7 | dtype << 20,
		.cdw13 = dspec << 16,
	};
	void *buf;
	int ret;

	if (posix_memalign(&buf, 4096, 4096))
		return -ENOMEM;
	fill(buf, 4096, blk * 4096, id);
	cmd.addr = (uintptr_t)buf;
	ret = ioctl(fd, NVME_IOCTL_IO_CMD, &cmd);
	free(buf);
	return ret < 0 ? -errno : ret & ~SC_MORE;
}

/* The host block device and controller of subsystem @nqn, once there. */
static int find_host(const char *nqn, char *dev, size_t devlen, char *ctrl,
		     size_t ctrllen)
{
	char path[512], buf[256];
	struct dirent *d;
	int tries, found = 0;
	DIR *dir;

	for (tries = 0; tries < 100 && found != 3; tries++, usleep(50000)) {
		found = 0;
		dir = opendir("/sys/block");
		while (dir && (d = readdir(dir))) {
			/* Not the hidden disks of the paths under it. */
			snprintf(path, sizeof(path), "/sys/block/%s/hidden",
				 d->d_name);
			if (strncmp(d->d_name, "nvme", 4) ||
			    (read_file(path, buf, sizeof(buf)) > 0 &&
			     !strcmp(buf, "1")))
				continue;
			snprintf(path, sizeof(path),
				 "/sys/block/%s/device/subsysnqn", d->d_name);
			if (read_file(path, buf, sizeof(buf)) > 0 &&
			    !strcmp(buf, nqn)) {
				snprintf(dev, devlen, "/dev/%s", d->d_name);
				found |= 1;
			}
		}
		if (dir)
			closedir(dir);
		dir = opendir("/sys/class/nvme");
		while (dir && (d = readdir(dir))) {
			snprintf(path, sizeof(path),
				 "/sys/class/nvme/%s/subsysnqn", d->d_name);
			if (read_file(path, buf, sizeof(buf)) > 0 &&
			    !strcmp(buf, nqn)) {
				snprintf(ctrl, ctrllen, "%s", d->d_name);
				found |= 2;
			}
		}
		if (dir)
			closedir(dir);
	}
	return found == 3 && !access(dev, F_OK) ? 0 : -1;
}

/* Remove what a test made, or what an earlier run left: errors ignored. */
static void nvmet_cleanup(void)
{
	int i;

	for (i = 0; i < 3 && !system("nvme disconnect -n " NQN
				    " 2>/dev/null | grep -q ' [1-9] controller'");
	     i++)
		;
	unlink(PORT_DIR "/subsystems/" NQN);
	rmdir(PORT_DIR);
	write_attr(NS_DIR, "enable", "0");
	rmdir(NS_DIR);
	rmdir(NQN_DIR);
	nullb_remove(NULLB "/" BACKING);
}

/*
 * The subsystem NQN with namespace 1 on a null_blk device, @streams
 * streams, on a port of @transport; the host connected to it.
 */
static void nvmet_up(struct __test_metadata *_metadata, struct host *self,
		     const char *transport, int streams)
{
	char path[300], buf[64];

	if (access(NULLB, F_OK) || access(NVMET, F_OK))
		SKIP(return, "no null_blk or nvmet configfs");
	if (system("command -v nvme >/dev/null"))
		SKIP(return, "no nvme-cli");
	nvmet_cleanup();
	ASSERT_EQ(0, nullb_create(BACKING, 64, 8, 0, self->nullb,
				  sizeof(self->nullb), path, sizeof(path)));

	ASSERT_EQ(0, mkdir(NQN_DIR, 0755));
	ASSERT_EQ(0, write_attr(NQN_DIR, "attr_allow_any_host", "1"));
	snprintf(self->ns, sizeof(self->ns), "%s", NS_DIR);
	ASSERT_EQ(0, mkdir(NS_DIR, 0755));
	ASSERT_EQ(0, write_attr(NS_DIR, "device_path", path));
	snprintf(buf, sizeof(buf), "%d", streams);
	ASSERT_EQ(0, write_attr(NS_DIR, "streams", buf));
	ASSERT_EQ(0, write_attr(NS_DIR, "enable", "1"));

	ASSERT_EQ(0, mkdir(PORT_DIR, 0755));
	ASSERT_EQ(0, write_attr(PORT_DIR, "addr_trtype", transport));
	if (!strcmp(transport, "tcp")) {
		ASSERT_EQ(0, write_attr(PORT_DIR, "addr_adrfam", "ipv4"));
		ASSERT_EQ(0, write_attr(PORT_DIR, "addr_traddr", "127.0.0.1"));
		ASSERT_EQ(0, write_attr(PORT_DIR, "addr_trsvcid", TCP_PORT));
	}
	ASSERT_EQ(0, symlink(NQN_DIR, PORT_DIR "/subsystems/" NQN));

	if (!strcmp(transport, "tcp")) {
		ASSERT_EQ(0, system("nvme connect -t tcp -a 127.0.0.1 -s "
				    TCP_PORT " -n " NQN " >/dev/null"));
	} else {
		ASSERT_EQ(0, system("nvme connect -t loop -n " NQN
				    " >/dev/null"));
	}
	ASSERT_EQ(0, find_host(NQN, self->dev, sizeof(self->dev),
			       self->ctrl, sizeof(self->ctrl)));
	self->fd = open(self->dev, O_RDWR);
	ASSERT_LE(0, self->fd);
}

FIXTURE_SETUP(nvmet)
{
	nvmet_up(_metadata, &self->h, variant->transport, MSL);
}

FIXTURE_TEARDOWN(nvmet)
{
	if (self->h.fd > 0)
		close(self->h.fd);
	nvmet_cleanup();
}

FIXTURE_SETUP(plain)
{
	nvmet_up(_metadata, &self->h, "loop", 0);
}

FIXTURE_TEARDOWN(plain)
{
	if (self->h.fd > 0)
		close(self->h.fd);
	nvmet_cleanup();
}

/*
 * A subsystem whose namespaces have no streams behaves as before: no
 * Directives in OACS or the effects log, Directive commands are invalid
 * opcodes, and DTYPE in a write is ignored as it always was.
 */
TEST_F(plain, no_directives)
{
	__u8 id[4096], log[4096];
	__u32 effects_send, effects_recv;
	struct stats st;
	int sup, en;

	ASSERT_EQ(0, admin(self->h.fd, 0x06, 0, id, sizeof(id), 1, 0, 0, NULL));
	EXPECT_EQ(0, id[256] & 0x20) TH_LOG("OACS %#x", id[256]);
	ASSERT_EQ(0, admin(self->h.fd, 0x02, 0xffffffff, log, sizeof(log),
			   0x05 | (sizeof(log) / 4 - 1) << 16, 0, 0, NULL));
	memcpy(&effects_send, log + 0x19 * 4, 4);
	memcpy(&effects_recv, log + 0x1a * 4, 4);
	EXPECT_EQ(0, effects_send);
	EXPECT_EQ(0, effects_recv);
	EXPECT_EQ(SC_INVALID_OPCODE, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(SC_INVALID_OPCODE, enable_streams(self->h.fd, 1, 1));
	EXPECT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 1, 1));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(-1, only(&st, (const int []){ -1 }));
	EXPECT_EQ(0, check_at(self->h.dev, 0, 4096, 1));
}

/* What Identify Controller, the effects log and the directives show. */
TEST_F(nvmet, discovery)
{
	__u8 id[4096], log[4096];
	__u32 effects_send, effects_recv;
	struct streams_params p;
	int sup, en;

	ASSERT_EQ(0, admin(self->h.fd, 0x06, 0, id, sizeof(id), 1, 0, 0, NULL));
	EXPECT_EQ(0x20, id[256] & 0x20) TH_LOG("OACS %#x", id[256]);
	/* Commands Supported and Effects log: ACS[19h], ACS[1Ah]. */
	ASSERT_EQ(0, admin(self->h.fd, 0x02, 0xffffffff, log, sizeof(log),
			   0x05 | (sizeof(log) / 4 - 1) << 16, 0, 0, NULL));
	memcpy(&effects_send, log + 0x19 * 4, 4);
	memcpy(&effects_recv, log + 0x1a * 4, 4);
	EXPECT_EQ(1, effects_send & 1);	/* CSUPP */
	EXPECT_EQ(1, effects_recv & 1);

	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, sup);	/* Identify and Streams */
	EXPECT_EQ(1, en);	/* Identify only, until Streams is enabled */
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.msl);
	EXPECT_EQ(MSL, p.nssa);
	EXPECT_EQ(0, p.nsso);
	EXPECT_EQ(8, p.sws);	/* 4 KiB in 512-byte blocks */
	EXPECT_EQ(256, p.sgs);
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(0, p.nso);
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, en);
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 0));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(1, en);
	/* NSID FFFFFFFFh: all namespaces. */
	ASSERT_EQ(0, enable_streams(self->h.fd, 0xffffffff, 1));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 0xffffffff, &sup, &en));
	EXPECT_EQ(3, en);
}

/* nvme-cli shows and changes what the target holds. */
TEST_F(nvmet, nvme_cli)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "nvme dir-receive %s -D 0 -O 1 -H | grep -q 'Stream Directive *: disabled'",
		 self->h.dev);
	EXPECT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "nvme dir-send %s -D 0 -O 1 -T 1 -e 1 >/dev/null",
		 self->h.dev);
	ASSERT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd),
		 "nvme dir-receive %s -D 0 -O 1 -H | grep -q 'Stream Directive *: enabled'",
		 self->h.dev);
	EXPECT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd),
		 "nvme dir-receive %s -D 1 -O 1 -H | grep -q 'Max Streams Limit *(MSL): %d$'",
		 self->h.dev, MSL);
	EXPECT_EQ(0, system(cmd));

	ASSERT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 2, 2));
	ASSERT_EQ(0, write_dir(self->h.fd, 1, DIR_STREAMS, 4, 4));
	snprintf(cmd, sizeof(cmd),
		 "nvme dir-receive %s -D 1 -O 2 -H | tr -s ' \\t' ' ' | grep -c '^ Stream Identifier .*: [24]$' | grep -qx 2",
		 self->h.dev);
	EXPECT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "nvme dir-send %s -D 1 -O 1 -S 2 >/dev/null",
		 self->h.dev);
	ASSERT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd),
		 "nvme dir-receive %s -D 1 -O 2 -H | grep -q 'Open Stream Count *: 1$'",
		 self->h.dev);
	EXPECT_EQ(0, system(cmd));
}

/*
 * Writes with the Streams directive land in their stream at the target
 * and at the null_blk device behind it; Get Status lists the streams
 * they opened; the data reads back.
 */
TEST_F(nvmet, writes_per_stream)
{
	static const int dspec[] = { 0, 1, 2, 3, 4, 1, 3, 0 };
	struct stats target, backing;
	__u16 status[8] = { 0 };
	struct streams_params p;
	int i;

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, write_dir(self->h.fd, i, dspec[i] ? DIR_STREAMS : 0,
				       dspec[i], dspec[i]));

	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	for (i = 0; i <= MSL; i++) {
		int n = i == 0 || i == 1 || i == 3 ? 2 : 1;

		EXPECT_EQ(n, target.requests[i]) TH_LOG("stream %d", i);
		EXPECT_EQ(n * 8, target.sectors[i]) TH_LOG("stream %d", i);
		EXPECT_EQ(n * 8, backing.sectors[i]) TH_LOG("stream %d", i);
	}
	EXPECT_EQ(-1, only(&target, (const int []){ 0, 1, 2, 3, 4, -1 }));
	EXPECT_EQ(-1, only(&backing, (const int []){ 0, 1, 2, 3, 4, -1 }));

	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 2, 0, status,
			      sizeof(status), 0, NULL));
	EXPECT_EQ(4, status[0]);
	for (i = 1; i <= 4; i++)
		EXPECT_EQ(i, status[i]);
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(4, p.nso);
	EXPECT_EQ(4, p.nsso);
	/* Release Identifier closes a stream. */
	ASSERT_EQ(0, dir_send(self->h.fd, 1, DIR_STREAMS, 1, 3, 0));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 2, 0, status,
			      sizeof(status), 0, NULL));
	EXPECT_EQ(3, status[0]);
	EXPECT_EQ(4, status[3]);

	for (i = 0; i < 8; i++)
		EXPECT_EQ(0, check_at(self->h.dev, i * 4096, 4096, dspec[i]));
}

/* Allocate and release stream resources; Allocation Failed when none. */
TEST_F(nvmet, resources)
{
	struct streams_params p;
	__u32 granted = ~0U;

	/* Streams not enabled yet. */
	EXPECT_EQ(SC_INVALID_FIELD, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0,
					     NULL, 0, 1, NULL));
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 3,
			      &granted));
	EXPECT_EQ(3, granted);
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 3,
			      &granted));
	EXPECT_EQ(1, granted);	/* what was left */
	EXPECT_EQ(SC_STREAM_ALLOC_FAILED,
		  dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 1, NULL));
	EXPECT_EQ(SC_INVALID_FIELD,	/* NSR 0 */
		  dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 0, NULL));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.nsa);
	EXPECT_EQ(0, p.nssa);
	ASSERT_EQ(0, dir_send(self->h.fd, 1, DIR_STREAMS, 2, 0, 0));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(MSL, p.nssa);
}

/* Every invalid field gets its status, and nothing is counted. */
TEST_F(nvmet, invalid_fields)
{
	struct stats st;
	__u8 buf[4096];

	/* Writes: Streams not enabled, DSPEC above MSL, unknown DTYPE. */
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, DIR_STREAMS, 1, 1));
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	EXPECT_EQ(SC_INVALID_FIELD,
		  write_dir(self->h.fd, 0, DIR_STREAMS, MSL + 1, 1));
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, 2, 1, 1));
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, 0xf, 1, 1));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(-1, only(&st, (const int []){ -1 }));

	/* Directive Send: operation, types, stream ID, namespace. */
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_IDENTIFY, 2, 0,
					     DIR_STREAMS << 8 | 1));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_IDENTIFY, 1, 0,
					     DIR_IDENTIFY << 8 | 1));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_IDENTIFY, 1, 0,
					     2 << 8 | 1));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_STREAMS, 3, 0, 0));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_STREAMS, 1, 0, 0));
	EXPECT_EQ(SC_INVALID_FIELD,
		  dir_send(self->h.fd, 1, DIR_STREAMS, 1, MSL + 1, 0));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, 2, 1, 0, 0));
	EXPECT_EQ(SC_INVALID_NS, dir_send(self->h.fd, 2, DIR_STREAMS, 2, 0, 0));
	EXPECT_EQ(SC_INVALID_NS, dir_send(self->h.fd, 0, DIR_STREAMS, 2, 0, 0));
	EXPECT_EQ(SC_INVALID_NS,
		  dir_send(self->h.fd, 0xffffffff, DIR_STREAMS, 2, 0, 0));

	/* Directive Receive: operation, type, namespace. */
	EXPECT_EQ(SC_INVALID_FIELD, dir_recv(self->h.fd, 1, DIR_IDENTIFY, 2, 0,
					     buf, sizeof(buf), 0, NULL));
	EXPECT_EQ(SC_INVALID_FIELD, dir_recv(self->h.fd, 1, DIR_STREAMS, 4, 0,
					     buf, 32, 0, NULL));
	EXPECT_EQ(SC_INVALID_FIELD, dir_recv(self->h.fd, 1, 3, 1, 0, buf, 32, 0,
					     NULL));
	EXPECT_EQ(SC_INVALID_NS, dir_recv(self->h.fd, 9, DIR_STREAMS, 1, 0, buf,
					  32, 0, NULL));
}

/* A controller reset ends what the host had enabled and allocated. */
TEST_F(nvmet, reset_controller)
{
	char dir[400], path[512];
	struct streams_params p;
	int sup, en, fd;

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 2,
			      NULL));
	ASSERT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 1, 1));

	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", self->h.ctrl);
	ASSERT_EQ(0, write_attr(dir, "reset_controller", "1"));
	snprintf(path, sizeof(path), "%s/state", dir);
	for (sup = 0; sup < 100; sup++, usleep(50000)) {
		char state[32];

		if (read_file(path, state, sizeof(state)) > 0 &&
		    !strcmp(state, "live"))
			break;
	}
	fd = open(self->h.dev, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, identify_dirs(fd, 1, &sup, &en));
	EXPECT_EQ(1, en);
	ASSERT_EQ(0, streams_params(fd, &p));
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(0, p.nso);
	EXPECT_EQ(MSL, p.nssa);
	EXPECT_EQ(0, p.nsso);
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(fd, 0, DIR_STREAMS, 1, 1));
	close(fd);
}

/*
 * Random Directive Send and Receive commands: each gets a status, and
 * the target still serves I/O and directives correctly afterwards.
 */
TEST_F_TIMEOUT(nvmet, random_directives, 600)
{
	static const __u32 nsids[] = { 1, 0, 2, 0xffffffff, 1, 1 };
	__u8 *buf = malloc(1 << 16);
	struct streams_params p;
	int i, errors = 0, ok = 0;
	struct stats st;

	ASSERT_NE(NULL, buf);
	srand(1);
	for (i = 0; i < 10000; i++) {
		/* Mostly valid types and operations, so that most get far. */
		__u32 dtype = rand() % 4 ? rand() % 3 : rand() % 256;
		__u32 doper = rand() % 4 ? rand() % 4 : rand() % 256;
		__u32 dspec = rand() % 4 ? rand() % 8 : rand() % 65536;
		__u32 len = (rand() % 2) * (rand() % 4 ? 32 : 4096);
		__u32 numd = rand() % 2 ? (len ? len / 4 - 1 : 0) :
				rand() % 4 ? rand() % 1024 : rand();
		__u32 cdw12 = rand() % 3 ? rand() % 512 : rand();
		int send = rand() % 2, ret;

		/* A Directive Send carries no data in Identify or Streams. */
		if (send && rand() % 8)
			len = 0;
		ret = admin(self->h.fd, send ? 0x19 : 0x1a, nsids[rand() % 6],
			    buf, len, numd, doper | dtype << 8 | dspec << 16,
			    cdw12, NULL);
		ASSERT_LE(0, ret) TH_LOG("command %d: %s", i, strerror(-ret));
		if (ret)
			errors++;
		else
			ok++;
	}
	TH_LOG("10000 random directive commands: %d succeeded, %d failed",
	       ok, errors);
	free(buf);

	/* Still correct: directives, stream writes, data. */
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.msl);
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_dir(self->h.fd, 5, DIR_STREAMS, 2, 2));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(8, st.sectors[2]);
	EXPECT_EQ(0, check_at(self->h.dev, 5 * 4096, 4096, 2));
}

TEST_HARNESS_MAIN
