// SPDX-License-Identifier: GPL-2.0
/*
 * SCSI disks with permanent streams (SBC-5), as scsi_debug emulates them:
 * five, GROUP NUMBER 0 to 4, of which 1 to 4 are the disk's write
 * streams, as max_write_streams and the IO advice hints grouping mode
 * page (read with sg_modes) show.  A write's stream goes out as the GROUP
 * NUMBER of its WRITE command: on the wire (the scsi_dispatch_cmd_start
 * trace) and at the device (scsi_debug's group_number_stats); on the raw
 * disk, direct and buffered, and in files of ext4, xfs and btrfs, whose
 * metadata carries none.  Lifetime hints choose a group where no stream
 * is set, as before (on a partition, where a hint is not a stream).  A
 * write the disk refuses for its group number goes again without; one
 * refused for another reason fails as before, and one refused while
 * others are in flight goes again.  sd revalidates, and the disk goes
 * away, under writers with streams.  A disk whose grouping page is not
 * read has no streams.
 *
 * Each fixture adds a scsi_debug host and removes it again.  The file
 * systems need scsi_debug.dev_size_mb=320 (the store all hosts share) on
 * the kernel command line, which the test harness gives.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <glob.h>
#include "nvmet.h"
#include "nvme_host.h"
#include "fs.h"

#define SDEBUG		"/sys/bus/pseudo/drivers/scsi_debug"
#define SDEBUG_DEV	"/sys/kernel/debug/scsi_debug"
#define DISPATCH	TRACING "/events/scsi/scsi_dispatch_cmd_start"
#define SCSI_MOD	"/sys/module/scsi_mod/parameters"
#define SKIP_IO_HINTS	"17179869184"	/* BLIST_SKIP_IO_HINTS, 1 << 34 */
#define SD_STREAMS	4		/* of scsi_debug's 5 permanent ones */
#define GROUPS		64
#define FS_DEV_MIB	320
#define FS_FILES	3
#define FS_MIB		4
/* scsi_debug error injection: fail, once or twice, with CHECK CONDITION,
 * ILLEGAL REQUEST, INVALID FIELD IN CDB, every command of one opcode.
 */
#define REFUSE_WRITE10(n) "2 -" #n " 0x2a 0x0 0x0 0x2 0x5 0x24 0x0"

/* A scsi_debug disk: its node, "H:C:T:L" and host number. */
struct sdisk {
	char dev[64];
	char hctl[32];
	int host;
};

/* What the trace saw go out: WRITE commands and blocks per group. */
struct groups {
	int writes[GROUPS];
	unsigned long long blocks[GROUPS];
};

/* The disk that is not in @before (a glob of /sys/block/sd*), if one. */
static bool new_disk(const glob_t *before, struct sdisk *d)
{
	char path[300], link[300], *base;
	glob_t now;
	size_t i, j;
	ssize_t n;
	bool found = false;

	if (glob("/sys/block/sd*", 0, NULL, &now))
		return false;
	for (i = 0; i < now.gl_pathc && !found; i++) {
		for (j = 0; j < before->gl_pathc; j++)
			if (!strcmp(now.gl_pathv[i], before->gl_pathv[j]))
				break;
		if (j < before->gl_pathc)
			continue;
		snprintf(path, sizeof(path), "%s/device", now.gl_pathv[i]);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		base = strrchr(link, '/');
		snprintf(d->hctl, sizeof(d->hctl), "%.31s",
			 base ? base + 1 : link);
		snprintf(d->dev, sizeof(d->dev), "/dev/%.40s",
			 strrchr(now.gl_pathv[i], '/') + 1);
		d->host = atoi(d->hctl);
		found = access(d->dev, F_OK) == 0;
	}
	globfree(&now);
	return found;
}

/* Add a scsi_debug host, with @dev_flags for the disks it brings. */
static void sdebug_up(struct __test_metadata *_metadata, struct sdisk *d,
		      const char *dev_flags)
{
	glob_t before = { 0 };
	char filter[32], saved[32];
	int ret;

	if (access(SDEBUG, F_OK))
		SKIP(return, "no scsi_debug");
	ret = glob("/sys/block/sd*", 0, NULL, &before);
	ASSERT_TRUE(ret == 0 || ret == GLOB_NOMATCH);
	if (dev_flags) {
		ASSERT_LT(0, read_file(SCSI_MOD "/default_dev_flags", saved,
				       sizeof(saved)));
		ASSERT_EQ(0, write_attr(SCSI_MOD, "default_dev_flags",
					dev_flags));
	}
	ret = write_attr(SDEBUG, "add_host", "1");
	if (!ret)
		ret = wait_until(new_disk(&before, d), 10000);
	/* Only once the disk is scanned, which may happen after add_host. */
	if (dev_flags)
		write_attr(SCSI_MOD, "default_dev_flags", saved);
	globfree(&before);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, write_attr(SDEBUG, "group_number_stats", "0"));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "4096"));
	ASSERT_EQ(0, trace_clear());
	snprintf(filter, sizeof(filter), "host_no == %d", d->host);
	ASSERT_EQ(0, write_attr(DISPATCH, "filter", filter));
}

static void sdebug_down(struct sdisk *d)
{
	write_attr(DISPATCH, "enable", "0");
	write_attr(DISPATCH, "filter", "0");
	if (d->dev[0])
		write_attr(SDEBUG, "add_host", "-1");
}

/* The device's count of WRITE commands per group number. */
static int device_groups(long *writes)
{
	char buf[2048], *line, *save;
	int g;
	long n;

	memset(writes, 0, GROUPS * sizeof(*writes));
	if (read_file(SDEBUG "/group_number_stats", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%d %ld", &g, &n) != 2 || g < 0 || g >= GROUPS)
			return -1;
		writes[g] = n;
	}
	return 0;
}

/*
 * Where the GROUP NUMBER of a write command is (bits 5:0 of that byte of
 * its CDB @b of @n bytes): WRITE(10) and WRITE SAME(10), WRITE(16) and
 * WRITE SAME(16), WRITE(32); 0 for another command.
 */
static int group_byte(const unsigned int *b, int n)
{
	switch (n ? b[0] : 0) {
	case 0x2a:
	case 0x41:
		return 6;
	case 0x8a:
	case 0x93:
		return 14;
	case 0x7f:
		return n > 9 && b[9] == 0x0b ? 6 : 0;
	}
	return 0;
}

/* Whether the trace in @buf kept every event: "entries-in-buffer/entries-written: N/N". */
static bool trace_whole(const char *buf)
{
	const char *p = strstr(buf, "entries-in-buffer/entries-written:");
	unsigned long in, written;

	return p && sscanf(p, "entries-in-buffer/entries-written: %lu/%lu",
			   &in, &written) == 2 && in == written;
}

/*
 * The write commands in the trace, by the GROUP NUMBER of their CDB, with
 * their blocks; -1 if the trace lost events or has a write command whose
 * group number is not known here.
 */
static int wire_groups(struct groups *w)
{
	const int size = 4 << 20;
	char *buf = malloc(size), *line, *save, *p, *t;
	unsigned int txlen, b[32];
	int ret = 0, n, pos, k;

	memset(w, 0, sizeof(*w));
	if (!buf || read_file(TRACING "/trace", buf, size) < 0) {
		free(buf);
		return -1;
	}
	if (strlen(buf) >= (size_t)size - 2 || !trace_whole(buf))
		ret = -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "cmnd=(WRITE") &&
		    !strstr(line, "cmnd=(VARIABLE_LENGTH_CMD"))
			continue;
		p = strstr(line, "raw=");
		t = strstr(line, "txlen=");
		n = 0;
		if (p)
			for (p += 4; n < 32 &&
			     sscanf(p, "%x%n", &b[n], &pos) == 1; n++)
				p += pos;
		k = group_byte(b, n);
		if (n && b[0] == 0x7f && !k)
			continue;	/* a 32-byte read */
		if (!t || sscanf(t, "txlen=%u", &txlen) != 1 || !k || n <= k) {
			ret = -1;
			continue;
		}
		w->writes[b[k] & 0x3f]++;
		w->blocks[b[k] & 0x3f] += txlen;
	}
	free(buf);
	return ret;
}

/* Write @len bytes at @off of @dev with O_DIRECT, stream @id, hint @hint. */
static int write_direct(const char *dev, off_t off, size_t len, int id,
			int hint)
{
	uint64_t h = hint;
	int fd = open_stream(dev, O_WRONLY | O_DIRECT, id), ret;

	if (fd < 0)
		return -1;
	if (hint && fcntl(fd, F_SET_RW_HINT, &h)) {
		close(fd);
		return -1;
	}
	ret = write_at(fd, off, len, id + hint);
	return close(fd) ? -1 : ret;
}

/* The block device's "device/rescan": sd reads its pages again. */
static int rescan(const struct sdisk *d)
{
	char dir[128];

	snprintf(dir, sizeof(dir), "/sys/block/%s/device",
		 strrchr(d->dev, '/') + 1);
	return write_attr(dir, "rescan", "1");
}

/* Inject @how (scsi_debug's error format) for the disk's commands. */
static int inject(const struct sdisk *d, const char *how)
{
	char dir[128];

	snprintf(dir, sizeof(dir), SDEBUG_DEV "/%s", d->hctl);
	return write_attr(dir, "error", how);
}

FIXTURE(disk) {
	struct sdisk d;
};

FIXTURE_SETUP(disk)
{
	sdebug_up(_metadata, &self->d, NULL);
}

FIXTURE_TEARDOWN(disk)
{
	sdebug_down(&self->d);
}

/*
 * max_write_streams is the count of the permanent streams the grouping
 * mode page lists first (ST_ENBLE set), less the one of GROUP NUMBER 0.
 */
TEST_F(disk, limits_and_mode_page)
{
	char out[8192], *line, *save;
	unsigned int b[512];
	int n = 0, i, at = -1, st = 0;
	long long max = queue_limit(self->d.dev, "max_write_streams");

	EXPECT_EQ(SD_STREAMS, max);
	EXPECT_EQ(0, queue_limit(self->d.dev, "write_stream_granularity"));

	if (run_cmd(NULL, 0, "sg_modes -V") == 127)
		SKIP(return, "no sg_modes (sg3-utils)");
	/* One byte a line, in hex: the page, from its page code on. */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "sg_modes -p 0xa,0x5 -R %s",
			     self->d.dev)) TH_LOG("%s", out);
	for (line = strtok_r(out, "\n", &save); line && n < 512;
	     line = strtok_r(NULL, "\n", &save))
		if (strlen(line) == 2 && isxdigit(line[0]) && isxdigit(line[1]))
			b[n++] = strtoul(line, NULL, 16);
	for (i = 0; i + 1 < n; i++)
		if (b[i] == 0x4a && b[i + 1] == 0x05) {
			at = i;
			break;
		}
	ASSERT_LE(0, at) TH_LOG("no IO advice hints grouping page");
	/* 16 bytes of header; descriptors of 16 bytes, ST_ENBLE in bit 2. */
	for (i = at + 16; i < n && (b[i] & 0x04); i += 16)
		st++;
	TH_LOG("%d descriptors with ST_ENBLE first; max_write_streams %lld",
	       st, max);
	EXPECT_EQ(st - 1, max);
}

/*
 * O_DIRECT writes of 64 KiB with streams 0 to 4, and 6 and 255 that fold
 * onto the four as on NVMe: the group number of each on the wire and at
 * the device, and the data reads back.
 */
TEST_F(disk, raw_direct)
{
	static const int ids[] = { 0, 1, 2, 3, 4, 6, 255 };
	static const int want[] = { 0, 1, 2, 3, 4, 2, 3 };
	unsigned long long blocks[GROUPS] = { 0 };
	struct groups w;
	long dev[GROUPS];
	size_t i;
	int g;

	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		ASSERT_EQ(0, write_direct(self->d.dev, i << 20, 65536,
					  ids[i], 0));
		blocks[want[i]] += 128;
	}
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	ASSERT_EQ(0, device_groups(dev));
	for (g = 0; g < GROUPS; g++) {
		EXPECT_EQ(blocks[g], w.blocks[g]) {
			TH_LOG("group %d", g);
		}
		EXPECT_EQ(w.writes[g], dev[g]) {
			TH_LOG("group %d", g);
		}
	}
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		EXPECT_EQ(0, check_at(self->d.dev, i << 20, 65536, ids[i]));
}

/*
 * Buffered writes of the raw disk, written back with the ID last set on
 * the disk's page cache: one file after the other.
 */
TEST_F(disk, raw_buffered)
{
	struct groups w;
	int id, fd, g;

	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
	for (id = 3; id <= 4; id++) {
		fd = open_stream(self->d.dev, O_WRONLY, id);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, write_at(fd, id << 20, 1 << 20, id));
		ASSERT_EQ(0, fsync(fd));
		ASSERT_EQ(0, close(fd));
	}
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	for (g = 0; g < GROUPS; g++) {
		EXPECT_EQ(g == 3 || g == 4 ? 2048 : 0, w.blocks[g]) {
			TH_LOG("group %d", g);
		}
	}
	EXPECT_EQ(0, check_at(self->d.dev, 3 << 20, 1 << 20, 3));
	EXPECT_EQ(0, check_at(self->d.dev, 4 << 20, 1 << 20, 4));
}

/*
 * Lifetime hints where no stream is set, as without the series: the hint
 * is the group number, capped at the count of permanent streams.  On a
 * partition, where a hint is never a stream; a stream beats the hint.
 */
TEST_F(disk, hints)
{
	char part[80];
	struct groups w;
	int fd;

	fd = open(self->d.dev, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, make_partitions(fd));
	close(fd);
	snprintf(part, sizeof(part), "%s1", self->d.dev);
	ASSERT_EQ(0, wait_until(access(part, F_OK) == 0, 5000));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
	ASSERT_EQ(0, write_direct(part, 0, 65536, 0, RWH_WRITE_LIFE_SHORT));
	ASSERT_EQ(0, write_direct(part, 1 << 20, 65536, 0,
				  RWH_WRITE_LIFE_EXTREME));
	ASSERT_EQ(0, write_direct(part, 2 << 20, 65536, 1,
				  RWH_WRITE_LIFE_LONG));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	EXPECT_EQ(128, w.blocks[RWH_WRITE_LIFE_SHORT]);
	EXPECT_EQ(128, w.blocks[SD_STREAMS + 1]);
	EXPECT_EQ(128, w.blocks[1]);
	EXPECT_EQ(0, w.blocks[RWH_WRITE_LIFE_LONG]);
	EXPECT_EQ(384, w.blocks[1] + w.blocks[2] + w.blocks[SD_STREAMS + 1]);
}

/*
 * The disk refuses the first write with INVALID FIELD IN CDB: it goes
 * again without its group number and succeeds, and the disk gets none
 * from then on (one log line), nor streams after its next rescan.
 */
TEST_F(disk, refused_group_number)
{
	struct groups w;
	long dev[GROUPS];

	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, inject(&self->d, REFUSE_WRITE10(1)));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
	ASSERT_EQ(0, write_direct(self->d.dev, 0, 65536, 2, 0));
	ASSERT_EQ(0, write_direct(self->d.dev, 1 << 20, 65536, 3, 0));
	ASSERT_EQ(0, write_direct(self->d.dev, 2 << 20, 65536, 0,
				  RWH_WRITE_LIFE_EXTREME));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	ASSERT_EQ(0, device_groups(dev));
	EXPECT_EQ(1, w.writes[2]);
	EXPECT_EQ(3, w.writes[0]);
	EXPECT_EQ(4, w.writes[0] + w.writes[2]);
	/* The refused write never reached the medium; the three did. */
	EXPECT_EQ(0, dev[2]);
	EXPECT_EQ(3, dev[0]);
	EXPECT_EQ(1, dmesg_count("GROUP NUMBER not used"));
	EXPECT_EQ(0, check_at(self->d.dev, 0, 65536, 2));
	EXPECT_EQ(0, check_at(self->d.dev, 1 << 20, 65536, 3));
	EXPECT_EQ(SD_STREAMS, queue_limit(self->d.dev, "max_write_streams"));
	ASSERT_EQ(0, rescan(&self->d));
	EXPECT_EQ(0, queue_limit(self->d.dev, "max_write_streams"));
}

/*
 * The disk refuses the write twice: without its group number too, so the
 * group number was not the cause; the write fails as it would without
 * streams, which stay in use.
 */
TEST_F(disk, refused_for_another_reason)
{
	struct groups w;

	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, inject(&self->d, REFUSE_WRITE10(2)));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
	EXPECT_NE(0, write_direct(self->d.dev, 0, 65536, 2, 0));
	ASSERT_EQ(0, write_direct(self->d.dev, 1 << 20, 65536, 3, 0));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	EXPECT_EQ(1, w.writes[2]);
	EXPECT_EQ(1, w.writes[0]);
	EXPECT_EQ(1, w.writes[3]);
	EXPECT_EQ(0, dmesg_count("GROUP NUMBER not used"));
	ASSERT_EQ(0, rescan(&self->d));
	EXPECT_EQ(SD_STREAMS, queue_limit(self->d.dev, "max_write_streams"));

	/* A write without a group number that is refused is not sent again. */
	ASSERT_EQ(0, inject(&self->d, REFUSE_WRITE10(1)));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
	EXPECT_NE(0, write_direct(self->d.dev, 0, 65536, 0, 0));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	EXPECT_EQ(1, w.writes[0]);
}

#define SD_WRITERS	8
#define SD_WRITES	16

/*
 * Writer @i: 64 KiB writes with stream i % SD_STREAMS + 1 over its own
 * MiB of the disk, O_DIRECT for the first half of the writers and
 * buffered with an fsync after each for the rest; SD_WRITES of them,
 * or with @forever until one fails.  0 if all SD_WRITES succeeded; with
 * @forever, always 1.
 */
static int sd_writer(const char *dev, int i, bool forever)
{
	bool direct = i < SD_WRITERS / 2;
	int id = i % SD_STREAMS + 1, fd, n;

	fd = open_stream(dev, O_WRONLY | (direct ? O_DIRECT : 0), id);
	if (fd < 0)
		return 1;
	for (n = 0; forever || n < SD_WRITES; n++)
		if (write_at(fd, ((off_t)i << 20) + (n % 16) * 65536, 65536,
			     id) || (!direct && fsync(fd)))
			break;
	close(fd);
	return forever || n < SD_WRITES;
}

/* Start the SD_WRITERS writers; their pids in @pids.  0 on success. */
static int sd_writers_start(const char *dev, pid_t *pids, bool forever)
{
	int i;

	for (i = 0; i < SD_WRITERS; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return -1;
		if (!pids[i])
			_exit(sd_writer(dev, i, forever));
	}
	return 0;
}

/* Wait for the writers: how many succeeded, -1 if one could not be reaped. */
static int sd_writers_wait(const pid_t *pids)
{
	int i, status, ok = 0;

	for (i = 0; i < SD_WRITERS; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i])
			return -1;
		ok += WIFEXITED(status) && !WEXITSTATUS(status);
	}
	return ok;
}

/*
 * The disk refuses the first write while eight writers have theirs in
 * flight, direct and buffered: every write succeeds, the refused one
 * without its group number, the disk logs the refusal once and sends no
 * group number after, and all the data reads back.
 */
TEST_F(disk, refused_in_flight)
{
	pid_t pids[SD_WRITERS];
	struct groups w;
	int i, n;

	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, inject(&self->d, REFUSE_WRITE10(1)));
	ASSERT_EQ(0, sd_writers_start(self->d.dev, pids, false));
	EXPECT_EQ(SD_WRITERS, sd_writers_wait(pids));
	EXPECT_EQ(1, dmesg_count("GROUP NUMBER not used"));
	for (i = 0; i < SD_WRITERS; i++)
		for (n = 0; n < 16; n++)
			EXPECT_EQ(0, check_at(self->d.dev,
					      ((off_t)i << 20) + n * 65536,
					      65536, i % SD_STREAMS + 1));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
	ASSERT_EQ(0, write_direct(self->d.dev, 16 << 20, 65536, 2, 0));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	EXPECT_EQ(1, w.writes[0]);
	EXPECT_EQ(0, w.writes[2]);
}

/*
 * sd revalidates the disk, then the disk goes away, while eight writers
 * with streams write to it: the streams stay through the rescans, every
 * writer ends (with an error once the disk is gone), and nothing in the
 * kernel complains (the VM fails a run whose kernel logged an oops or a
 * warning; on the debug kernel, KASAN and lockdep too).
 */
TEST_F(disk, removed_under_writes)
{
	pid_t pids[SD_WRITERS];
	int k;

	ASSERT_EQ(0, sd_writers_start(self->d.dev, pids, true));
	usleep(300000);
	for (k = 0; k < 5; k++) {
		EXPECT_EQ(0, rescan(&self->d));
		EXPECT_EQ(SD_STREAMS,
			  queue_limit(self->d.dev, "max_write_streams"));
	}
	usleep(300000);
	ASSERT_EQ(0, write_attr(SDEBUG, "add_host", "-1"));
	EXPECT_EQ(0, sd_writers_wait(pids));
	EXPECT_NE(0, access(self->d.dev, F_OK));
	self->d.dev[0] = '\0';
}

/*
 * A disk whose grouping page sd does not read (BLIST_SKIP_IO_HINTS, as for
 * disks without it) has no streams: writes with IDs carry no group.
 */
FIXTURE(plain) {
	struct sdisk d;
};

FIXTURE_SETUP(plain)
{
	sdebug_up(_metadata, &self->d, SKIP_IO_HINTS);
}

FIXTURE_TEARDOWN(plain)
{
	sdebug_down(&self->d);
}

TEST_F(plain, no_grouping_page)
{
	struct groups w;
	int g;

	EXPECT_EQ(0, queue_limit(self->d.dev, "max_write_streams"));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
	ASSERT_EQ(0, write_direct(self->d.dev, 0, 65536, 2, 0));
	ASSERT_EQ(0, write_direct(self->d.dev, 1 << 20, 65536, 3,
				  RWH_WRITE_LIFE_SHORT));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	for (g = 1; g < GROUPS; g++) {
		EXPECT_EQ(0, w.writes[g]) {
			TH_LOG("group %d", g);
		}
	}
	EXPECT_EQ(2, w.writes[0]);
}

/* ext4, xfs and btrfs on the disk: files in their streams' groups. */
FIXTURE(fs) {
	struct sdisk d;
	struct fs_dirty dirty;
	char mnt[64];
};

FIXTURE_VARIANT(fs) {
	const struct fs_type *fs;
	enum fs_flush flush;
};

FIXTURE_VARIANT_ADD(fs, ext4_fsync) { &fs_ext4, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, ext4_direct) { &fs_ext4, FLUSH_DIRECT };
FIXTURE_VARIANT_ADD(fs, xfs_fsync) { &fs_xfs, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, xfs_direct) { &fs_xfs, FLUSH_DIRECT };
FIXTURE_VARIANT_ADD(fs, btrfs_fsync) { &fs_btrfs, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, btrfs_background) { &fs_btrfs, FLUSH_BACKGROUND };

FIXTURE_SETUP(fs)
{
	char out[4096];

	if (!fs_have_mkfs(variant->fs))
		SKIP(return, "no mkfs for %s", variant->fs->name);
	if (sysfs_num("/sys/module/scsi_debug/parameters", "dev_size_mb") <
	    FS_DEV_MIB)
		SKIP(return, "scsi_debug.dev_size_mb below %d", FS_DEV_MIB);
	sdebug_up(_metadata, &self->d, NULL);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), variant->fs->mkfs,
			     self->d.dev)) TH_LOG("%s", out);
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/scsi_fs.%d", getpid());
	ASSERT_EQ(0, mkdir(self->mnt, 0755));
	ASSERT_EQ(0, fs_mount(variant->fs, self->d.dev, self->mnt, NULL));
	ASSERT_EQ(0, fs_dirty_save(&self->dirty));
	sync();
	ASSERT_EQ(0, write_attr(SDEBUG, "group_number_stats", "0"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "1"));
}

FIXTURE_TEARDOWN(fs)
{
	write_attr(DISPATCH, "enable", "0");
	EXPECT_EQ(0, fs_dirty_restore(&self->dirty));
	if (self->mnt[0]) {
		umount(self->mnt);
		rmdir(self->mnt);
	}
	sdebug_down(&self->d);
}

/*
 * Each file's blocks went out with its stream's group number, all of
 * them, and nothing else did: metadata and journal only with none.
 */
TEST_F(fs, files_in_groups)
{
	static const int ids[FS_FILES] = { 2, 3, 4 };
	const unsigned long long blocks = FS_MIB * 2048ULL;
	struct groups w;
	long dev[GROUPS];
	char out[4096];
	int i, g;

	ASSERT_EQ(0, fs_write_files(self->mnt, ids, FS_FILES, FS_MIB,
				    variant->flush));
	ASSERT_EQ(0, write_attr(DISPATCH, "enable", "0"));
	ASSERT_EQ(0, wire_groups(&w));
	ASSERT_EQ(0, device_groups(dev));
	for (i = 0; i < FS_FILES; i++) {
		TH_LOG("%s file of stream %d: %llu of %llu blocks in group %d (%.1f %%)",
		       variant->fs->name, ids[i], w.blocks[ids[i]], blocks,
		       ids[i], 100.0 * w.blocks[ids[i]] / blocks);
		TH_LOG("%s group %d: %d writes on the wire, %ld at the device",
		       variant->fs->name, ids[i], w.writes[ids[i]],
		       dev[ids[i]]);
		EXPECT_EQ(blocks, w.blocks[ids[i]]);
		EXPECT_EQ(w.writes[ids[i]], dev[ids[i]]);
	}
	TH_LOG("%s group 0 (metadata, journal): %llu blocks",
	       variant->fs->name, w.blocks[0]);
	for (g = 1; g < GROUPS; g++)
		if (g != 2 && g != 3 && g != 4) {
			EXPECT_EQ(0, w.writes[g]) {
				TH_LOG("group %d", g);
			}
		}

	ASSERT_EQ(0, umount(self->mnt));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), variant->fs->fsck,
			     self->d.dev)) TH_LOG("%s", out);
	ASSERT_EQ(0, fs_mount(variant->fs, self->d.dev, self->mnt, NULL));
	EXPECT_EQ(0, fs_check_files(self->mnt, ids, FS_FILES, FS_MIB));
}

TEST_HARNESS_MAIN
