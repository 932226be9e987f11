/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NVMe target of the stream ID selftests: a subsystem with one
 * namespace on a null_blk device, exported over the loop or TCP
 * transport and connected to by the host; admin and I/O passthrough
 * commands; what sysfs and the trace show of the host's side; a wait for
 * a condition, and a runner of external programs (nvme-cli, mkfs, fio).
 *
 * Include it after defining _GNU_SOURCE.
 */
#ifndef STREAMID_NVMET_H
#define STREAMID_NVMET_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <linux/types.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "streamid.h"

/* --- Waiting for a condition, and running a program. */

/* The longest sleep between two looks at the condition of wait_until(). */
#define WAIT_MAX_US	50000

struct wait {
	struct timespec end;
	unsigned int delay_us;
};

static inline void wait_begin(struct wait *w, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, &w->end);
	w->end.tv_sec += timeout_ms / 1000;
	w->end.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (w->end.tv_nsec >= 1000000000L) {
		w->end.tv_sec++;
		w->end.tv_nsec -= 1000000000L;
	}
	w->delay_us = 1000;
}

/* Sleep before the next look, unless the time is up: then false. */
static inline bool wait_again(struct wait *w)
{
	struct timespec now;
	long long left;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left = (w->end.tv_sec - now.tv_sec) * 1000000LL +
	       (w->end.tv_nsec - now.tv_nsec) / 1000;
	if (left <= 0)
		return false;
	usleep(left < w->delay_us ? left : w->delay_us);
	w->delay_us = w->delay_us * 2 < WAIT_MAX_US ? w->delay_us * 2 :
		      WAIT_MAX_US;
	return true;
}

/*
 * Evaluate @cond until it is true or @timeout_ms have passed, sleeping
 * 1 ms after the first look and twice as long after each next one, up to
 * WAIT_MAX_US; the last look is at the deadline.  0 once @cond held, -1
 * if it did not in time.
 */
#define wait_until(cond, timeout_ms) ({					\
	struct wait __w;						\
	int __ret = -1;							\
									\
	wait_begin(&__w, (timeout_ms));					\
	do {								\
		if (cond) {						\
			__ret = 0;					\
			break;						\
		}							\
	} while (wait_again(&__w));					\
	__ret;								\
})

/*
 * Run the program that @fmt, formatted as printf() does, names: its words,
 * split at blanks (no quoting: no argument can hold one), are the argv,
 * and the first is looked for in PATH; no shell.  With @out, what it
 * writes to standard output and error is kept there, at most @len - 1
 * bytes of it and a '\0'; without, it goes to /dev/null.  Its exit
 * status; 127 if it could not be run, -1 if it was killed or not started.
 */
static inline int __printf(3, 4)
run_cmd(char *out, size_t len, const char *fmt, ...)
{
	char line[1024], junk[4096], *argv[64], *save, *w;
	int fds[2] = { -1, -1 }, argc = 0, status, n;
	size_t got = 0, room;
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line))
		return -1;
	for (w = strtok_r(line, " \t", &save); w && argc < 63;
	     w = strtok_r(NULL, " \t", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	if (!argc || w || (out && (!len || pipe2(fds, O_CLOEXEC))))
		return -1;
	pid = fork();
	if (!pid) {
		n = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(n, 0);
		dup2(out ? fds[1] : n, 1);
		dup2(out ? fds[1] : n, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out) {
		close(fds[1]);
		/* Read to the end, so that it never blocks on a full pipe. */
		while (pid > 0) {
			room = len - 1 - got;
			n = read(fds[0], room ? out + got : junk,
				 room ? room : sizeof(junk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += room ? n : 0;
		}
		close(fds[0]);
		out[got] = '\0';
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * How many lines of @text match the basic regular expression @re, as
 * "grep -c" counts them; -1 if @re is not one.
 */
static inline int grep_count(const char *text, const char *re)
{
	char *copy = strdup(text), *line, *save;
	regex_t rx;
	int n = 0;

	if (!copy || regcomp(&rx, re, REG_NOSUB)) {
		free(copy);
		return -1;
	}
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		n += !regexec(&rx, line, 0, NULL, 0);
	regfree(&rx);
	free(copy);
	return n;
}

/* The output of an nvme-cli command, whatever it prints. */
#define CLI_OUT		(256 << 10)
/* For cli_count(): one line or more. */
#define ANY_LINES	-1

/*
 * Run "nvme @sub @dev @args": 0 if it succeeds and @n lines of what it
 * prints (ANY_LINES: at least one) match @pattern, a basic regular
 * expression as grep takes; without @pattern, 0 if it succeeds.
 */
static inline int cli_count(const char *sub, const char *dev,
			    const char *args, const char *pattern, int n)
{
	char *out = malloc(CLI_OUT);
	int ret = -1, lines;

	if (out && !run_cmd(out, CLI_OUT, "nvme %s %s %s", sub, dev, args)) {
		lines = pattern ? grep_count(out, pattern) : 0;
		ret = lines >= 0 && (n == ANY_LINES ? lines > 0 : lines == n) ?
		      0 : -1;
	}
	free(out);
	return ret;
}

/* --- The target, and the host connected to it. */

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
/* The reclaim unit size of the FDP namespaces of these tests. */
#define FDP_RU_SIZE	1048576

/*
 * NVMe status codes as the ioctls return them, with DNR (0x4000) and
 * without More (0x2000), which only says the error log has an entry.
 */
#define SC_MORE			0x2000
#define SC_SUCCESS		0x0000
#define SC_INVALID_OPCODE	0x4001
#define SC_INVALID_FIELD	0x4002
#define SC_SGL_INVALID_DATA	0x400f

enum { DIR_IDENTIFY = 0, DIR_STREAMS = 1, DIR_FDP = 2 };

/* One namespace of a target and the host connected to it. */
struct host {
	char nullb[256];	/* backing device, configfs */
	char ns[256];		/* target namespace, configfs */
	char dev[300];		/* host namespace block device */
	char ctrl[300];		/* host controller, nvmeN */
	int fd;
};

static inline int admin(int fd, __u8 opcode, __u32 nsid, void *data,
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
static inline int dir_recv(int fd, __u32 nsid, int dtype, int doper,
			   int dspec, void *data, __u32 len, __u32 cdw12,
			   __u32 *result)
{
	return admin(fd, 0x1a, nsid, data, len, len ? len / 4 - 1 : 0,
		     doper | dtype << 8 | dspec << 16, cdw12, result);
}

static inline int dir_send(int fd, __u32 nsid, int dtype, int doper,
			   int dspec, __u32 cdw12)
{
	return admin(fd, 0x19, nsid, NULL, 0, 0,
		     doper | dtype << 8 | dspec << 16, cdw12, NULL);
}

static inline int enable_streams(int fd, __u32 nsid, int on)
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

static inline int streams_params(int fd, struct streams_params *p)
{
	return dir_recv(fd, 1, DIR_STREAMS, 1, 0, p, sizeof(*p), 0, NULL);
}

/* Byte 0 of the supported and enabled bitmaps of the Identify directive. */
static inline int identify_dirs(int fd, __u32 nsid, int *supported,
				int *enabled)
{
	__u8 buf[4096];
	int ret = dir_recv(fd, nsid, DIR_IDENTIFY, 1, 0, buf, sizeof(buf), 0,
			   NULL);

	*supported = buf[0];
	*enabled = buf[32];
	return ret;
}

/*
 * What the controller says of Directives: the OACS bit (Identify
 * Controller) and the effects log entries (ACS[19h] and ACS[1Ah]) of
 * Directive Send and Receive; 0 on success.
 */
static inline int directive_support(int fd, int *oacs, __u32 *send,
				    __u32 *recv)
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
 * Read or write (@opcode) 4 KiB at block (4 KiB) @blk with directive
 * @dtype/@dspec; a write writes the pattern for @id.
 */
static inline int io_dir(int fd, __u8 opcode, int blk, int dtype, int dspec,
			 int id)
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
	fill(buf, 4096, blk * 4096, id);
	cmd.addr = (uintptr_t)buf;
	ret = ioctl(fd, NVME_IOCTL_IO_CMD, &cmd);
	free(buf);
	return ret < 0 ? -errno : ret & ~SC_MORE;
}

/* Write the pattern for @id at block @blk, stream @dspec. */
static inline int write_dir(int fd, int blk, int dtype, int dspec, int id)
{
	return io_dir(fd, 0x01, blk, dtype, dspec, id);
}

/* Read or write (@opcode) block @blk with directive @dtype/@dspec. */
static inline int rw_dir(int fd, __u8 opcode, int blk, int dtype, int dspec)
{
	return io_dir(fd, opcode, blk, dtype, dspec, 0);
}

/* I/O Management Receive (12h) or Send (1Dh) of @len bytes. */
static inline int io_mgmt(int fd, __u8 opcode, __u32 cdw10, void *data,
			  __u32 len)
{
	struct nvme_passthru_cmd cmd = {
		.opcode = opcode, .nsid = 1, .addr = (uintptr_t)data,
		.data_len = len, .cdw10 = cdw10,
		.cdw11 = opcode == 0x12 && len ? len / 4 - 1 : 0,
	};
	int ret = ioctl(fd, NVME_IOCTL_IO_CMD, &cmd);

	return ret < 0 ? -errno : ret & ~SC_MORE;
}

/*
 * In @name, the first entry of @dir, other than @not, whose attribute
 * @attr reads @want; false if there is none.
 */
static inline bool sysfs_find(const char *dir, const char *attr,
			      const char *want, const char *not, char *name,
			      size_t len)
{
	char path[512], buf[256];
	struct dirent *d;
	bool found = false;
	DIR *dp = opendir(dir);

	while (dp && !found && (d = readdir(dp))) {
		snprintf(path, sizeof(path), "%s/%s/%s", dir, d->d_name, attr);
		if ((!not || strcmp(d->d_name, not)) &&
		    read_file(path, buf, sizeof(buf)) > 0 &&
		    !strcmp(buf, want)) {
			snprintf(name, len, "%s", d->d_name);
			found = true;
		}
	}
	if (dp)
		closedir(dp);
	return found;
}

/* The host's disk (not a hidden path) of subsystem @nqn, if there. */
static inline bool find_disk(const char *nqn, char *dev, size_t len)
{
	char path[512], buf[256];
	struct dirent *d;
	bool found = false;
	DIR *dp = opendir("/sys/block");

	while (dp && !found && (d = readdir(dp))) {
		/* Not the hidden disks of the paths under it. */
		snprintf(path, sizeof(path), "/sys/block/%s/hidden",
			 d->d_name);
		if (strncmp(d->d_name, "nvme", 4) ||
		    (read_file(path, buf, sizeof(buf)) > 0 &&
		     !strcmp(buf, "1")))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/device/subsysnqn",
			 d->d_name);
		if (read_file(path, buf, sizeof(buf)) > 0 &&
		    !strcmp(buf, nqn)) {
			snprintf(dev, len, "/dev/%s", d->d_name);
			found = !access(dev, F_OK);
		}
	}
	if (dp)
		closedir(dp);
	return found;
}

/* The host block device and controller of subsystem @nqn, once there. */
static inline int find_host(const char *nqn, char *dev, size_t devlen,
			    char *ctrl, size_t ctrllen)
{
	return wait_until(find_disk(nqn, dev, devlen) &&
			  sysfs_find("/sys/class/nvme", "subsysnqn", nqn,
				     NULL, ctrl, ctrllen), 5000);
}

/* The host controller of subsystem NQN other than @not, in @ctrl. */
static inline int other_ctrl(const char *not, char *ctrl, size_t len)
{
	return wait_until(sysfs_find("/sys/class/nvme", "subsysnqn", NQN, not,
				     ctrl, len), 5000);
}

#define TRACING		"/sys/kernel/tracing"
#define SETUP_CMD	TRACING "/events/nvme/nvme_setup_cmd"
#define COMPLETE_RQ	TRACING "/events/nvme/nvme_complete_rq"

/* Empty the trace buffer: opening it for writing with O_TRUNC does. */
static inline int trace_clear_in(const char *dir)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/trace", dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static inline int trace_clear(void)
{
	return trace_clear_in(TRACING);
}

/* Remove what a test made, or what an earlier run left: errors ignored. */
static inline void nvmet_cleanup(void)
{
	char out[1024];
	int i;

	/* Again while it disconnects some: one can still be connecting. */
	for (i = 0; i < 3 && run_cmd(out, sizeof(out),
				     "nvme disconnect -n " NQN) >= 0 &&
	     grep_count(out, " [1-9] controller") > 0; i++)
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

/*
 * The subsystem NQN with namespace 1 on a null_blk device of @mib MiB,
 * with @streams streams and @fdp FDP placement handles, on a port of
 * @transport; the host connected to it, using the streams (Streams or
 * FDP) itself if @host_streams, else leaving them to the test.
 */
static inline void nvmet_up_ns(struct __test_metadata *_metadata,
			       struct host *self, const char *transport,
			       int streams, int fdp, bool host_streams,
			       int mib)
{
	char path[300], buf[64], out[1024];

	if (access(NULLB, F_OK) || access(NVMET, F_OK))
		SKIP(return, "no null_blk or nvmet configfs");
	if (run_cmd(NULL, 0, "nvme version"))
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
		ASSERT_EQ(0, run_cmd(out, sizeof(out),
				     "nvme connect -t tcp -a 127.0.0.1 -s "
				     TCP_PORT " -n " NQN)) TH_LOG("%s", out);
	} else {
		ASSERT_EQ(0, run_cmd(out, sizeof(out),
				     "nvme connect -t loop -n " NQN))
			TH_LOG("%s", out);
	}
	ASSERT_EQ(0, find_host(NQN, self->dev, sizeof(self->dev),
			       self->ctrl, sizeof(self->ctrl)));
	self->fd = open(self->dev, O_RDWR);
	ASSERT_LE(0, self->fd);
}

static inline void nvmet_up(struct __test_metadata *_metadata,
			    struct host *self, const char *transport,
			    int streams, bool host_streams, int mib)
{
	nvmet_up_ns(_metadata, self, transport, streams, 0, host_streams, mib);
}

/* The teardown of a fixture whose set-up was nvmet_up(). */
static inline void nvmet_down(struct host *h)
{
	if (h->fd > 0)
		close(h->fd);
	nvmet_cleanup();
}

static inline long long sysfs_num(const char *dir, const char *name)
{
	char path[600], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return read_file(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

/* The text of attribute @name in @dir, without its newline; 0 if read. */
static inline int sysfs_str(const char *dir, const char *name, char *buf,
			    size_t len)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return read_file(path, buf, len) > 0 ? 0 : -1;
}

/* max_write_streams of the host's namespace disk. */
static inline long long max_write_streams(const char *dev)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "/sys/block/%.256s/queue", dev + 5);
	return sysfs_num(dir, "max_write_streams");
}

/*
 * max_write_streams of the disk of namespace @nsid on the path through host
 * controller @ctrl (nvmeN): nvme<subsystem>c<controller>n<nsid>, hidden
 * under the multipath disk.
 */
static inline long long path_max_write_streams(const struct host *h,
					       const char *ctrl, int nsid)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "/sys/block/nvme%dc%dn%d/queue",
		 atoi(h->dev + strlen("/dev/nvme")),
		 atoi(ctrl + strlen("nvme")), nsid);
	return sysfs_num(dir, "max_write_streams");
}

/* Wait until the host's disk @dev shows @want streams; 0 once it does. */
static inline int wait_max_write_streams(const char *dev, long long want)
{
	return wait_until(max_write_streams(dev) == want, 10000);
}

/* Whether host controller @dir (its sysfs directory) is live. */
static inline bool ctrl_live(const char *dir)
{
	char state[32];

	return !sysfs_str(dir, "state", state, sizeof(state)) &&
	       !strcmp(state, "live");
}

/* Reset the host's controller and wait until it and its disk are back. */
static inline int reset_and_wait(const char *ctrl, const char *dev,
				 long long want)
{
	char dir[400];

	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", ctrl);
	if (write_attr(dir, "reset_controller", "1"))
		return -1;
	return wait_until(ctrl_live(dir) && max_write_streams(dev) == want, 10000);
}

/* The host's controller character device, /dev/nvmeN. */
static inline int open_ctrl(const char *ctrl)
{
	char path[320];

	snprintf(path, sizeof(path), "/dev/%s", ctrl);
	return open(path, O_RDWR);
}

/*
 * Wait until the host has the namespace again after the target disabled
 * and enabled it (a read through the controller @fd works); 0 once so.
 */
static inline int wait_ns(int fd)
{
	return wait_until(!rw_dir(fd, 0x02, 0, 0, 0), 5000);
}

/*
 * Disable and enable the target namespace, with @streams streams and, if
 * @fdp, that many placement handles.
 */
static inline int ns_cycle_fdp(const struct host *h, const char *streams,
			       const char *fdp)
{
	return write_attr(h->ns, "enable", "0") ||
	       write_attr(h->ns, "streams", streams) ||
	       (fdp && write_attr(h->ns, "fdp_handles", fdp)) ||
	       write_attr(h->ns, "enable", "1");
}

/*
 * ns_cycle_fdp() under a host that goes on using the namespace: with the
 * target's Namespace Attribute Notices off (Asynchronous Event
 * Configuration, bit 8), the host does not scan while the namespace is
 * away, which would remove its disk; it scans once it is back.
 */
static inline int ns_cycle_under_host(const struct host *h,
				      const char *streams, const char *fdp)
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

/* The number of writes in flight at the backing device. */
static inline int backing_writes(void)
{
	char inflight[64];
	int r, w;

	if (read_file("/sys/block/" BACKING "/inflight", inflight,
		      sizeof(inflight)) <= 0 ||
	    sscanf(inflight, "%d %d", &r, &w) != 2)
		return 0;
	return w;
}

/*
 * While the target namespace of @h is being disabled, held up by a write
 * in flight (the backing device completes each request after 2 s),
 * attribute @attr cannot change: the commands still in flight use the
 * state the namespace was enabled with.  Once disabled, it can.  The
 * namespace is enabled again, with @attr as it was.
 */
static inline void change_while_disabling(struct __test_metadata *_metadata,
					  const struct host *h,
					  const char *attr, const char *val)
{
	pid_t writer, disabler;
	int fd, status;
	char old[64];

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
	wait_until(backing_writes() >= 1, 1000);
	ASSERT_EQ(1, backing_writes());
	disabler = fork();
	ASSERT_LE(0, disabler);
	if (!disabler)
		_exit(write_attr(h->ns, "enable", "0") ? 1 : 0);
	wait_until(!sysfs_num(h->ns, "enable"), 1000);
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

#endif /* STREAMID_NVMET_H */
