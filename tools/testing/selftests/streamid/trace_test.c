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
 * An untagged O_DIRECT write to null_blk's nullb0 (made at boot) shows up
 * in both tracepoints as stream 0, and nullb0 counts it.
 */
TEST(untagged_write_is_stream_0)
{
	unsigned long long before, after;
	char path[256], buf[65536];
	char *line;
	void *data;
	int fd, i, seen[2] = { 0 };

	before = disk_stat(DISK, 4);
	if (before == ~0ULL)
		SKIP(return, "no %s", DISK);

	ASSERT_EQ(0, write_str(TRACING "/trace", ""));
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), TRACING "/events/block/%s/enable",
			 events[i]);
		ASSERT_EQ(0, write_str(path, "1"));
	}
	ASSERT_EQ(0, posix_memalign(&data, 4096, 4096));
	memset(data, 0x5a, 4096);
	fd = open("/dev/" DISK, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(4096, pwrite(fd, data, 4096, 1 << 20));
	close(fd);
	free(data);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), TRACING "/events/block/%s/enable",
			 events[i]);
		ASSERT_EQ(0, write_str(path, "0"));
	}

	/* sector 2048 (1 MiB), 8 sectors */
	ASSERT_LT(0, read_file(TRACING "/trace", buf, sizeof(buf)));
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strstr(line, " 2048 + 8 "))
			continue;
		for (i = 0; i < 2; i++)
			if (strstr(line, events[i]) &&
			    strstr(line, "] stream=0"))
				seen[i]++;
	}
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(1, seen[1]);

	after = disk_stat(DISK, 4);
	EXPECT_EQ(before + 1, after);
}

TEST_HARNESS_MAIN
