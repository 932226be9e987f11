// SPDX-License-Identifier: GPL-2.0
/*
 * The block tracepoints show the write stream ID: block_bio_queue for
 * each bio, block_rq_issue for each request sent to the driver.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "streamid.h"

#define TRACING "/sys/kernel/tracing"
#define DISK "nullb0"

static const char * const events[] = { "block_bio_queue", "block_rq_issue" };

static int write_str(const char *path, const char *s)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

TEST(format_has_streamid)
{
	char path[256], buf[4096];
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), TRACING "/events/block/%s/format",
			 events[i]);
		ASSERT_LT(0, read_file(path, buf, sizeof(buf)))
			TH_LOG("no %s", path);
		EXPECT_NE(NULL, strstr(buf, "field:u8 streamid;"))
			TH_LOG("%s", buf);
		EXPECT_NE(NULL, strstr(buf, "stream=%u"))
			TH_LOG("%s", buf);
	}
}

/*
 * Write 4 KiB with O_DIRECT at 1 MiB of /dev/@disk from a file with
 * stream @id (none for 0), with both tracepoints on: in @seen, how many
 * events of each showed that write with stream @want.  0 on success.
 */
static int traced_write(const char *disk, int id, int want, int seen[2])
{
	char path[256], buf[65536], match[32];
	int fd, i, ret = -1;
	char *line;

	seen[0] = 0;
	seen[1] = 0;
	if (write_str(TRACING "/trace", ""))
		return -1;
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), TRACING "/events/block/%s/enable",
			 events[i]);
		if (write_str(path, "1"))
			return -1;
	}
	snprintf(path, sizeof(path), "/dev/%s", disk);
	fd = open_stream(path, O_WRONLY | O_DIRECT, id);
	if (fd >= 0) {
		ret = write_at(fd, 1 << 20, 4096, id);
		close(fd);
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), TRACING "/events/block/%s/enable",
			 events[i]);
		if (write_str(path, "0"))
			ret = -1;
	}
	if (ret || read_file(TRACING "/trace", buf, sizeof(buf)) <= 0)
		return -1;

	/* sector 2048 (1 MiB), 8 sectors */
	snprintf(match, sizeof(match), "] stream=%d", want);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strstr(line, " 2048 + 8 "))
			continue;
		for (i = 0; i < 2; i++)
			if (strstr(line, events[i]) && strstr(line, match))
				seen[i]++;
	}
	return 0;
}

/*
 * An untagged O_DIRECT write to null_blk's nullb0 (made at boot) shows up
 * in both tracepoints as stream 0, and nullb0 counts it.
 */
TEST(untagged_write_is_stream_0)
{
	unsigned long long before;
	int seen[2];

	before = disk_stat(DISK, 4);
	if (before == ~0ULL)
		SKIP(return, "no %s", DISK);
	ASSERT_EQ(0, traced_write(DISK, 0, 0, seen));
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(1, seen[1]);
	EXPECT_EQ(before + 1, disk_stat(DISK, 4));
}

/*
 * A write with stream 3 to a device with 4 streams shows stream 3 in
 * both tracepoints, and the device counts it under stream 3.
 */
TEST(tagged_write_shows_its_stream)
{
	char dir[256], dev[64];
	struct stats st;
	int seen[2];

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	ASSERT_EQ(0, nullb_create("trace_streams", 16, 4, 0, dir, sizeof(dir),
				  dev, sizeof(dev)));
	EXPECT_EQ(0, traced_write("trace_streams", 3, 3, seen));
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(1, seen[1]);
	EXPECT_EQ(0, read_stats(dir, &st));
	EXPECT_EQ(1, st.requests[3]);
	EXPECT_EQ(8, st.sectors[3]);
	EXPECT_EQ(0, nullb_remove(dir));
}

/*
 * A device without streams (nullb0) gets a write with stream 3 without
 * its ID: both tracepoints show stream 0.
 */
TEST(tagged_write_to_device_without_streams_is_stream_0)
{
	int seen[2];

	if (disk_stat(DISK, 4) == ~0ULL)
		SKIP(return, "no %s", DISK);
	ASSERT_EQ(0, traced_write(DISK, 3, 0, seen));
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(1, seen[1]);
}

TEST_HARNESS_MAIN
