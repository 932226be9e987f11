// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe Streams, over the loop and TCP transports of the NVMe target.
 *
 * The target (fixture nvmet, the host driver leaving streams alone): a
 * namespace backed by a null_blk device with streams, its Identify and
 * Streams directives driven with admin commands (and nvme-cli), writes
 * with the Streams directive counted per stream at the target and at the
 * backing device, every invalid field answered with its status, the state
 * gone after a controller reset, and random directive commands that leave
 * the target working.  A namespace without streams changes nothing.
 *
 * The host (fixture host): the NVMe driver enables the streams, gets
 * them, and sends the stream ID of each write as the Streams directive,
 * as the target, the backing device and the tracepoints on both sides
 * see; lifetime hints, nvme_core.streams=0, a reset while writing and a
 * host granted no stream.  QEMU's NVMe disk, with no Directives, gets no
 * directive command.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
#include <linux/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "fs.h"

#define NVMET		"/sys/kernel/config/nvmet"
#define NQN		"streamid-test"
#define NQN_DIR		NVMET "/subsystems/" NQN
#define NS_DIR		NQN_DIR "/namespaces/1"
#define NS2_DIR		NQN_DIR "/namespaces/2"
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
	write_attr(NS2_DIR, "enable", "0");
	rmdir(NS2_DIR);
	rmdir(NQN_DIR);
	nullb_remove(NULLB "/" BACKING);
	nullb_remove(NULLB "/" BACKING "2");
	write_attr("/sys/module/nvme_core/parameters", "streams", "Y");
}

/*
 * The subsystem NQN with namespace 1 on a null_blk device of @mib MiB
 * and @streams streams, on a port of @transport; the host connected to
 * it, using the streams itself if @host_streams, else leaving them to
 * the test.
 */
static void nvmet_up(struct __test_metadata *_metadata, struct host *self,
		     const char *transport, int streams, bool host_streams,
		     int mib)
{
	char path[300], buf[64];

	if (access(NULLB, F_OK) || access(NVMET, F_OK))
		SKIP(return, "no null_blk or nvmet configfs");
	if (system("command -v nvme >/dev/null"))
		SKIP(return, "no nvme-cli");
	nvmet_cleanup();
	ASSERT_EQ(0, nullb_create(BACKING, mib, 8, 0, self->nullb,
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

	ASSERT_EQ(0, write_attr("/sys/module/nvme_core/parameters", "streams",
				host_streams ? "Y" : "N"));

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

static long long sysfs_num(const char *dir, const char *name)
{
	char path[600], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return read_file(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

/* max_streams of the host's namespace disk. */
static long long max_streams(const char *dev)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "/sys/block/%s/queue", dev + 5);
	return sysfs_num(dir, "max_streams");
}

/* Reset the host's controller and wait until it and its disk are back. */
static int reset_and_wait(const char *ctrl, const char *dev, long long want)
{
	char dir[400], path[512], state[32];
	int i;

	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", ctrl);
	if (write_attr(dir, "reset_controller", "1"))
		return -1;
	snprintf(path, sizeof(path), "%s/state", dir);
	for (i = 0; i < 200; i++, usleep(50000))
		if (read_file(path, state, sizeof(state)) > 0 &&
		    !strcmp(state, "live") && max_streams(dev) == want)
			return 0;
	return -1;
}

FIXTURE_SETUP(nvmet)
{
	nvmet_up(_metadata, &self->h, variant->transport, MSL, false, 64);
}

FIXTURE_TEARDOWN(nvmet)
{
	if (self->h.fd > 0)
		close(self->h.fd);
	nvmet_cleanup();
}

FIXTURE_SETUP(plain)
{
	nvmet_up(_metadata, &self->h, "loop", 0, true, 64);
}

FIXTURE_TEARDOWN(plain)
{
	if (self->h.fd > 0)
		close(self->h.fd);
	nvmet_cleanup();
}

/*
 * What the controller says of Directives: the OACS bit (Identify
 * Controller) and the effects log entries (ACS[19h] and ACS[1Ah]) of
 * Directive Send and Receive; 0 on success.
 */
static int directive_support(int fd, int *oacs, __u32 *send, __u32 *recv)
{
	__u8 buf[4096];
	int ret;

	ret = admin(fd, 0x06, 0, buf, sizeof(buf), 1, 0, 0, NULL);
	if (ret)
		return ret;
	*oacs = !!(buf[256] & 0x20);
	ret = admin(fd, 0x02, 0xffffffff, buf, sizeof(buf),
		    0x05 | (sizeof(buf) / 4 - 1) << 16, 0, 0, NULL);
	memcpy(send, buf + 0x19 * 4, 4);
	memcpy(recv, buf + 0x1a * 4, 4);
	return ret;
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
	EXPECT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 1, 1));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(-1, only(&st, (const int []){ -1 }));
	EXPECT_EQ(0, check_at(self->h.dev, 0, 4096, 1));
}

/* What Identify Controller, the effects log and the directives show. */
TEST_F(nvmet, discovery)
{
	__u32 effects_send, effects_recv;
	struct streams_params p;
	int oacs, sup, en;

	ASSERT_EQ(0, directive_support(self->h.fd, &oacs, &effects_send,
				       &effects_recv));
	EXPECT_EQ(1, oacs);
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

/* Run "nvme @cmd @dev @rest" in a shell; its status. */
static int cli(const char *cmd, const char *dev, const char *rest)
{
	char line[512];

	snprintf(line, sizeof(line), "nvme %s %s %s", cmd, dev, rest);
	return system(line);
}

/* nvme-cli shows and changes what the target holds. */
TEST_F(nvmet, nvme_cli)
{
	const char *dev = self->h.dev;

	EXPECT_EQ(0, cli("dir-receive", dev,
			 "-D 0 -O 1 -H | grep -q 'Stream Directive *: disabled'"));
	ASSERT_EQ(0, cli("dir-send", dev, "-D 0 -O 1 -T 1 -e 1 >/dev/null"));
	EXPECT_EQ(0, cli("dir-receive", dev,
			 "-D 0 -O 1 -H | grep -q 'Stream Directive *: enabled'"));
	EXPECT_EQ(0, cli("dir-receive", dev,
			 "-D 1 -O 1 -H | grep -q 'Max Streams Limit *(MSL): 4$'"));

	ASSERT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 2, 2));
	ASSERT_EQ(0, write_dir(self->h.fd, 1, DIR_STREAMS, 4, 4));
	EXPECT_EQ(0, cli("dir-receive", dev,
			 "-D 1 -O 2 -H | grep -c 'Stream Identifier .*: [24]$' | grep -qx 2"));
	ASSERT_EQ(0, cli("dir-send", dev, "-D 1 -O 1 -S 2 >/dev/null"));
	EXPECT_EQ(0, cli("dir-receive", dev,
			 "-D 1 -O 2 -H | grep -q 'Open Stream Count *: 1$'"));
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
	struct streams_params p;
	int sup, en, fd;

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 2,
			      NULL));
	ASSERT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 1, 1));

	/* The host leaves the streams alone: its disk has none. */
	ASSERT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, 0));
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

/* --- The host: the NVMe driver uses the target's streams. */

#define TRACING		"/sys/kernel/tracing"
#define SETUP_CMD	TRACING "/events/nvme/nvme_setup_cmd"
#define COMPLETE_RQ	TRACING "/events/nvme/nvme_complete_rq"
#define HOST_MSL	8
#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT	(1024 + 12)
#endif

/* Empty the trace buffer: opening it for writing with O_TRUNC does. */
static int trace_clear(void)
{
	int fd = open(TRACING "/trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

FIXTURE(host) {
	struct host h;
};

FIXTURE_VARIANT(host) {
	const char *transport;
};

FIXTURE_VARIANT_ADD(host, loop) { .transport = "loop" };
FIXTURE_VARIANT_ADD(host, tcp) { .transport = "tcp" };

/* A namespace of HOST_MSL streams. */
FIXTURE_SETUP(host)
{
	nvmet_up(_metadata, &self->h, variant->transport, HOST_MSL, true, 64);
}

FIXTURE_TEARDOWN(host)
{
	if (self->h.fd > 0)
		close(self->h.fd);
	nvmet_cleanup();
	write_attr(TRACING "/events/nvme/nvme_setup_cmd", "enable", "0");
	write_attr(TRACING "/events/nvmet/nvmet_req_init", "enable", "0");
}

/* The host enables Streams, gets every stream and says so in max_streams. */
TEST_F(host, discovers_streams)
{
	struct streams_params p;
	char path[512];
	int sup, en;

	EXPECT_EQ(HOST_MSL, max_streams(self->h.dev));
	/* The path's disk has the same. */
	snprintf(path, sizeof(path), "/sys/class/nvme/%s", self->h.ctrl);
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, en);
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(HOST_MSL, p.nsa);
	EXPECT_EQ(0, p.nssa);
}

/*
 * fadvise-tagged writes to the NVMe disk, O_DIRECT from several files and
 * buffered, arrive in their streams at the target and at the null_blk
 * device behind it; IDs above max_streams fold to (id - 1) % 8 + 1.
 */
TEST_F(host, tagged_writes)
{
	static const struct { int id, stream; size_t len; } w[] = {
		{ 1, 1, 65536 }, { 2, 2, 8192 }, { 3, 3, 12288 },
		{ 0, 0, 8192 }, { 10, 2, 4096 }, { 200, 8, 4096 },
		{ 8, 8, 16384 },
	};
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats target, backing;
	off_t off = 0;
	int i, fd;

	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, w[i].id);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, write_at(fd, off, w[i].len, w[i].id));
		close(fd);
		want[w[i].stream] += w[i].len / 512;
		off += w[i].len;
	}
	/* Buffered: written back with the ID of the disk's inode. */
	fd = open_stream(self->h.dev, O_WRONLY, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 1 << 20, 65536, 3));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	want[3] += 128;

	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	for (i = 0; i <= HOST_MSL; i++) {
		EXPECT_EQ(want[i], target.sectors[i]) TH_LOG("stream %d", i);
		EXPECT_EQ(want[i], backing.sectors[i]) TH_LOG("stream %d", i);
	}
	EXPECT_EQ(-1, only(&target, (const int []){ 0, 1, 2, 3, 8, -1 }));

	for (off = 0, i = 0; i < ARRAY_SIZE(w); off += w[i].len, i++)
		EXPECT_EQ(0, check_at(self->h.dev, off, w[i].len, w[i].id));
	EXPECT_EQ(0, check_at(self->h.dev, 1 << 20, 65536, 3));
}

/*
 * On the wire, at the host (nvme_setup_cmd) and at the target
 * (nvmet_req_init): a tagged write has DTYPE 1 (ctrl 0x10) and its stream
 * in DSPEC (dsmgmt >> 16); an untagged write, reads, flushes and
 * discards carry no directive.
 */
TEST_F(host, on_the_wire)
{
	static const char *const events[] = {
		TRACING "/events/nvme/nvme_setup_cmd",
		TRACING "/events/nvmet/nvmet_req_init",
	};
	unsigned long long range[2] = { 2 << 20, 1 << 20 };
	int i, fd, writes[2][2] = { { 0 } }, others[2] = { 0 }, bad = 0;
	char *buf = malloc(1 << 20), *line;
	void *data;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, write_attr(events[i], "enable", "1"));

	fd = open_stream(self->h.dev, O_RDWR | O_DIRECT, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 5));
	close(fd);
	fd = open_stream(self->h.dev, O_RDWR | O_DIRECT, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 4096, 4096, 0));
	ASSERT_EQ(0, posix_memalign(&data, 4096, 4096));
	ASSERT_EQ(4096, pread(fd, data, 4096, 0));
	free(data);
	ASSERT_EQ(0, fsync(fd));
	EXPECT_EQ(0, ioctl(fd, BLKDISCARD, range));
	close(fd);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, write_attr(events[i], "enable", "0"));

	ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		int target = !!strstr(line, "nvmet_req_init");
		unsigned int ctrl = 0, dsmgmt = 0;
		char *cmd = strstr(line, "cmd=(nvme_cmd_");
		char *f = cmd ? strstr(cmd, "ctrl=0x") : NULL;

		if (!cmd)
			continue;
		if (f)
			sscanf(f, "ctrl=0x%x, dsmgmt=%u", &ctrl, &dsmgmt);
		/* "nvme_cmd_write " at the host, "nvme_cmd_write," at the target */
		if (!strncmp(cmd, "cmd=(nvme_cmd_write", 19) &&
		    (cmd[19] == ' ' || cmd[19] == ',')) {
			if (ctrl == 0x10 && dsmgmt >> 16 == 5)
				writes[target][1]++;
			else if (!(ctrl & 0xf0) && !(dsmgmt >> 16))
				writes[target][0]++;
			else
				bad++;
		} else {
			/* read, flush, dsm: no directive */
			others[target]++;
			if ((ctrl & 0xf0) || (dsmgmt >> 16))
				bad++;
		}
	}
	free(buf);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(1, writes[i][1]) TH_LOG("%s", events[i]);
		EXPECT_EQ(1, writes[i][0]) TH_LOG("%s", events[i]);
		EXPECT_LE(2, others[i]) TH_LOG("%s", events[i]);
	}
	EXPECT_EQ(0, bad);
}

/*
 * Lifetime hints (F_SET_RW_HINT, fio --write_hint) on writes without a
 * stream ID go to the top four streams: SHORT 8, MEDIUM 7, LONG 6,
 * EXTREME 5; a stream ID, where set, wins.
 */
TEST_F(host, write_hints)
{
	static const struct { __u64 hint; int id, stream; } w[] = {
		{ 2, 0, 8 }, { 3, 0, 7 }, { 4, 0, 6 }, { 5, 0, 5 },
		{ 1, 0, 0 }, { 2, 1, 1 },
	};
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats st;
	char cmd[512];
	__u64 none = 0;
	int i, fd;

	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, w[i].id);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &w[i].hint));
		ASSERT_EQ(0, write_at(fd, i * 4096, 4096, 0));
		ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &none));
		close(fd);
		want[w[i].stream] += 8;
	}
	/*
	 * fio sets the hint with F_SET_RW_HINT for buffered I/O (for
	 * direct I/O it uses F_SET_FILE_RW_HINT, which is gone); the disk's
	 * inode must have no stream ID, which would win.
	 */
	fd = open(self->h.dev, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_STREAMID));
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "fio --name=hint --filename=%s --rw=write --bs=4k --size=64k --offset=1m --end_fsync=1 --write_hint=medium --output=/dev/null",
		 self->h.dev);
	ASSERT_EQ(0, system(cmd));
	want[7] += 128;

	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	for (i = 0; i <= HOST_MSL; i++)
		EXPECT_EQ(want[i], st.sectors[i]) TH_LOG("stream %d", i);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 1, 5, 6, 7, 8, -1 }));
}

/*
 * A write tagged with stream 2, on a host that has no streams, reaches
 * the target as an ordinary write, and reads back.
 */
static void untagged_at_target(struct __test_metadata *_metadata,
			       struct host *h)
{
	struct stats st;
	int fd;

	ASSERT_EQ(0, write_attr(h->ns, "stream_stats", "0"));
	fd = open_stream(h->dev, O_WRONLY | O_DIRECT, 2);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 2));
	close(fd);
	ASSERT_EQ(0, read_stats(h->ns, &st));
	EXPECT_EQ(8, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));
	EXPECT_EQ(0, check_at(h->dev, 0, 4096, 2));
}

/*
 * nvme_core.streams=0: after a reset the host sends no directive command
 * and the disk has no streams; tagged writes arrive untagged.
 */
TEST_F(host, streams_off)
{
	char *buf = malloc(1 << 20);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, write_attr("/sys/module/nvme_core/parameters", "streams",
				"N"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(TRACING "/events/nvme/nvme_setup_cmd",
				"enable", "1"));
	ASSERT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, 0));
	ASSERT_EQ(0, write_attr(TRACING "/events/nvme/nvme_setup_cmd",
				"enable", "0"));
	ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
	EXPECT_NE(NULL, strstr(buf, "nvme_admin_identify"));
	EXPECT_EQ(NULL, strstr(buf, "nvme_admin_directive"));
	free(buf);

	untagged_at_target(_metadata, &self->h);
}

/*
 * A controller reset in the middle of tagged writing: the streams are back
 * afterwards, no write is lost or lands in another stream, the data reads
 * back.
 */
TEST_F(host, reset_while_writing)
{
	const int blocks = 2048;	/* 8 MiB of 4 KiB writes */
	struct stats st;
	int i, status;
	pid_t child;

	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		int fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 3);

		for (i = 0; fd >= 0 && i < blocks; i++)
			if (write_at(fd, (off_t)i * 4096, 4096, 3))
				_exit(1);
		_exit(fd < 0);
	}
	usleep(300000);
	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_MSL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/*
	 * Writes in flight at the reset are sent again: the target may count
	 * a few twice, but all in stream 3.
	 */
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LE(blocks * 8, st.sectors[3]);
	EXPECT_GE(blocks * 8 + 64 * 8, st.sectors[3]);
	EXPECT_EQ(-1, only(&st, (const int []){ 3, -1 }));
	EXPECT_EQ(HOST_MSL, max_streams(self->h.dev));
	for (i = 0; i < blocks; i += 64)
		EXPECT_EQ(0, check_at(self->h.dev, (off_t)i * 4096, 64 * 4096,
				      3));
}

#define SECOND_HOST	"5e1f0000-0000-4000-8000-000000000002"

/* How many kernel log lines contain @needle. */
static int dmesg_count(const char *needle)
{
	char line[1024];
	FILE *f = popen("dmesg", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, needle);
	pclose(f);
	return n;
}

/*
 * A second host connected to the same namespace, after the first took
 * every stream: it is granted none, says so once, and works without
 * streams; the multipath disk over both paths offers the smaller count.
 */
TEST_F(host, second_host_gets_no_stream)
{
	struct stats st;
	char path[512];
	int fd, n;

	ASSERT_EQ(0, system("dmesg -C"));
	/* nvme-cli refuses a second connection: ask the kernel directly. */
	fd = open("/dev/nvme-fabrics", O_RDWR);
	ASSERT_LE(0, fd);
	n = snprintf(path, sizeof(path),
		     "transport=%s%s,nqn=%s,hostnqn=%s%s,hostid=%s",
		     variant->transport,
		     strcmp(variant->transport, "tcp") ? "" :
		     ",traddr=127.0.0.1,trsvcid=" TCP_PORT, NQN,
		     "nqn.2014-08.org.nvmexpress:uuid:", SECOND_HOST,
		     SECOND_HOST);
	ASSERT_EQ(n, write(fd, path, n));
	close(fd);
	/* The disk is the multipath head over both paths: it shows 0. */
	for (n = 0; n < 100 && max_streams(self->h.dev); n++)
		usleep(50000);
	EXPECT_EQ(0, max_streams(self->h.dev));
	EXPECT_EQ(1, dmesg_count("Streams not used: no stream granted"));

	/* Writes still work, tagged through the path that has streams. */
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 2);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 2));
	close(fd);
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(8, st.sectors[0] + st.sectors[2]);
	EXPECT_EQ(0, check_at(self->h.dev, 0, 4096, 2));
	/* The first path's own disk, nvme<subsystem>c<controller>n1, keeps its. */
	snprintf(path, sizeof(path), "/sys/block/nvme%dc%dn1/queue",
		 atoi(self->h.dev + strlen("/dev/nvme")),
		 atoi(self->h.ctrl + strlen("nvme")));
	EXPECT_EQ(HOST_MSL, sysfs_num(path, "max_streams")) TH_LOG("%s", path);
}

/*
 * Which completion, counted from 1, of the commands that the controller's
 * own fault injection sees (those of no disk: admin and connect commands)
 * answers the Enable directive of a reset.  Keep-alives, which can come
 * before the reset stops them, are not counted.  0 if there was none.
 */
static int enable_completion(const char *ctrl, const char *dev)
{
	char *buf = malloc(1 << 20), *line, name[64];
	int n = 0, found = 0, enable_cid = -1, ka_cid = -1;
	unsigned int id, qid, cid;

	if (!buf || trace_clear() || write_attr(SETUP_CMD, "enable", "1") ||
	    write_attr(COMPLETE_RQ, "enable", "1"))
		goto out;
	if (reset_and_wait(ctrl, dev, HOST_MSL))
		goto out;
	write_attr(SETUP_CMD, "enable", "0");
	write_attr(COMPLETE_RQ, "enable", "0");
	if (read_file(TRACING "/trace", buf, 1 << 20) <= 0)
		goto out;
	for (line = strtok(buf, "\n"); line && !found;
	     line = strtok(NULL, "\n")) {
		char *setup = strstr(line, "nvme_setup_cmd: ");
		char *done = strstr(line, "nvme_complete_rq: ");
		char *p = setup ? setup + 16 : done ? done + 18 : NULL;

		/* Commands of a disk have "disk=nvme0n1, " before the qid. */
		if (!p || sscanf(p, "nvme%u: qid=%u, cmdid=%u", &id, &qid,
				 &cid) != 3)
			continue;
		if (setup) {
			p = strstr(p, "cmd=(");
			if (qid || !p || sscanf(p, "cmd=(%63s", name) != 1)
				continue;
			if (!strcmp(name, "nvme_admin_directive_send"))
				enable_cid = cid;
			else if (!strcmp(name, "nvme_admin_keep_alive"))
				ka_cid = cid;
		} else if (!qid && (int)cid == ka_cid) {
			ka_cid = -1;
		} else {
			n++;
			found = !qid && (int)cid == enable_cid;
		}
	}
out:
	write_attr(SETUP_CMD, "enable", "0");
	write_attr(COMPLETE_RQ, "enable", "0");
	free(buf);
	return found ? n : 0;
}

/*
 * The controller fails the Enable directive of a reset (the host's fault
 * injection turns its completion into Invalid Field): the host says so
 * once, the disk has no streams, tagged writes go out without a
 * directive, and the next reset brings the streams back.
 */
TEST_F(host, enable_fails)
{
	char fi[400], space[16];
	int k;

	snprintf(fi, sizeof(fi), "/sys/kernel/debug/%s/fault_inject",
		 self->h.ctrl);
	if (access(fi, F_OK))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	k = enable_completion(self->h.ctrl, self->h.dev);
	ASSERT_LT(0, k);
	TH_LOG("Enable is completion %d of a reset", k);

	ASSERT_EQ(0, system("dmesg -C"));
	snprintf(space, sizeof(space), "%d", k);
	ASSERT_EQ(0, write_attr(fi, "space", space));
	ASSERT_EQ(0, write_attr(fi, "times", "1"));
	ASSERT_EQ(0, write_attr(fi, "status", "0x2"));
	/* Say that it fails, without the stack dump a kernel bug would have. */
	ASSERT_EQ(0, write_attr(fi, "verbose", "1"));
	ASSERT_EQ(0, write_attr(fi, "probability", "100"));
	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, 0));
	EXPECT_EQ(0, write_attr(fi, "probability", "0"));
	EXPECT_EQ(1, dmesg_count("Streams not used"));
	EXPECT_EQ(1, dmesg_count("Streams not used: enabling them failed"));
	EXPECT_EQ(0, max_streams(self->h.dev));

	untagged_at_target(_metadata, &self->h);

	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_MSL));
}

/*
 * A second namespace, without streams, in the same subsystem: its disk
 * has none, and the host takes that quietly.
 */
TEST_F(host, namespace_without_streams)
{
	char dir[300], dev[300], disk[300];
	int i;

	ASSERT_EQ(0, system("dmesg -C"));
	ASSERT_EQ(0, nullb_create(BACKING "2", 16, 8, 0, dir, sizeof(dir), dev,
				  sizeof(dev)));
	ASSERT_EQ(0, mkdir(NS2_DIR, 0755));
	ASSERT_EQ(0, write_attr(NS2_DIR, "device_path", dev));
	ASSERT_EQ(0, write_attr(NS2_DIR, "enable", "1"));
	/*
	 * The host learns of it from a Namespace Attribute Changed event;
	 * the disk's queue directory comes after its device node.
	 */
	snprintf(disk, sizeof(disk), "%.*s2", (int)strlen(self->h.dev) - 1,
		 self->h.dev);
	for (i = 0; i < 100 && max_streams(disk) < 0; i++)
		usleep(50000);
	EXPECT_EQ(0, max_streams(disk)) TH_LOG("%s", disk);
	EXPECT_EQ(HOST_MSL, max_streams(self->h.dev));
	EXPECT_EQ(0, dmesg_count("Streams not used"));
}

/*
 * QEMU's NVMe controller has no Directives: the host sends it no
 * directive command when it sets up the controller, its disk has no
 * streams, and a tagged write goes out as an ordinary write.
 */
/*
 * The file systems through the target: files with their own IDs written
 * at once land, all of each file's data, in their streams at the target;
 * on the wire the host's write commands carry those streams for exactly
 * as many blocks, and nothing of a file goes to another stream.
 */
#define FS_FILES	3
#define FS_MIB		4

FIXTURE(fs) {
	struct host h;
	struct fs_dirty dirty;
	char mnt[64];
};

FIXTURE_VARIANT(fs) {
	const struct fs_type *fs;
	enum fs_flush flush;
};

FIXTURE_VARIANT_ADD(fs, ext4_fsync) { &fs_ext4, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, ext4_sync) { &fs_ext4, FLUSH_SYNC };
FIXTURE_VARIANT_ADD(fs, ext4_background) { &fs_ext4, FLUSH_BACKGROUND };
FIXTURE_VARIANT_ADD(fs, ext4_direct) { &fs_ext4, FLUSH_DIRECT };
FIXTURE_VARIANT_ADD(fs, xfs_fsync) { &fs_xfs, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, xfs_sync) { &fs_xfs, FLUSH_SYNC };
FIXTURE_VARIANT_ADD(fs, xfs_background) { &fs_xfs, FLUSH_BACKGROUND };
FIXTURE_VARIANT_ADD(fs, xfs_direct) { &fs_xfs, FLUSH_DIRECT };
FIXTURE_VARIANT_ADD(fs, btrfs_fsync) { &fs_btrfs, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, btrfs_sync) { &fs_btrfs, FLUSH_SYNC };
FIXTURE_VARIANT_ADD(fs, btrfs_background) { &fs_btrfs, FLUSH_BACKGROUND };
FIXTURE_VARIANT_ADD(fs, btrfs_direct) { &fs_btrfs, FLUSH_DIRECT };

FIXTURE_SETUP(fs)
{
	nvmet_up(_metadata, &self->h, "loop", HOST_MSL, true, 512);
	close(self->h.fd);
	self->h.fd = -1;
	ASSERT_EQ(HOST_MSL, max_streams(self->h.dev));
	ASSERT_EQ(0, run(variant->fs->mkfs, self->h.dev));
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/nvmet_fs.%d", getpid());
	ASSERT_EQ(0, mkdir(self->mnt, 0755));
	ASSERT_EQ(0, fs_mount(variant->fs, self->h.dev, self->mnt, NULL));
	ASSERT_EQ(0, fs_dirty_save(&self->dirty));
	sync();
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "4096"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
}

FIXTURE_TEARDOWN(fs)
{
	write_attr(SETUP_CMD, "enable", "0");
	EXPECT_EQ(0, fs_dirty_restore(&self->dirty));
	if (self->mnt[0]) {
		umount(self->mnt);
		rmdir(self->mnt);
	}
	nvmet_cleanup();
}

/*
 * Sum the blocks of the host's write commands in the trace by stream
 * (DTYPE 1 in ctrl, DSPEC in the top of dsmgmt; 0 for none) into @blocks.
 * -1 if a write carries another directive type or the trace lost events.
 */
static int wire_blocks(unsigned long long *blocks)
{
	char *buf = malloc(4 << 20), *line, *p;
	unsigned int ctrl, dsmgmt, len;
	int ret = 0;

	if (!buf || read_file(TRACING "/trace", buf, 4 << 20) <= 0) {
		free(buf);
		return -1;
	}
	if (strstr(buf, "LOST"))
		ret = -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		p = strstr(line, "cmd=(nvme_cmd_write ");
		if (!p || !strstr(line, "disk=") ||
		    sscanf(p, "cmd=(nvme_cmd_write slba=%*u, len=%u, ctrl=0x%x, dsmgmt=%u",
			   &len, &ctrl, &dsmgmt) != 3)
			continue;
		if ((ctrl & 0xf0) == 0x10)
			blocks[dsmgmt >> 16 & 0xff] += len + 1;
		else if (!(ctrl & 0xf0))
			blocks[0] += len + 1;
		else
			ret = -1;
	}
	free(buf);
	return ret;
}

TEST_F(fs, files_in_streams)
{
	static const int ids[FS_FILES] = { 2, 3, 4 };
	unsigned long long wire[MAX_IDS] = { 0 };
	const unsigned long long sectors = FS_MIB * 2048ULL;
	struct stats st;
	int i;

	ASSERT_EQ(0, fs_write_files(self->mnt, ids, FS_FILES, FS_MIB,
				    variant->flush));
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	ASSERT_EQ(0, wire_blocks(wire));
	for (i = 0; i < FS_FILES; i++) {
		TH_LOG("%s stream %d: target %llu, wire %llu of %llu sectors (%.1f %%)",
		       variant->fs->name, ids[i], st.sectors[ids[i]],
		       wire[ids[i]], sectors,
		       100.0 * st.sectors[ids[i]] / sectors);
		EXPECT_EQ(sectors, st.sectors[ids[i]]);
		EXPECT_EQ(sectors, wire[ids[i]]);
	}
	TH_LOG("%s stream 0 (metadata, journal): target %llu, wire %llu",
	       variant->fs->name, st.sectors[0], wire[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, 4, -1 }));
	for (i = 5; i < MAX_IDS; i++)
		EXPECT_EQ(0, wire[i]) TH_LOG("stream %d on the wire", i);

	ASSERT_EQ(0, umount(self->mnt));
	EXPECT_EQ(0, run(variant->fs->fsck, self->h.dev));
	ASSERT_EQ(0, fs_mount(variant->fs, self->h.dev, self->mnt, NULL));
	EXPECT_EQ(0, fs_check_files(self->mnt, ids, FS_FILES, FS_MIB));
}

FIXTURE(qemu) {
	char dev[300];
	char ctrl[300];
};

FIXTURE_SETUP(qemu)
{
	const char *serial = getenv("STREAMID_NVME_SERIAL");
	char path[600], buf[256];
	struct dirent *d;
	DIR *dir;

	if (!serial)
		SKIP(return, "no NVMe disk attached (STREAMID_NVME_SERIAL unset)");
	dir = opendir("/sys/class/nvme");
	ASSERT_NE(NULL, dir);
	while ((d = readdir(dir))) {
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/serial",
			 d->d_name);
		if (read_file(path, buf, sizeof(buf)) > 0 &&
		    !strcmp(buf, serial))
			snprintf(self->ctrl, sizeof(self->ctrl), "%s",
				 d->d_name);
	}
	closedir(dir);
	ASSERT_NE(0, self->ctrl[0]);
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

TEST_F(qemu, no_directives)
{
	char *buf = malloc(1 << 20), *p;
	int fd, writes = 0;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(0, max_streams(self->dev));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(TRACING "/events/nvme/nvme_setup_cmd",
				"enable", "1"));
	ASSERT_EQ(0, reset_and_wait(self->ctrl, self->dev, 0));
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
