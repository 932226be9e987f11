// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe Streams and Flexible Data Placement (FDP), over the loop and TCP
 * transports of the NVMe target.
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
 *
 * FDP (fixtures fdp_target, fdp_host, and the fdp variants of fs): the
 * target through nvme-cli and raw commands, its errors, and the host
 * sending stream s as placement handle s - 1, through resets and FDP
 * turned off and on under it; a namespace with both uses FDP.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <endian.h>
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "fs.h"

#define NVMET		"/sys/kernel/config/nvmet"
#define NVME_CORE	"/sys/module/nvme_core/parameters"
#define NQN		"streamid-test"
#define NQN_DIR		NVMET "/subsystems/" NQN
#define NS_DIR		NQN_DIR "/namespaces/1"
#define NS2_DIR		NQN_DIR "/namespaces/2"
#define PORT		"7"
#define PORT_DIR	NVMET "/ports/" PORT
#define TCP_PORT	"4427"
#define PORT2		"8"
#define PORT2_DIR	NVMET "/ports/" PORT2
#define TCP_PORT2	"4428"
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
#define SC_INTERNAL_PATH_ERROR	0x0300
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
	unlink(PORT2_DIR "/subsystems/" NQN);
	rmdir(PORT2_DIR);
	write_attr(NS_DIR, "enable", "0");
	rmdir(NS_DIR);
	write_attr(NS2_DIR, "enable", "0");
	rmdir(NS2_DIR);
	rmdir(NQN_DIR);
	nullb_remove(NULLB "/" BACKING);
	nullb_remove(NULLB "/" BACKING "2");
	/* The defaults: Streams off, FDP on. */
	write_attr(NVME_CORE, "streams", "N");
	write_attr(NVME_CORE, "fdp", "Y");
	write_attr(NVME_CORE, "max_retries", "5");
}

/* The reclaim unit size of the FDP namespaces of these tests. */
#define FDP_RU_SIZE	1048576

/*
 * The subsystem NQN with namespace 1 on a null_blk device of @mib MiB,
 * with @streams streams and @fdp FDP placement handles, on a port of
 * @transport; the host connected to it, using the streams (Streams or
 * FDP) itself if @host_streams, else leaving them to the test.
 */
static void nvmet_up_ns(struct __test_metadata *_metadata, struct host *self,
			const char *transport, int streams, int fdp,
			bool host_streams, int mib)
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
	snprintf(buf, sizeof(buf), "%d", fdp);
	ASSERT_EQ(0, write_attr(NS_DIR, "fdp_handles", buf));
	snprintf(buf, sizeof(buf), "%d", FDP_RU_SIZE);
	ASSERT_EQ(0, write_attr(NS_DIR, "fdp_ru_size", buf));
	ASSERT_EQ(0, write_attr(NS_DIR, "enable", "1"));

	ASSERT_EQ(0, mkdir(PORT_DIR, 0755));
	ASSERT_EQ(0, write_attr(PORT_DIR, "addr_trtype", transport));
	if (!strcmp(transport, "tcp")) {
		ASSERT_EQ(0, write_attr(PORT_DIR, "addr_adrfam", "ipv4"));
		ASSERT_EQ(0, write_attr(PORT_DIR, "addr_traddr", "127.0.0.1"));
		ASSERT_EQ(0, write_attr(PORT_DIR, "addr_trsvcid", TCP_PORT));
	}
	ASSERT_EQ(0, symlink(NQN_DIR, PORT_DIR "/subsystems/" NQN));

	ASSERT_EQ(0, write_attr(NVME_CORE, "streams",
				host_streams ? "Y" : "N"));
	ASSERT_EQ(0, write_attr(NVME_CORE, "fdp", host_streams ? "Y" : "N"));

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

static void nvmet_up(struct __test_metadata *_metadata, struct host *self,
		     const char *transport, int streams, bool host_streams,
		     int mib)
{
	nvmet_up_ns(_metadata, self, transport, streams, 0, host_streams, mib);
}

static long long sysfs_num(const char *dir, const char *name)
{
	char path[600], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return read_file(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

/* The text of attribute @name in @dir, without its newline; 0 if read. */
static int sysfs_str(const char *dir, const char *name, char *buf, size_t len)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return read_file(path, buf, len) > 0 ? 0 : -1;
}

/* max_streams of the host's namespace disk. */
static long long max_streams(const char *dev)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "/sys/block/%s/queue", dev + 5);
	return sysfs_num(dir, "max_streams");
}

/*
 * max_streams of the disk of namespace @nsid on the path through host
 * controller @ctrl (nvmeN): nvme<subsystem>c<controller>n<nsid>, hidden
 * under the multipath disk.
 */
static long long path_max_streams(const struct host *h, const char *ctrl,
				  int nsid)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "/sys/block/nvme%dc%dn%d/queue",
		 atoi(h->dev + strlen("/dev/nvme")),
		 atoi(ctrl + strlen("nvme")), nsid);
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
 * The host enables the Streams directive of no device unless told to
 * (nvme_core.streams=1); it uses FDP wherever the device has it enabled.
 */
TEST(host_defaults)
{
	char buf[8];

	if (access(NVME_CORE, F_OK))
		SKIP(return, "no nvme_core");
	ASSERT_LT(0, read_file(NVME_CORE "/streams", buf, sizeof(buf)));
	EXPECT_STREQ("N", buf);
	ASSERT_LT(0, read_file(NVME_CORE "/fdp", buf, sizeof(buf)));
	EXPECT_STREQ("Y", buf);
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
 * What the target does with a directive command, as
 * Documentation/block/write-streams.rst and the specification say: the
 * model of one host and namespace 1 of MSL streams, the only namespace.
 */
struct dir_model {
	bool enabled;
	unsigned int allocated;
};

struct dir_cmd {
	bool send;
	__u32 nsid, dtype, doper, dspec, len, numd, cdw12;
};

#define SC_SGL_INVALID_DATA	0x400f

/* The status the target must return for @c; @m follows its effect. */
static int dir_expect(struct dir_model *m, const struct dir_cmd *c)
{
	bool identify_all = c->dtype == DIR_IDENTIFY && c->nsid == 0xffffffff;
	__u32 want_len = c->send || (c->dtype == DIR_STREAMS && c->doper == 3) ?
			 0 : (c->numd + 1) * 4;
	__u32 nsr = c->cdw12 & 0xffff, id = c->dspec;

	/* The data transfer first, then the namespace. */
	if (c->len != want_len)
		return SC_SGL_INVALID_DATA;
	if (!identify_all && c->nsid != 1)
		return SC_INVALID_NS;
	if (c->dtype == DIR_IDENTIFY) {
		if (c->doper != 1)
			return SC_INVALID_FIELD;
		if (!c->send)
			return SC_SUCCESS;
		if ((c->cdw12 >> 8 & 0xff) != DIR_STREAMS)
			return SC_INVALID_FIELD;
		m->enabled = c->cdw12 & 1;
		if (!m->enabled)
			m->allocated = 0;
		return SC_SUCCESS;
	}
	if (c->dtype != DIR_STREAMS)
		return SC_INVALID_FIELD;
	if (!c->send && c->doper == 1)
		return SC_SUCCESS;
	if (c->doper < 1 || c->doper > (c->send ? 2U : 3U) || !m->enabled)
		return SC_INVALID_FIELD;
	if (c->send && c->doper == 1)
		return id && id <= MSL ? SC_SUCCESS : SC_INVALID_FIELD;
	if (c->send) {
		m->allocated = 0;
		return SC_SUCCESS;
	}
	if (c->doper == 2)
		return SC_SUCCESS;
	if (!nsr)
		return SC_INVALID_FIELD;
	if (m->allocated == MSL)
		return SC_STREAM_ALLOC_FAILED;
	m->allocated += nsr < MSL - m->allocated ? nsr : MSL - m->allocated;
	return SC_SUCCESS;
}

/*
 * Random Directive Send and Receive commands: each gets the status the
 * target's rules give it, and the target still serves I/O and directives
 * correctly afterwards.
 */
TEST_F_TIMEOUT(nvmet, random_directives, 600)
{
	static const __u32 nsids[] = { 1, 0, 2, 0xffffffff, 1, 1 };
	__u8 *buf = malloc(1 << 16);
	struct dir_model m = { };
	struct streams_params p;
	int i, wrong = 0, ok = 0, kinds = 0;
	struct stats st;

	ASSERT_NE(NULL, buf);
	srand(1);
	for (i = 0; i < 10000; i++) {
		/* Mostly valid types and operations, so that most get far. */
		struct dir_cmd c = {
			.dtype = rand() % 4 ? rand() % 3 : rand() % 256,
			.doper = rand() % 4 ? rand() % 4 : rand() % 256,
			.dspec = rand() % 4 ? rand() % 8 : rand() % 65536,
			.len = rand() % 4 ? (rand() % 2 ? 32 : 4096) : 0,
		};
		int ret, want;

		c.numd = rand() % 8 ? (c.len ? c.len / 4 - 1 : 0) :
			 rand() % 4 ? rand() % 1024 : rand();
		c.cdw12 = rand() % 3 ? rand() % 512 : rand();
		c.send = rand() % 2;
		/* A Directive Send carries no data in Identify or Streams. */
		if (c.send && rand() % 8)
			c.len = 0;
		c.nsid = nsids[rand() % 6];
		ret = admin(self->h.fd, c.send ? 0x19 : 0x1a, c.nsid, buf,
			    c.len, c.numd, c.doper | c.dtype << 8 | c.dspec << 16,
			    c.cdw12, NULL);
		want = dir_expect(&m, &c);
		ASSERT_LE(0, ret) TH_LOG("command %d: %s", i, strerror(-ret));
		if (ret != want && wrong++ < 10) {
			char what[128];

			snprintf(what, sizeof(what),
				 "%s nsid %#x dtype %u doper %u dspec %u",
				 c.send ? "send" : "receive", c.nsid, c.dtype,
				 c.doper, c.dspec);
			TH_LOG("command %d: %s len %u numd %u cdw12 %#x: status %#x, want %#x",
			       i, what, c.len, c.numd, c.cdw12, ret, want);
		}
		ok += !ret;
		/* Which of the 8 operations of each direction succeeded. */
		if (!ret && c.dtype < 2 && c.doper < 4)
			kinds |= 1 << (c.send * 8 + c.dtype * 4 + c.doper);
	}
	TH_LOG("10000 random directive commands: %d succeeded, %d not as the rules say",
	       ok, wrong);
	EXPECT_EQ(0, wrong);
	/*
	 * The commands got far: every operation there is succeeded at least
	 * once: Identify Return Parameters; Streams Return Parameters, Get
	 * Status, Allocate Resources; Enable Directive; Release Identifier,
	 * Release Resources.
	 */
	EXPECT_EQ(1 << 1 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 9 | 1 << 13 |
		  1 << 14, kinds);
	free(buf);

	/* Still correct: directives, stream writes, data. */
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.msl);
	EXPECT_EQ(m.allocated, p.nsa);
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
#define BIO_QUEUE	TRACING "/events/block/block_bio_queue"
/*
 * The namespace's streams; the host keeps the top four for lifetime hints
 * and shows the others, those stream IDs go to, in max_streams.
 */
#define HOST_MSL	12
#define HOST_STREAMS	(HOST_MSL - 4)
/* FDP placement handles: fewer than 8, so all are streams. */
#define FDP_HANDLES	6
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

/*
 * The host enables Streams and uses the shared pool without allocating
 * from it; max_streams shows the streams that stream IDs go to, on the
 * disk and on its path.
 */
TEST_F(host, discovers_streams)
{
	struct streams_params p;
	int sup, en;

	EXPECT_EQ(HOST_STREAMS, max_streams(self->h.dev));
	EXPECT_EQ(HOST_STREAMS, path_max_streams(&self->h, self->h.ctrl, 1));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, en);
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(HOST_MSL, p.nssa);
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
 * stream ID go to the top four streams: SHORT 12, MEDIUM 11, LONG 10,
 * EXTREME 9; a stream ID, where set, wins, and IDs above max_streams
 * (8) fold onto 1-8, never onto the hints' streams.
 */
TEST_F(host, write_hints)
{
	static const struct { __u64 hint; int id, stream; } w[] = {
		{ 2, 0, 12 }, { 3, 0, 11 }, { 4, 0, 10 }, { 5, 0, 9 },
		{ 1, 0, 0 }, { 2, 1, 1 }, { 0, 9, 1 }, { 2, 12, 4 },
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
	 * inode must have no stream ID, which would win.  The disk stays
	 * open, so the ID last set is still the inode's; a file clears the
	 * inode's ID only if it set it.
	 */
	fd = open(self->h.dev, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 1, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_STREAMID));
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "fio --name=hint --filename=%s --rw=write --bs=4k --size=64k --offset=1m --end_fsync=1 --write_hint=medium --output=/dev/null",
		 self->h.dev);
	ASSERT_EQ(0, system(cmd));
	want[11] += 128;

	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	for (i = 0; i <= HOST_MSL; i++)
		EXPECT_EQ(want[i], st.sectors[i]) TH_LOG("stream %d", i);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 1, 4, 9, 10, 11, 12, -1 }));
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
	ASSERT_EQ(0, write_attr(NVME_CORE, "streams",
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
 * Writers of tagged data that run until told to stop: one O_DIRECT with
 * stream 2 over the first WRITER_BLOCKS 4 KiB blocks, one buffered with
 * stream 3 over the next, with an fsync after each pass.  Each writes its
 * pattern over and over; a write or fsync that fails ends it with 1.
 */
#define WRITER_BLOCKS	1024

/* Shared with the writers: the writes each has done, and a stop flag. */
struct writers {
	pid_t pid[2];
	unsigned long *done;	/* [0], [1]: writes done; [2]: stop */
};

static int writer(const char *dev, int i, unsigned long *done)
{
	const off_t start = (off_t)i * WRITER_BLOCKS * 4096;
	const int id = 2 + i;
	int fd, b;

	fd = open_stream(dev, O_WRONLY | (i ? 0 : O_DIRECT), id);
	if (fd < 0)
		return 1;
	while (!__atomic_load_n(&done[2], __ATOMIC_RELAXED)) {
		for (b = 0; b < WRITER_BLOCKS; b++) {
			if (write_at(fd, start + (off_t)b * 4096, 4096, id))
				return 1;
			__atomic_add_fetch(&done[i], 1, __ATOMIC_RELAXED);
		}
		if (fsync(fd))
			return 1;
	}
	return close(fd) ? 1 : 0;
}

static int writers_start(struct writers *w, const char *dev)
{
	int i;

	w->done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->done == MAP_FAILED)
		return -1;
	for (i = 0; i < 2; i++) {
		w->pid[i] = fork();
		if (w->pid[i] < 0)
			return -1;
		if (!w->pid[i])
			_exit(writer(dev, i, w->done));
	}
	return 0;
}

/*
 * Wait until each writer has done @n more writes than it had at the call,
 * which shows that the writers are running; 0 once they have, -1 if one
 * ended or did not within 60 s.
 */
static int writers_progress(struct writers *w, unsigned long n)
{
	unsigned long from[2];
	int i, t, status;

	for (i = 0; i < 2; i++)
		from[i] = __atomic_load_n(&w->done[i], __ATOMIC_RELAXED);
	for (t = 0; t < 1200; t++, usleep(50000)) {
		for (i = 0; i < 2; i++)
			if (waitpid(w->pid[i], &status, WNOHANG))
				return -1;
		if (__atomic_load_n(&w->done[0], __ATOMIC_RELAXED) >= from[0] + n &&
		    __atomic_load_n(&w->done[1], __ATOMIC_RELAXED) >= from[1] + n)
			return 0;
	}
	return -1;
}

/* Stop the writers; how many of them failed. */
static int writers_stop(struct writers *w)
{
	int i, status, bad = 0;

	__atomic_store_n(&w->done[2], 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++) {
		if (w->pid[i] <= 0)
			continue;
		if (waitpid(w->pid[i], &status, 0) != w->pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
		w->pid[i] = 0;
	}
	munmap(w->done, 4096);
	return bad;
}

/* The data of both writers reads back. */
static int writers_check(const char *dev)
{
	return check_at(dev, 0, WRITER_BLOCKS * 4096, 2) ||
	       check_at(dev, WRITER_BLOCKS * 4096, WRITER_BLOCKS * 4096, 3);
}

/*
 * A controller reset in the middle of tagged writing, O_DIRECT and
 * buffered: no write fails, the writes go to their streams or, until the
 * host has set the streams up again, to none, the streams are back
 * afterwards and the data reads back.  The writers run before and after
 * the reset, so it happened while they wrote.
 */
TEST_F(host, reset_while_writing)
{
	struct writers w = { };
	struct stats st;

	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, writers_start(&w, self->h.dev));
	EXPECT_EQ(0, writers_progress(&w, 64));
	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_STREAMS));
	EXPECT_EQ(0, writers_progress(&w, 64));
	/* Once set up again, the streams are used again. */
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	EXPECT_EQ(0, writers_stop(&w));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, -1 }));
	EXPECT_EQ(HOST_STREAMS, max_streams(self->h.dev));
	EXPECT_EQ(0, writers_check(self->h.dev));
}

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
 * Whether the command at @p (after "cmd=(" in a trace line) is @name: a
 * command's name, or the start of its arguments ("nvme_admin_get_features
 * fid=0x1d").
 */
static bool is_cmd(const char *p, const char *name)
{
	size_t n = strlen(name);

	p = strstr(p, "cmd=(");
	return p && !strncmp(p + 5, name, n) &&
	       (p[5 + n] == ' ' || p[5 + n] == ',' || p[5 + n] == ')');
}

/*
 * Which completion, counted from 1, of the commands that the controller's
 * own fault injection sees (those of no disk: admin and connect commands)
 * answers the first admin command @name in trace @buf.  Keep-alives, which
 * can come before the reset stops them, are not counted.  0 if none.
 */
static int completion_in(char *buf, const char *name)
{
	int n = 0, want_cid = -1, ka_cid = -1;
	unsigned int id, qid, cid;
	char *line;

	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *setup = strstr(line, "nvme_setup_cmd: ");
		char *done = strstr(line, "nvme_complete_rq: ");
		char *p = setup ? setup + 16 : done ? done + 18 : NULL;

		/* Commands of a disk have "disk=nvme0n1, " before the qid. */
		if (!p || sscanf(p, "nvme%u: qid=%u, cmdid=%u", &id, &qid,
				 &cid) != 3)
			continue;
		if (setup) {
			if (qid)
				continue;
			if (is_cmd(p, name) && want_cid < 0)
				want_cid = cid;
			else if (is_cmd(p, "nvme_admin_keep_alive"))
				ka_cid = cid;
		} else if (!qid && (int)cid == ka_cid) {
			ka_cid = -1;
		} else {
			n++;
			if (!qid && (int)cid == want_cid)
				return n;
		}
	}
	return 0;
}

/* Whether the first admin command @name in trace @trace failed. */
static bool failed_in(const char *trace, const char *name)
{
	char *buf = strdup(trace), *save, *line;
	unsigned int id, qid, cid, status;
	bool failed = false;
	int want_cid = -1;

	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *setup = strstr(line, "nvme_setup_cmd: ");
		char *done = strstr(line, "nvme_complete_rq: ");
		char *p = setup ? setup + 16 : done ? done + 18 : NULL;

		if (!p || sscanf(p, "nvme%u: qid=%u, cmdid=%u", &id, &qid,
				 &cid) != 3 || qid)
			continue;
		if (setup && want_cid < 0 && is_cmd(p, name)) {
			want_cid = cid;
		} else if (done && (int)cid == want_cid) {
			p = strstr(p, "status=");
			failed = p && sscanf(p, "status=%x", &status) == 1 &&
				 status;
			break;
		}
	}
	free(buf);
	return failed;
}

/*
 * completion_in() of a reset of @ctrl after which @dev has @want streams:
 * the streams are set up by the scan that follows the reset, so the
 * trace is read until the command is in.
 */
static int completion_of(const char *ctrl, const char *dev, const char *name,
			 long long want)
{
	char *buf = malloc(1 << 20);
	int i, k = 0;

	if (!buf || trace_clear() || write_attr(SETUP_CMD, "enable", "1") ||
	    write_attr(COMPLETE_RQ, "enable", "1") ||
	    reset_and_wait(ctrl, dev, want))
		goto out;
	for (i = 0; i < 100 && !k; i++, usleep(100000))
		if (read_file(TRACING "/trace", buf, 1 << 20) > 0)
			k = completion_in(buf, name);
	/* Let the scan finish. */
	usleep(500000);
out:
	write_attr(SETUP_CMD, "enable", "0");
	write_attr(COMPLETE_RQ, "enable", "0");
	free(buf);
	return k;
}

/*
 * Make completion @k of the next reset of @ctrl fail with Invalid Field,
 * through the controller's own fault injection; 0 if it is armed.
 */
static int fail_completion(const char *ctrl, int k)
{
	char fi[400], space[16];

	snprintf(fi, sizeof(fi), "/sys/kernel/debug/%s/fault_inject", ctrl);
	snprintf(space, sizeof(space), "%d", k);
	/* Say that it fails, without the stack dump a kernel bug would have. */
	return write_attr(fi, "space", space) || write_attr(fi, "times", "1") ||
	       write_attr(fi, "status", "0x2") ||
	       write_attr(fi, "verbose", "1") ||
	       write_attr(fi, "probability", "100");
}

static int fail_none(const char *ctrl)
{
	char fi[400];

	snprintf(fi, sizeof(fi), "/sys/kernel/debug/%s/fault_inject", ctrl);
	return write_attr(fi, "probability", "0");
}

static bool have_fault_injection(const char *ctrl)
{
	char fi[400];

	snprintf(fi, sizeof(fi), "/sys/kernel/debug/%s/fault_inject", ctrl);
	return !access(fi, F_OK);
}

/*
 * Reset @ctrl with its first admin command @name failing (Invalid Field,
 * through the controller's own fault injection), and wait until @dev has
 * @want streams; @good is what it has after a reset that goes well.  The
 * injection counts completions, and one more (a log page an event asks
 * for) can come first, so the admin commands of the reset are traced and,
 * if another command failed, the reset is done again.  dmesg is cleared
 * before the reset, whose trace is left in @buf (1 MiB).  0 once @name
 * failed and @dev has @want streams.
 */
static int reset_failing(const char *ctrl, const char *dev, const char *name,
			 long long good, long long want, char *buf)
{
	int try, k;

	for (try = 0; try < 3; try++) {
		k = completion_of(ctrl, dev, name, good);
		if (!k || system("dmesg -C") || trace_clear() ||
		    write_attr(SETUP_CMD, "filter", "qid == 0") ||
		    write_attr(COMPLETE_RQ, "filter", "qid == 0") ||
		    write_attr(SETUP_CMD, "enable", "1") ||
		    write_attr(COMPLETE_RQ, "enable", "1") ||
		    fail_completion(ctrl, k))
			break;
		reset_and_wait(ctrl, dev, want);
		fail_none(ctrl);
		write_attr(SETUP_CMD, "enable", "0");
		write_attr(COMPLETE_RQ, "enable", "0");
		write_attr(SETUP_CMD, "filter", "0");
		write_attr(COMPLETE_RQ, "filter", "0");
		if (read_file(TRACING "/trace", buf, 1 << 20) <= 0)
			break;
		if (failed_in(buf, name))
			return max_streams(dev) == want ? 0 : -1;
		fprintf(stderr, "# completion %d was not %s: again\n", k, name);
		if (reset_and_wait(ctrl, dev, good))
			break;
	}
	fail_none(ctrl);
	write_attr(SETUP_CMD, "enable", "0");
	write_attr(COMPLETE_RQ, "enable", "0");
	write_attr(SETUP_CMD, "filter", "0");
	write_attr(COMPLETE_RQ, "filter", "0");
	return -1;
}

/*
 * The controller fails the Enable directive of a reset (the host's fault
 * injection turns its completion into Invalid Field): the host says so
 * once, the disk has no streams, tagged writes go out without a
 * directive, and the next reset brings the streams back.
 */
TEST_F(host, enable_fails)
{
	char *buf = malloc(1 << 20);

	ASSERT_NE(NULL, buf);
	if (!have_fault_injection(self->h.ctrl))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	EXPECT_EQ(0, reset_failing(self->h.ctrl, self->h.dev,
				   "nvme_admin_directive_send", HOST_STREAMS,
				   0, buf));
	free(buf);
	EXPECT_EQ(1, dmesg_count("Streams not used"));
	EXPECT_EQ(1, dmesg_count("Streams not used: enabling them failed"));
	EXPECT_EQ(0, max_streams(self->h.dev));

	untagged_at_target(_metadata, &self->h);

	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_STREAMS));
}

/*
 * A controller that has Directives in OACS but rejects the Identify
 * directive's Return Parameters (the host's fault injection turns its
 * completion into Invalid Field) has no streams: the host sends it no
 * Enable and logs nothing.
 */
TEST_F(host, identify_rejected)
{
	char *buf = malloc(1 << 20);

	ASSERT_NE(NULL, buf);
	if (!have_fault_injection(self->h.ctrl))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	EXPECT_EQ(0, reset_failing(self->h.ctrl, self->h.dev,
				   "nvme_admin_directive_recv", HOST_STREAMS,
				   0, buf));
	EXPECT_NE(NULL, strstr(buf, "nvme_admin_directive_recv"));
	EXPECT_EQ(NULL, strstr(buf, "nvme_admin_directive_send"));
	free(buf);
	EXPECT_EQ(0, dmesg_count("Streams"));
	EXPECT_EQ(0, max_streams(self->h.dev));

	untagged_at_target(_metadata, &self->h);

	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_STREAMS));
}

/* Wait until the host's disk @dev shows @want streams; 0 once it does. */
static int wait_max_streams(const char *dev, long long want)
{
	int i;

	for (i = 0; i < 200; i++, usleep(50000))
		if (max_streams(dev) == want)
			return 0;
	return -1;
}

/*
 * Disable and enable the target namespace, with @streams streams and, if
 * @fdp, that many placement handles.
 */
static int ns_cycle_fdp(const struct host *h, const char *streams,
			const char *fdp)
{
	return write_attr(h->ns, "enable", "0") ||
	       write_attr(h->ns, "streams", streams) ||
	       (fdp && write_attr(h->ns, "fdp_handles", fdp)) ||
	       write_attr(h->ns, "enable", "1");
}

static int ns_cycle(const struct host *h, const char *streams)
{
	return ns_cycle_fdp(h, streams, NULL);
}

/* Have the host scan its namespaces, and give the scan time to end. */
static int rescan_and_settle(const struct host *h)
{
	char dir[400];

	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", h->ctrl);
	if (write_attr(dir, "rescan_controller", "1"))
		return -1;
	sleep(1);
	return 0;
}

/*
 * ns_cycle_fdp() under a host that goes on using the namespace: with the
 * target's Namespace Attribute Notices off (Asynchronous Event
 * Configuration, bit 8), the host does not scan while the namespace is
 * away, which would remove its disk; it scans once it is back.
 */
static int ns_cycle_under_host(const struct host *h, const char *streams,
			       const char *fdp)
{
	char dir[400];
	__u32 aec;

	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", h->ctrl);
	if (admin(h->fd, 0x0a, 0, NULL, 0, 0x0b, 0, 0, &aec) ||
	    admin(h->fd, 0x09, 0, NULL, 0, 0x0b, aec & ~(1U << 8), 0, NULL))
		return -1;
	if (ns_cycle_fdp(h, streams, fdp) ||
	    admin(h->fd, 0x09, 0, NULL, 0, 0x0b, aec, 0, NULL))
		return -1;
	return write_attr(dir, "rescan_controller", "1");
}

/*
 * No write fails because of its stream, O_DIRECT or buffered, while
 * tagged writers run through (a) a controller reset whose Enable fails,
 * (b) the target namespace disabled and enabled again, which ends the
 * host's Streams state there, (c) a new stream count on the target and
 * (d) the target dropping the state of its own; after each the streams
 * come back, and the data reads back.
 */
TEST_F_TIMEOUT(host, writes_never_fail, 120)
{
	struct writers w = { };
	struct stats st;
	char msl[16], *buf = malloc(1 << 20);

	ASSERT_NE(NULL, buf);
	if (!have_fault_injection(self->h.ctrl))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");

	ASSERT_EQ(0, writers_start(&w, self->h.dev));
	EXPECT_EQ(0, writers_progress(&w, 64));

	/* (a) */
	EXPECT_EQ(0, reset_failing(self->h.ctrl, self->h.dev,
				   "nvme_admin_directive_send", HOST_STREAMS,
				   0, buf));
	free(buf);
	EXPECT_EQ(0, writers_progress(&w, 64));
	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_STREAMS));
	EXPECT_EQ(0, writers_progress(&w, 64));

	/* (b) */
	snprintf(msl, sizeof(msl), "%d", HOST_MSL);
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, msl, NULL));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("streams back after (b)");
	/* A scan sees the streams kept: they may be set up again later. */
	ASSERT_EQ(0, rescan_and_settle(&self->h));

	/* (c): 6 streams, fewer than 8, so none kept for hints. */
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "6", NULL));
	EXPECT_EQ(0, wait_max_streams(self->h.dev, 6));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("streams back after (c)");
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, -1 }));

	ASSERT_EQ(0, rescan_and_settle(&self->h));

	/*
	 * (d) The device drops the host's Streams state of its own (an
	 * Enable Directive with Streams off, behind the driver's back), with
	 * max_retries 0: the retry of a refused write does not depend on it.
	 */
	ASSERT_EQ(0, write_attr(NVME_CORE, "max_retries", "0"));
	ASSERT_EQ(0, system("dmesg -C"));
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 0));
	EXPECT_EQ(0, writers_progress(&w, 256));
	/* Nothing else set the streams up again: writes were refused. */
	EXPECT_EQ(1, dmesg_count("a write was refused for its stream"));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("streams back after (d)");
	EXPECT_EQ(0, write_attr(NVME_CORE, "max_retries", "5"));

	EXPECT_EQ(0, writers_stop(&w));
	EXPECT_EQ(0, writers_check(self->h.dev));
}

#define SECOND_HOST	"5e1f0000-0000-4000-8000-000000000002"

/* Connect a second host, of host ID SECOND_HOST, to the subsystem. */
static int connect_second_host(const char *transport)
{
	char opts[512];
	int fd, n;

	/* nvme-cli refuses a second connection: ask the kernel directly. */
	fd = open("/dev/nvme-fabrics", O_RDWR);
	if (fd < 0)
		return -1;
	n = snprintf(opts, sizeof(opts),
		     "transport=%s%s,nqn=%s,hostnqn=%s%s,hostid=%s",
		     transport, strcmp(transport, "tcp") ? "" :
		     ",traddr=127.0.0.1,trsvcid=" TCP_PORT, NQN,
		     "nqn.2014-08.org.nvmexpress:uuid:", SECOND_HOST,
		     SECOND_HOST);
	n = write(fd, opts, n) == n ? 0 : -1;
	close(fd);
	return n;
}

/* The host controller of subsystem NQN other than @not, in @ctrl. */
static int other_ctrl(const char *not, char *ctrl, size_t len)
{
	char path[512], buf[256];
	struct dirent *d;
	int tries;
	DIR *dir;

	for (tries = 0; tries < 100; tries++, usleep(50000)) {
		dir = opendir("/sys/class/nvme");
		while (dir && (d = readdir(dir))) {
			snprintf(path, sizeof(path),
				 "/sys/class/nvme/%s/subsysnqn", d->d_name);
			if (strcmp(d->d_name, not) &&
			    read_file(path, buf, sizeof(buf)) > 0 &&
			    !strcmp(buf, NQN)) {
				snprintf(ctrl, len, "%s", d->d_name);
				closedir(dir);
				return 0;
			}
		}
		if (dir)
			closedir(dir);
	}
	return -1;
}

/*
 * The host's write commands in @trace on path disk @disk: how many
 * carried stream @id (tagged) and how many no directive (untagged); -1
 * if one carried anything else.
 */
static int path_writes(char *trace, const char *disk, int id, int *tagged,
		       int *untagged)
{
	char *line, *save, want[320];
	unsigned int ctrl, dsmgmt;
	int bad = 0;

	*tagged = *untagged = 0;
	snprintf(want, sizeof(want), "disk=%s,", disk);
	for (line = strtok_r(trace, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "cmd=(nvme_cmd_write ");

		if (!p || !strstr(line, want) ||
		    sscanf(p, "cmd=(nvme_cmd_write slba=%*u, len=%*u, ctrl=0x%x, dsmgmt=%u",
			   &ctrl, &dsmgmt) != 2)
			continue;
		if ((ctrl & 0xf0) == 0x10 && dsmgmt >> 16 == (unsigned int)id)
			(*tagged)++;
		else if (!(ctrl & 0xf0) && !(dsmgmt >> 16))
			(*untagged)++;
		else
			bad++;
	}
	return bad ? -1 : 0;
}

/*
 * 16 O_DIRECT writes with stream @id through the multipath disk, which
 * sends them round-robin over both paths; on the wire, how many went
 * tagged and untagged over each (nvme<s>c<ctrl>n1).
 */
static int round_robin_writes(const struct host *h, const char *ctrl2, int id,
			      int tagged[2], int untagged[2])
{
	char *buf = malloc(1 << 20), disk[300];
	const char *ctrls[2] = { h->ctrl, ctrl2 };
	int fd, i, ret = -1;

	fd = open_stream(h->dev, O_WRONLY | O_DIRECT, id);
	if (!buf || fd < 0 || trace_clear() ||
	    write_attr(SETUP_CMD, "enable", "1"))
		goto out;
	for (i = 0; i < 16; i++)
		if (write_at(fd, (off_t)i * 4096, 4096, id))
			goto out;
	if (write_attr(SETUP_CMD, "enable", "0") ||
	    read_file(TRACING "/trace", buf, 1 << 20) <= 0)
		goto out;
	ret = 0;
	for (i = 0; i < 2; i++) {
		char *copy = strdup(buf);

		snprintf(disk, sizeof(disk), "nvme%dc%dn1",
			 atoi(h->dev + strlen("/dev/nvme")),
			 atoi(ctrls[i] + strlen("nvme")));
		ret |= !copy || path_writes(copy, disk, id, &tagged[i],
					    &untagged[i]);
		free(copy);
	}
out:
	write_attr(SETUP_CMD, "enable", "0");
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/*
 * Two hosts and two namespaces on one subsystem, the second namespace
 * added after the first host set up its streams: every host gets the
 * streams of every namespace, from the shared pool, without a reset.  A
 * write through the multipath disk goes to the same stream over either
 * path; where one path has no streams, the disk shows none and no path
 * tags a write.
 */
TEST_F(host, two_hosts_two_namespaces)
{
	char dir[300], dev[300], disk2[300], ctrl2[300], msl[16], path[512];
	int tagged[2], untagged[2], fd, sup, en;

	/* The second namespace, with streams, for the connected host. */
	ASSERT_EQ(0, nullb_create(BACKING "2", 16, 8, 0, dir, sizeof(dir), dev,
				  sizeof(dev)));
	ASSERT_EQ(0, mkdir(NS2_DIR, 0755));
	ASSERT_EQ(0, write_attr(NS2_DIR, "device_path", dev));
	snprintf(msl, sizeof(msl), "%d", HOST_MSL);
	ASSERT_EQ(0, write_attr(NS2_DIR, "streams", msl));
	ASSERT_EQ(0, write_attr(NS2_DIR, "enable", "1"));
	snprintf(disk2, sizeof(disk2), "%.*s2", (int)strlen(self->h.dev) - 1,
		 self->h.dev);
	EXPECT_EQ(0, wait_max_streams(disk2, HOST_STREAMS)) TH_LOG("%s", disk2);

	/* The second host: both paths of both namespaces have streams. */
	ASSERT_EQ(0, connect_second_host(variant->transport));
	ASSERT_EQ(0, other_ctrl(self->h.ctrl, ctrl2, sizeof(ctrl2)));
	for (sup = 0; sup < 100 && path_max_streams(&self->h, ctrl2, 2) !=
	     HOST_STREAMS; sup++)
		usleep(50000);
	EXPECT_EQ(HOST_STREAMS, path_max_streams(&self->h, ctrl2, 1));
	EXPECT_EQ(HOST_STREAMS, path_max_streams(&self->h, ctrl2, 2));
	EXPECT_EQ(HOST_STREAMS, path_max_streams(&self->h, self->h.ctrl, 2));
	EXPECT_EQ(HOST_STREAMS, max_streams(self->h.dev));
	EXPECT_EQ(HOST_STREAMS, max_streams(disk2));
	/* The target keeps each host's state: both have Streams enabled. */
	snprintf(path, sizeof(path), "/dev/%s", ctrl2);
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, identify_dirs(fd, 2, &sup, &en));
	EXPECT_EQ(3, en);
	close(fd);

	/* The same stream over either path. */
	snprintf(path, sizeof(path),
		 "echo round-robin > /sys/class/nvme-subsystem/nvme-subsys%d/iopolicy",
		 atoi(self->h.dev + strlen("/dev/nvme")));
	ASSERT_EQ(0, system(path));
	ASSERT_EQ(0, round_robin_writes(&self->h, ctrl2, 5, tagged, untagged));
	EXPECT_EQ(8, tagged[0]);
	EXPECT_EQ(8, tagged[1]);
	EXPECT_EQ(0, untagged[0] + untagged[1]);

	/* The second path without streams: the disk has none, no path tags. */
	ASSERT_EQ(0, write_attr(NVME_CORE, "streams",
				"N"));
	EXPECT_EQ(0, reset_and_wait(ctrl2, self->h.dev, 0));
	ASSERT_EQ(0, write_attr(NVME_CORE, "streams",
				"Y"));
	EXPECT_EQ(0, path_max_streams(&self->h, ctrl2, 1));
	EXPECT_EQ(HOST_STREAMS, path_max_streams(&self->h, self->h.ctrl, 1));
	ASSERT_EQ(0, round_robin_writes(&self->h, ctrl2, 5, tagged, untagged));
	EXPECT_EQ(0, tagged[0] + tagged[1]);
	EXPECT_EQ(8, untagged[0]);
	EXPECT_EQ(8, untagged[1]);
	EXPECT_EQ(0, reset_and_wait(ctrl2, self->h.dev, HOST_STREAMS));
	EXPECT_EQ(0, check_at(self->h.dev, 0, 16 * 4096, 5));
}

/* Read or write (@opcode) block @blk with directive @dtype/@dspec. */
static int rw_dir(int fd, __u8 opcode, int blk, int dtype, int dspec)
{
	struct nvme_passthru_cmd cmd = {
		.opcode = opcode, .nsid = 1, .data_len = 4096,
		.cdw10 = blk * 8, .cdw12 = 7 | dtype << 20,
		.cdw13 = dspec << 16,
	};
	void *buf;
	int ret;

	if (posix_memalign(&buf, 4096, 4096))
		return -ENOMEM;
	fill(buf, 4096, blk * 4096, 0);
	cmd.addr = (uintptr_t)buf;
	ret = ioctl(fd, NVME_IOCTL_IO_CMD, &cmd);
	free(buf);
	return ret < 0 ? -errno : ret & ~SC_MORE;
}

/*
 * Wait until the host has the namespace again after the target disabled
 * and enabled it (a read through the controller @fd works); 0 once so.
 */
static int wait_ns(int fd)
{
	int i;

	for (i = 0; i < 100; i++, usleep(50000))
		if (!rw_dir(fd, 0x02, 0, 0, 0))
			return 0;
	return -1;
}

/* The host's controller character device, /dev/nvmeN. */
static int open_ctrl(const char *ctrl)
{
	char path[320];

	snprintf(path, sizeof(path), "/dev/%s", ctrl);
	return open(path, O_RDWR);
}

/*
 * Two controllers of one host, as multipath over two ports or a
 * reconnect before the old controller is gone gives: the Streams state is
 * the host's, so each controller sees and uses what the other set up; it
 * outlives the first controller and ends when the last is reset.
 */
TEST_F(nvmet, same_host_controllers)
{
	char opts[1024], dir[400], hostnqn[256], hostid[64], ctrl2[300];
	struct streams_params p;
	int fd2, n, sup, en;

	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", self->h.ctrl);
	ASSERT_EQ(0, sysfs_str(dir, "hostnqn", hostnqn, sizeof(hostnqn)));
	ASSERT_EQ(0, sysfs_str(dir, "hostid", hostid, sizeof(hostid)));
	fd2 = open("/dev/nvme-fabrics", O_RDWR);
	ASSERT_LE(0, fd2);
	n = snprintf(opts, sizeof(opts),
		     "transport=%s%s,nqn=%s,hostnqn=%s,hostid=%s,duplicate_connect",
		     variant->transport, strcmp(variant->transport, "tcp") ?
		     "" : ",traddr=127.0.0.1,trsvcid=" TCP_PORT, NQN, hostnqn,
		     hostid);
	ASSERT_EQ(n, write(fd2, opts, n));
	close(fd2);
	ASSERT_EQ(0, other_ctrl(self->h.ctrl, ctrl2, sizeof(ctrl2)));
	fd2 = open_ctrl(ctrl2);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, wait_ns(fd2));

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 2,
			      NULL));
	ASSERT_EQ(0, identify_dirs(fd2, 1, &sup, &en));
	EXPECT_EQ(3, en);
	ASSERT_EQ(0, streams_params(fd2, &p));
	EXPECT_EQ(2, p.nsa);
	EXPECT_EQ(MSL - 2, p.nssa);
	EXPECT_EQ(0, rw_dir(fd2, 0x01, 0, DIR_STREAMS, 1));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(1, p.nso);

	/*
	 * The second controller goes: the state stays with the first.  (Not
	 * the first: in 6.12 the multipath head keeps using its effects log,
	 * freed with it, for passthrough commands of the other path.)
	 */
	ASSERT_EQ(0, streams_params(fd2, &p));
	EXPECT_EQ(1, p.nso);
	close(fd2);
	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", ctrl2);
	ASSERT_EQ(0, write_attr(dir, "delete_controller", "1"));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, en);
	EXPECT_EQ(0, rw_dir(self->h.fd, 0x01, 1, DIR_STREAMS, 2));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(2, p.nsa);
	EXPECT_EQ(2, p.nso);

	/* Its last controller reset, the host has no Streams state left. */
	ASSERT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, 0));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(1, en);
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(0, p.nso);
	EXPECT_EQ(0, p.nsso);
	EXPECT_EQ(MSL, p.nssa);
}

/*
 * What a controller says of Directives does not change under its host:
 * with the only namespace with streams gone, OACS and the effects log
 * still list them, and Identify (for all namespaces) lists no Streams;
 * the namespace back, its streams can be enabled and used without a
 * reset.
 */
TEST_F(nvmet, namespace_goes_and_comes)
{
	__u32 effects_send, effects_recv;
	int fd, oacs, sup, en;
	char msl[16];

	fd = open_ctrl(self->h.ctrl);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_attr(self->h.ns, "enable", "0"));
	ASSERT_EQ(0, directive_support(fd, &oacs, &effects_send,
				       &effects_recv));
	EXPECT_EQ(1, oacs);
	EXPECT_EQ(1, effects_send & 1);
	EXPECT_EQ(1, effects_recv & 1);
	ASSERT_EQ(0, identify_dirs(fd, 0xffffffff, &sup, &en));
	EXPECT_EQ(1, sup);
	/* A namespace that is only disabled is a path error, to retry. */
	EXPECT_EQ(SC_INTERNAL_PATH_ERROR, enable_streams(fd, 1, 1));

	snprintf(msl, sizeof(msl), "%d", MSL);
	ASSERT_EQ(0, ns_cycle(&self->h, msl));
	ASSERT_EQ(0, wait_ns(fd));
	ASSERT_EQ(0, enable_streams(fd, 1, 1));
	EXPECT_EQ(0, rw_dir(fd, 0x01, 0, DIR_STREAMS, MSL));
	close(fd);
}

/*
 * While the target namespace of @h is being disabled, held up by a write
 * in flight (the backing device completes each request after 2 s),
 * attribute @attr cannot change: the commands still in flight use the
 * state the namespace was enabled with.  Once disabled, it can.  The
 * namespace is enabled again, with @attr as it was.
 */
static void change_while_disabling(struct __test_metadata *_metadata,
				   const struct host *h, const char *attr,
				   const char *val)
{
	char old[64], path[300], inflight[64];
	pid_t writer, disabler;
	int fd, status, i, r, w = 0;

	ASSERT_EQ(0, sysfs_str(h->ns, attr, old, sizeof(old)));
	fd = open_ctrl(h->ctrl);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_attr(h->ns, "enable", "0"));
	ASSERT_EQ(0, write_attr(h->nullb, "power", "0"));
	ASSERT_EQ(0, write_attr(h->nullb, "irqmode", "2"));
	ASSERT_EQ(0, write_attr(h->nullb, "completion_nsec", "2000000000"));
	ASSERT_EQ(0, write_attr(h->nullb, "power", "1"));
	ASSERT_EQ(0, write_attr(h->ns, "enable", "1"));
	ASSERT_EQ(0, wait_ns(fd));

	writer = fork();
	ASSERT_LE(0, writer);
	if (!writer)
		_exit(rw_dir(fd, 0x01, 1, 0, 0) ? 1 : 0);
	/* The write is at the backing device. */
	snprintf(path, sizeof(path), "/sys/block/%s/inflight", BACKING);
	for (i = 0; i < 100 && w < 1; i++, usleep(10000))
		if (read_file(path, inflight, sizeof(inflight)) <= 0 ||
		    sscanf(inflight, "%d %d", &r, &w) != 2)
			w = 0;
	ASSERT_EQ(1, w);
	disabler = fork();
	ASSERT_LE(0, disabler);
	if (!disabler)
		_exit(write_attr(h->ns, "enable", "0") ? 1 : 0);
	for (i = 0; i < 100; i++, usleep(10000))
		if (!sysfs_num(h->ns, "enable"))
			break;
	/* Both still wait for the write: the namespace is being disabled. */
	ASSERT_EQ(0, sysfs_num(h->ns, "enable"));
	ASSERT_EQ(0, waitpid(writer, &status, WNOHANG));
	ASSERT_EQ(0, waitpid(disabler, &status, WNOHANG));
	EXPECT_NE(0, write_attr(h->ns, attr, val));
	EXPECT_EQ(atoll(old), sysfs_num(h->ns, attr));

	ASSERT_EQ(writer, waitpid(writer, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(disabler, waitpid(disabler, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0, write_attr(h->ns, attr, val));
	EXPECT_EQ(0, write_attr(h->ns, attr, old));
	ASSERT_EQ(0, write_attr(h->ns, "enable", "1"));
	ASSERT_EQ(0, wait_ns(fd));
	close(fd);
}

/* The stream count, while the namespace is being disabled. */
TEST_F(nvmet, streams_while_disabling)
{
	change_while_disabling(_metadata, &self->h, "streams", "255");
}

/*
 * A namespace of 255 streams, the most there are: DSPEC 255 is a
 * stream, 256 is an Invalid Field whose error location, in the error
 * log, is byte 54 of the command (DSPEC: CDW13 bits 31:16).  A read with
 * a directive reaches the backing device with no stream.
 */
TEST_F(nvmet, dspec_bounds)
{
	struct { __le64 count; __u8 rest[56]; } log[16];
	char *buf = malloc(1 << 20), *p;
	int fd, i, newest = 0, reads = 0;
	struct stats st;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, ns_cycle(&self->h, "255"));
	fd = open_ctrl(self->h.ctrl);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, wait_ns(fd));
	ASSERT_EQ(0, enable_streams(fd, 1, 1));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	EXPECT_EQ(0, rw_dir(fd, 0x01, 0, DIR_STREAMS, 255));
	EXPECT_EQ(SC_INVALID_FIELD, rw_dir(fd, 0x01, 1, DIR_STREAMS, 256));
	ASSERT_EQ(0, read_stats(self->h.nullb, &st));
	EXPECT_EQ(8, st.sectors[255]);
	EXPECT_EQ(-1, only(&st, (const int []){ 255, -1 }));

	ASSERT_EQ(0, admin(fd, 0x02, 0xffffffff, log, sizeof(log),
			   0x01 | (sizeof(log) / 4 - 1) << 16, 0, 0, NULL));
	for (i = 1; i < 16; i++)
		if (le64toh(log[i].count) > le64toh(log[newest].count))
			newest = i;
	/* Parameter Error Location: bytes 14-15 of the entry. */
	EXPECT_EQ(54, log[newest].rest[6] | log[newest].rest[7] << 8);

	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(BIO_QUEUE, "enable", "1"));
	EXPECT_EQ(0, rw_dir(fd, 0x02, 0, DIR_STREAMS, 7));
	ASSERT_EQ(0, write_attr(BIO_QUEUE, "enable", "0"));
	ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
	for (p = buf; (p = strstr(p, "block_bio_queue: ")); p++) {
		char *nl = strchr(p, '\n'), *rwbs = strchr(p + 17, ' ');

		if (!rwbs || rwbs[1] != 'R')
			continue;
		reads++;
		EXPECT_EQ(0, strncmp(strstr(p, "stream="), "stream=0",
				     nl ? nl - strstr(p, "stream=") : 8));
	}
	EXPECT_LE(1, reads);
	free(buf);
	close(fd);
}

/*
 * Open streams: a host with an allocation keeps at most that many open,
 * a write to one more releases the lowest; a change of the allocation
 * releases them all; without one, up to the pool (NSSA), at most MSL.
 */
TEST_F(nvmet, implicit_release)
{
	__u16 status[8] = { 0 };
	struct streams_params p;
	int i;

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 2,
			      NULL));
	for (i = 1; i <= 3; i++)
		ASSERT_EQ(0, write_dir(self->h.fd, i, DIR_STREAMS, i, i));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 2, 0, status,
			      sizeof(status), 0, NULL));
	EXPECT_EQ(2, status[0]);
	EXPECT_EQ(2, status[1]);
	EXPECT_EQ(3, status[2]);
	/* Without the allocation: none open, then the pool, all MSL. */
	ASSERT_EQ(0, dir_send(self->h.fd, 1, DIR_STREAMS, 2, 0, 0));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nso);
	EXPECT_EQ(0, p.nsso);
	for (i = 1; i <= MSL; i++)
		ASSERT_EQ(0, write_dir(self->h.fd, i, DIR_STREAMS, i, i));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.nso);
	EXPECT_EQ(MSL, p.nsso);
	EXPECT_EQ(MSL, p.nssa);
	/* An allocation of 1: the pool shrinks, the open streams go. */
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 1,
			      NULL));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nso);
	EXPECT_EQ(MSL - 1, p.nssa);
	for (i = 1; i <= MSL; i++)
		EXPECT_EQ(0, check_at(self->h.dev, i * 4096, 4096, i));
}

#define STRESS_SECONDS	8

/*
 * One job of the stress test, until @stop is set: 0 reads and resets
 * stream_stats, 1 disables and enables the namespace with a new stream
 * count, 2 sends writes with streams and directive commands through
 * controller @fd.  Errors are expected; the kernel must stay sound.
 * (No controller resets: with namespaces going and coming on the host,
 * they meet a race of 6.12's elevator re-registration that is not the
 * series'.)
 */
static void stress_job(const struct host *h, int job, int fd,
		       unsigned long *stop)
{
	char buf[16384], val[16];
	__u16 status[256];
	unsigned int i;

	srand(job + 1);
	for (i = 0; !__atomic_load_n(stop, __ATOMIC_RELAXED); i++) {
		switch (job) {
		case 0:
			snprintf(buf, sizeof(buf), "%s/stream_stats", h->ns);
			read_file(buf, buf, sizeof(buf));
			if (i % 4 == 0)
				write_attr(h->ns, "stream_stats", "0");
			break;
		case 1:
			snprintf(val, sizeof(val), "%d", 1 + rand() % 255);
			ns_cycle(h, val);
			usleep(20000);
			break;
		default:
			rw_dir(fd, 0x01, rand() % 64, DIR_STREAMS, rand() % 300);
			enable_streams(fd, 1, rand() % 2);
			dir_recv(fd, 1, DIR_STREAMS, 3, 0, NULL, 0, rand() % 8,
				 NULL);
			dir_recv(fd, 1, DIR_STREAMS, 2, 0, status,
				 sizeof(status), 0, NULL);
			dir_send(fd, 1, DIR_STREAMS, 1 + rand() % 2,
				 rand() % 300, 0);
			break;
		}
	}
}

/*
 * stream_stats read and reset, the namespace disabled and enabled with
 * other stream counts, and writes and directive commands, all at once:
 * the target stays sound (on a kernel with KASAN and lockdep, neither
 * reports anything) and works afterwards.
 */
TEST_F(nvmet, stress)
{
	unsigned long *stop;
	pid_t pid[3];
	int fd, i, status;
	char msl[16];
	struct stats st;

	fd = open_ctrl(self->h.ctrl);
	ASSERT_LE(0, fd);
	stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, stop);
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			stress_job(&self->h, i, fd, stop);
			_exit(0);
		}
	}
	sleep(STRESS_SECONDS);
	__atomic_store_n(stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	munmap(stop, 4096);

	/* Still correct: streams, counters, data. */
	snprintf(msl, sizeof(msl), "%d", MSL);
	ASSERT_EQ(0, ns_cycle(&self->h, msl));
	ASSERT_EQ(0, wait_ns(fd));
	ASSERT_EQ(0, enable_streams(fd, 1, 1));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, rw_dir(fd, 0x01, 5, DIR_STREAMS, 2));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(8, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, (const int []){ 2, -1 }));
	close(fd);
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
	EXPECT_EQ(HOST_STREAMS, max_streams(self->h.dev));
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
	bool fdp;	/* FDP placement handles, not Streams */
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
FIXTURE_VARIANT_ADD(fs, ext4_fdp_fsync) { &fs_ext4, FLUSH_FSYNC, true };
FIXTURE_VARIANT_ADD(fs, ext4_fdp_direct) { &fs_ext4, FLUSH_DIRECT, true };
FIXTURE_VARIANT_ADD(fs, xfs_fdp_fsync) { &fs_xfs, FLUSH_FSYNC, true };
FIXTURE_VARIANT_ADD(fs, xfs_fdp_direct) { &fs_xfs, FLUSH_DIRECT, true };
FIXTURE_VARIANT_ADD(fs, btrfs_fdp_fsync) { &fs_btrfs, FLUSH_FSYNC, true };
FIXTURE_VARIANT_ADD(fs, btrfs_fdp_direct) { &fs_btrfs, FLUSH_DIRECT, true };

FIXTURE_SETUP(fs)
{
	if (variant->fdp)
		nvmet_up_ns(_metadata, &self->h, "loop", 0, FDP_HANDLES, true,
			    512);
	else
		nvmet_up(_metadata, &self->h, "loop", HOST_MSL, true, 512);
	close(self->h.fd);
	self->h.fd = -1;
	ASSERT_EQ(variant->fdp ? FDP_HANDLES : HOST_STREAMS,
		  max_streams(self->h.dev));
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
 * The host's write commands to its disks in the trace (nvme_setup_cmd),
 * by directive type (DTYPE in ctrl: 0 none, 1 Streams, 2 Data Placement)
 * and DSPEC (the top of dsmgmt; 0 for none): their number and blocks.
 */
struct wire {
	int writes[3][MAX_IDS];
	unsigned long long blocks[3][MAX_IDS];
};

/* -1 if a write carries another directive type or the trace lost events. */
static int wire_writes(struct wire *w)
{
	char *buf = malloc(4 << 20), *line, *p;
	unsigned int ctrl, dsmgmt, len, t, d;
	int ret = 0;

	memset(w, 0, sizeof(*w));
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
		t = (ctrl & 0xf0) >> 4;
		d = t ? dsmgmt >> 16 : 0;
		if (t > 2 || d >= MAX_IDS) {
			ret = -1;
			continue;
		}
		w->writes[t][d]++;
		w->blocks[t][d] += len + 1;
	}
	free(buf);
	return ret;
}

/*
 * The blocks written per stream on the wire, in @blocks: by DSPEC with
 * Streams, or with @fdp by placement identifier, of handle stream - 1;
 * -1 if a write carries the other directive.
 */
static int wire_blocks(unsigned long long *blocks, bool fdp)
{
	struct wire w;
	int ret = wire_writes(&w), s;

	blocks[0] = w.blocks[0][0];
	for (s = 1; s < MAX_IDS; s++)
		blocks[s] = fdp ? w.blocks[2][s - 1] : w.blocks[1][s];
	for (s = 0; s < MAX_IDS; s++)
		if (w.writes[fdp ? 1 : 2][s])
			ret = -1;
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
	ASSERT_EQ(0, wire_blocks(wire, variant->fdp));
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

/*
 * Flexible Data Placement at the target (fixture fdp_target: 4 placement
 * handles of 1 MiB reclaim units, the host leaving them alone), seen
 * through nvme-cli, which this project did not write, and raw commands:
 * Identify, the FDP feature, the four log pages, handle status and
 * update, events, writes per handle at the target and the null_blk
 * device behind it, and every error the specification gives.
 */
#define TGT_HANDLES	4
#define DIR_FDP		2
#define SC_CMD_SEQ_ERROR	0x400c
#define SC_FDP_DISABLED		0x4029

FIXTURE(fdp_target) {
	struct host h;
	char cmd[1024];
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
	if (self->h.fd > 0)
		close(self->h.fd);
	nvmet_cleanup();
}

/*
 * Run "nvme @sub @dev @args": it succeeds, and @pattern matches @n lines
 * of what it prints.
 */
static int cli_count(const char *sub, const char *dev, const char *args,
		     const char *pattern, int n)
{
	char line[1024];

	snprintf(line, sizeof(line),
		 "out=$(nvme %s %s %s 2>&1) && test \"$(printf '%%s\\n' \"$out\" | grep -c -- '%s')\" = %d",
		 sub, dev, args, pattern, n);
	return system(line);
}

/* Run "nvme @sub @dev @args": it fails, and says @pattern. */
static int cli_fails(const char *sub, const char *dev, const char *args,
		     const char *pattern)
{
	char line[1024];

	snprintf(line, sizeof(line),
		 "! out=$(nvme %s %s %s 2>&1) && printf '%%s\\n' \"$out\" | grep -q -- '%s'",
		 sub, dev, args, pattern);
	return system(line);
}

/* I/O Management Receive (12h) or Send (1Dh) of @len bytes. */
static int io_mgmt(int fd, __u8 opcode, __u32 cdw10, void *data, __u32 len)
{
	struct nvme_passthru_cmd cmd = {
		.opcode = opcode, .nsid = 1, .addr = (uintptr_t)data,
		.data_len = len, .cdw10 = cdw10,
		.cdw11 = opcode == 0x12 && len ? len / 4 - 1 : 0,
	};
	int ret = ioctl(fd, NVME_IOCTL_IO_CMD, &cmd);

	return ret < 0 ? -errno : ret & ~SC_MORE;
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
 * Placement handles given to a namespace after the controller connected,
 * whose CTRATT said no FDP and goes on saying so: the namespace shows that
 * controller no endurance group and refuses its placed writes and I/O
 * Management commands, as a namespace without handles does.
 */
TEST_F(nvmet, fdp_after_connect)
{
	unsigned char *id;
	char msl[16];

	ASSERT_EQ(0, posix_memalign((void **)&id, 4096, 4096));
	snprintf(msl, sizeof(msl), "%d", MSL);
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, msl, "4"));
	ASSERT_EQ(0, rescan_and_settle(&self->h));
	ASSERT_EQ(0, admin(self->h.fd, 0x06, 1, id, 4096, 0, 0, 0, NULL));
	EXPECT_EQ(0, id[102] | id[103] << 8);	/* ENDGID */
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, 2, 0, 1));
	EXPECT_NE(0, io_mgmt(self->h.fd, 0x12, 1, id, 4096));
	free(id);
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

/*
 * The host (fixture fdp_host: FDP_HANDLES placement handles, the host
 * using them): max_streams is their number; stream s goes out with DTYPE
 * 2 and the placement identifier of handle s - 1, on the wire and at the
 * target, and reaches the null_blk device as stream s.
 */
FIXTURE(fdp_host) {
	struct host h;
};

FIXTURE_VARIANT(fdp_host) {
	const char *transport;
};

FIXTURE_VARIANT_ADD(fdp_host, loop) { .transport = "loop" };
FIXTURE_VARIANT_ADD(fdp_host, tcp) { .transport = "tcp" };

FIXTURE_SETUP(fdp_host)
{
	nvmet_up_ns(_metadata, &self->h, variant->transport, 0, FDP_HANDLES,
		    true, 64);
}

FIXTURE_TEARDOWN(fdp_host)
{
	if (self->h.fd > 0)
		close(self->h.fd);
	nvmet_cleanup();
	write_attr(SETUP_CMD, "enable", "0");
}

/*
 * The writes of the trace that carry a directive, by DTYPE and DSPEC, in
 * @dtype2 (placement identifier) and @dtype1 (stream); -1 if the trace
 * lost events.
 */
static int wire_directives(int *dtype1, int *dtype2)
{
	struct wire w;
	int ret = wire_writes(&w);

	memcpy(dtype1, w.writes[1], sizeof(w.writes[1]));
	memcpy(dtype2, w.writes[2], sizeof(w.writes[2]));
	return ret;
}

TEST_F(fdp_host, placed_writes)
{
	static const struct { int id, stream; } w[] = {
		{ 1, 1 }, { 2, 2 }, { 6, 6 }, { 0, 0 }, { 9, 3 }, { 200, 2 },
	};
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 };
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats target, backing;
	int i, fd;

	EXPECT_EQ(FDP_HANDLES, max_streams(self->h.dev));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, w[i].id);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, write_at(fd, i * 8192, 8192, w[i].id));
		close(fd);
		want[w[i].stream] += 16;
	}
	/* Buffered: written back with the ID of the disk's inode. */
	fd = open_stream(self->h.dev, O_WRONLY, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 1 << 20, 65536, 5));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	want[5] += 128;
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));

	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	for (i = 0; i <= FDP_HANDLES; i++) {
		EXPECT_EQ(want[i], target.sectors[i]) TH_LOG("stream %d", i);
		EXPECT_EQ(want[i], backing.sectors[i]) TH_LOG("stream %d", i);
	}
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	/* Placement identifier s - 1 for stream s; never Streams. */
	for (i = 1; i <= FDP_HANDLES; i++)
		EXPECT_EQ(want[i] ? 1 : 0, !!dtype2[i - 1]) TH_LOG("PID %d", i - 1);
	for (i = FDP_HANDLES; i < MAX_IDS; i++)
		EXPECT_EQ(0, dtype2[i]);
	for (i = 0; i < MAX_IDS; i++)
		EXPECT_EQ(0, dtype1[i]);
	for (i = 0; i < ARRAY_SIZE(w); i++)
		EXPECT_EQ(0, check_at(self->h.dev, i * 8192, 8192, w[i].id));
	EXPECT_EQ(0, check_at(self->h.dev, 1 << 20, 65536, 5));
}

/*
 * A namespace that offers both FDP and the Streams directive: FDP is
 * used.  255 placement handles, the most: max_streams 251 (four for
 * lifetime hints), and stream 251 goes to placement identifier 250.
 */
TEST_F(fdp_host, bounds_and_both)
{
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 };
	int fd;

	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "8", "255"));
	ASSERT_EQ(0, wait_max_streams(self->h.dev, 251));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 251);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 251));
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	EXPECT_EQ(1, dtype2[250]);
	for (fd = 0; fd < MAX_IDS; fd++)
		EXPECT_EQ(0, dtype1[fd]);
}

/*
 * A second port of @transport, its ANA group in @ana_state, and a second
 * controller of this host connected through it; its name in @ctrl.
 */
static int connect_second_path(const char *transport, const char *ana_state,
			       char *ctrl, size_t len)
{
	char opts[256];
	int fd, n, instance;

	if (mkdir(PORT2_DIR, 0755) ||
	    write_attr(PORT2_DIR, "addr_trtype", transport) ||
	    write_attr(PORT2_DIR "/ana_groups/1", "ana_state", ana_state))
		return -1;
	if (!strcmp(transport, "tcp") &&
	    (write_attr(PORT2_DIR, "addr_adrfam", "ipv4") ||
	     write_attr(PORT2_DIR, "addr_traddr", "127.0.0.1") ||
	     write_attr(PORT2_DIR, "addr_trsvcid", TCP_PORT2)))
		return -1;
	/* A loop port is told apart by its address. */
	if (strcmp(transport, "tcp") && write_attr(PORT2_DIR, "addr_traddr", "2"))
		return -1;
	if (symlink(NQN_DIR, PORT2_DIR "/subsystems/" NQN))
		return -1;
	fd = open("/dev/nvme-fabrics", O_RDWR);
	if (fd < 0)
		return -1;
	n = snprintf(opts, sizeof(opts), "transport=%s,traddr=%s%s,nqn=%s",
		     transport, strcmp(transport, "tcp") ? "2" : "127.0.0.1",
		     strcmp(transport, "tcp") ? "" : ",trsvcid=" TCP_PORT2, NQN);
	if (write(fd, opts, n) != n) {
		close(fd);
		return -1;
	}
	n = read(fd, opts, sizeof(opts) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	opts[n] = 0;
	if (sscanf(opts, "instance=%d", &instance) != 1)
		return -1;
	snprintf(ctrl, len, "nvme%d", instance);
	return 0;
}

/*
 * Multipath: a second path, whose port's ANA group is inaccessible when
 * it connects, cannot report its placement handles (I/O Management
 * Receive is an I/O command); it does not take the multipath disk's
 * streams down to none.  Once the group is optimized, the path is
 * scanned again and has them too.
 */
TEST_F(fdp_host, inaccessible_path)
{
	char ctrl2[64];
	int i;

	ASSERT_EQ(0, connect_second_path(variant->transport, "inaccessible",
					 ctrl2, sizeof(ctrl2)));
	for (i = 0; i < 100 && path_max_streams(&self->h, ctrl2, 1) < 0; i++)
		usleep(100000);
	EXPECT_EQ(0, path_max_streams(&self->h, ctrl2, 1));
	EXPECT_EQ(FDP_HANDLES, path_max_streams(&self->h, self->h.ctrl, 1));
	EXPECT_EQ(FDP_HANDLES, max_streams(self->h.dev));

	ASSERT_EQ(0, write_attr(PORT2_DIR "/ana_groups/1", "ana_state",
				"optimized"));
	for (i = 0; i < 100 &&
	     path_max_streams(&self->h, ctrl2, 1) != FDP_HANDLES; i++)
		usleep(100000);
	EXPECT_EQ(FDP_HANDLES, path_max_streams(&self->h, ctrl2, 1));
	EXPECT_EQ(FDP_HANDLES, max_streams(self->h.dev));
}

/*
 * reset_and_wait(), and then wait until the scan that follows the reset
 * has asked for the FDP feature (Get Features 1Dh) and had time to act on
 * the answer; 0 once it has.
 */
static int reset_and_scan(const struct host *h, long long want)
{
	char *buf = malloc(1 << 20);
	int i, ret = -1;

	if (!buf || trace_clear() || write_attr(SETUP_CMD, "enable", "1") ||
	    reset_and_wait(h->ctrl, h->dev, want))
		goto out;
	for (i = 0; i < 50 && ret; i++, usleep(100000))
		if (read_file(TRACING "/trace", buf, 1 << 20) > 0 &&
		    strstr(buf, "fid=0x1d"))
			ret = 0;
	usleep(500000);
	if (max_streams(h->dev) != want)
		ret = -1;
out:
	write_attr(SETUP_CMD, "enable", "0");
	free(buf);
	return ret;
}

/*
 * Get Features FDP fails in a reset (the host's fault injection turns its
 * completion into Invalid Field) on a namespace that also offers the
 * Streams directive: the host uses Streams, with no line about FDP (the
 * namespace is not new), and the next reset brings FDP back.
 */
TEST_F(fdp_host, get_features_fails)
{
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 };
	char *buf = malloc(1 << 20);
	int fd;

	ASSERT_NE(NULL, buf);
	if (!have_fault_injection(self->h.ctrl))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "8", "6"));
	ASSERT_EQ(0, wait_max_streams(self->h.dev, FDP_HANDLES));
	/* FDP_HANDLES before as after: let the scan end. */
	sleep(1);
	/* Streams: 8, of which four for lifetime hints. */
	EXPECT_EQ(0, reset_failing(self->h.ctrl, self->h.dev,
				   "nvme_admin_get_features fid=0x1d",
				   FDP_HANDLES, 4, buf));
	free(buf);
	EXPECT_EQ(0, dmesg_count("FDP not used"));

	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 3));
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	EXPECT_EQ(1, dtype1[3]);
	for (fd = 0; fd < MAX_IDS; fd++)
		EXPECT_EQ(0, dtype2[fd]);

	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, FDP_HANDLES));
	EXPECT_EQ(0, check_at(self->h.dev, 0, 4096, 3));
}

/*
 * No write fails or is lost because of its placement while tagged
 * writers run through a controller reset, fewer handles under the host,
 * FDP turned off and on again under the host, and FDP turned off without
 * telling it; placement comes back each time.
 */
TEST_F_TIMEOUT(fdp_host, writes_never_fail, 120)
{
	struct writers w = { };
	struct stats st;
	__u32 aec;

	ASSERT_EQ(0, writers_start(&w, self->h.dev));
	EXPECT_EQ(0, writers_progress(&w, 64));
	EXPECT_EQ(0, reset_and_scan(&self->h, FDP_HANDLES));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("placement back after the reset");
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, -1 }));

	/*
	 * Two handles instead of six: writes with the placement identifiers
	 * of handles gone are placed by the target on handle 0 until the
	 * host's scan; then stream 2 is handle 1, and stream 3 folds.
	 */
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "0", "2"));
	EXPECT_EQ(0, wait_max_streams(self->h.dev, 2));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 1, 2, -1 }));
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "0", "6"));
	EXPECT_EQ(0, wait_max_streams(self->h.dev, FDP_HANDLES));
	EXPECT_EQ(0, writers_progress(&w, 64));

	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "0"));
	EXPECT_EQ(0, wait_max_streams(self->h.dev, 0));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));

	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "1"));
	EXPECT_EQ(0, wait_max_streams(self->h.dev, FDP_HANDLES));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, -1 }));

	/*
	 * FDP off with no notice to the host (Namespace Attribute Notices
	 * off) and max_retries 0: a write is refused, once, and goes again
	 * without placement; the scan that follows sees FDP off.  FDP on
	 * again and a scan: placement is back, with no reset.
	 */
	ASSERT_EQ(0, admin(self->h.fd, 0x0a, 0, NULL, 0, 0x0b, 0, 0, &aec));
	ASSERT_EQ(0, admin(self->h.fd, 0x09, 0, NULL, 0, 0x0b,
			   aec & ~(1U << 8), 0, NULL));
	ASSERT_EQ(0, write_attr(NVME_CORE, "max_retries", "0"));
	ASSERT_EQ(0, system("dmesg -C"));
	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "0"));
	EXPECT_EQ(0, wait_max_streams(self->h.dev, 0));
	EXPECT_EQ(0, writers_progress(&w, 256));
	EXPECT_EQ(1, dmesg_count("FDP not used: a write was refused"));
	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "1"));
	ASSERT_EQ(0, rescan_and_settle(&self->h));
	EXPECT_EQ(0, wait_max_streams(self->h.dev, FDP_HANDLES));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("placement back");
	EXPECT_EQ(0, write_attr(NVME_CORE, "max_retries", "5"));
	EXPECT_EQ(0, admin(self->h.fd, 0x09, 0, NULL, 0, 0x0b, aec, 0, NULL));

	EXPECT_EQ(0, writers_stop(&w));
	EXPECT_EQ(0, writers_check(self->h.dev));
}

/* nvme_core.fdp=0: after a reset no FDP command and no placement. */
TEST_F(fdp_host, fdp_off)
{
	char *buf = malloc(1 << 20);
	int on, t;

	ASSERT_NE(NULL, buf);
	/* The trace shows the set-up with the switch on, and none off. */
	for (on = 1; on >= 0; on--) {
		ASSERT_EQ(0, write_attr(NVME_CORE, "fdp", on ? "Y" : "N"));
		ASSERT_EQ(0, trace_clear());
		ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
		ASSERT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev,
					    on ? FDP_HANDLES : 0));
		/* With the switch on, the scan after the reset sets FDP up. */
		for (t = 0; t < (on ? 50 : 1); t++) {
			usleep(t ? 100000 : 0);
			ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
			if (strstr(buf, "fid=0x1d") &&
			    strstr(buf, "nvme_cmd_io_mgmt_recv"))
				break;
		}
		ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
		EXPECT_NE(NULL, strstr(buf, "nvme_admin_identify"));
		EXPECT_EQ(!on, !strstr(buf, "nvme_cmd_io_mgmt_recv"));
		EXPECT_EQ(!on, !strstr(buf, "fid=0x1d"));
	}
	free(buf);
	untagged_at_target(_metadata, &self->h);
}

/*
 * FDP disabled in the endurance group when the host sets up (a reset):
 * no placement, no log line, writes untagged.
 */
TEST_F(fdp_host, disabled)
{
	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "0"));
	ASSERT_EQ(0, wait_max_streams(self->h.dev, 0));
	ASSERT_EQ(0, system("dmesg -C"));
	ASSERT_EQ(0, reset_and_scan(&self->h, 0));
	EXPECT_EQ(0, dmesg_count("FDP not used"));
	untagged_at_target(_metadata, &self->h);
}

/*
 * A device that refuses a placed write with FDP Disabled rather than
 * Invalid Field (the host's fault injection on the path turns the
 * completion of the write into that status): the write goes again
 * without placement and succeeds, the host says so once, and the next
 * reset brings placement back.
 */
TEST_F(fdp_host, refused_fdp_disabled)
{
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 };
	char fi[400];
	int fd;

	snprintf(fi, sizeof(fi), "/sys/kernel/debug/nvme%dc%dn1/fault_inject",
		 atoi(self->h.dev + strlen("/dev/nvme")),
		 atoi(self->h.ctrl + strlen("nvme")));
	if (access(fi, F_OK))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, system("dmesg -C"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	/* The next completion on the path, that of this write: status 29h. */
	ASSERT_EQ(0, write_attr(fi, "space", "0"));
	ASSERT_EQ(0, write_attr(fi, "times", "1"));
	ASSERT_EQ(0, write_attr(fi, "status", "0x29"));
	ASSERT_EQ(0, write_attr(fi, "verbose", "1"));
	ASSERT_EQ(0, write_attr(fi, "probability", "100"));
	EXPECT_EQ(0, write_at(fd, 0, 4096, 3));
	EXPECT_EQ(0, write_attr(fi, "probability", "0"));
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	EXPECT_EQ(1, dmesg_count("FDP not used: a write was refused"));
	/* Sent twice: with placement (handle 2), then without. */
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	EXPECT_EQ(1, dtype2[2]);
	EXPECT_EQ(0, check_at(self->h.dev, 0, 4096, 3));
	EXPECT_EQ(0, reset_and_scan(&self->h, FDP_HANDLES));
}

/*
 * Make the next @times completions on the path of @h fail with Invalid
 * Field in Command and DNR (the host's fault injection); 0 turns it off.
 * -1 without fault injection.
 */
static int fail_completions(const struct host *h, int times)
{
	char fi[400], n[16];

	snprintf(fi, sizeof(fi), "/sys/kernel/debug/nvme%dc%dn1/fault_inject",
		 atoi(h->dev + strlen("/dev/nvme")),
		 atoi(h->ctrl + strlen("nvme")));
	if (access(fi, F_OK))
		return -1;
	snprintf(n, sizeof(n), "%d", times);
	if (!times)
		return write_attr(fi, "probability", "0");
	return write_attr(fi, "space", "0") || write_attr(fi, "times", n) ||
	       write_attr(fi, "status", "0x2") ||
	       write_attr(fi, "dont_retry", "1") ||
	       write_attr(fi, "verbose", "1") ||
	       write_attr(fi, "probability", "100") ? -1 : 0;
}

/*
 * An Invalid Field that the directive did not cause: the write with a
 * stream is refused, and so is the same write sent again without it.
 * The error goes up as it does for a write without a stream, and the
 * namespace keeps its streams: no log line, the next write carries the
 * directive.
 */
TEST_F(host, invalid_field_not_the_stream)
{
	struct wire w;
	int fd, err;

	if (fail_completions(&self->h, 0))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	ASSERT_EQ(0, system("dmesg -C"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));

	/* Without a stream: the write fails, sent once. */
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fail_completions(&self->h, 1));
	EXPECT_EQ(-1, write_at(fd, 0, 4096, 0));
	err = errno;
	close(fd);

	/* With one: the same, sent with the directive, then without. */
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fail_completions(&self->h, 2));
	EXPECT_EQ(-1, write_at(fd, 4096, 4096, 3));
	EXPECT_EQ(err, errno);
	EXPECT_EQ(0, fail_completions(&self->h, 0));

	/* Streams stay: the next write goes in stream 3. */
	EXPECT_EQ(0, write_at(fd, 8192, 4096, 3));
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	EXPECT_EQ(0, dmesg_count("refused for its stream"));
	ASSERT_EQ(0, wire_writes(&w));
	EXPECT_EQ(2, w.writes[0][0]);
	EXPECT_EQ(2, w.writes[1][3]);
	EXPECT_EQ(0, check_at(self->h.dev, 8192, 4096, 3));
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
