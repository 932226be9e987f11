// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the test environment itself, not of the series: harness/check.sh
 * builds this with the selftests' headers and runs it with them in the
 * guest that vm.sh boots.  The guest runs the kernel that was just built,
 * the NVMe disk vm.sh attached is there, and fio and nvme-cli work on it.
 * What vm.sh and the build know is passed in STREAMID_* variables; without
 * them the tests that need them skip.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "streamid.h"

/* Run a shell command, keep the start of its output; its exit status. */
static int run(const char *cmd, char *out, size_t size)
{
	size_t len = 0, n;
	FILE *f;
	int status;

	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (len + 1 < size && (n = fread(out + len, 1, size - 1 - len, f)))
		len += n;
	out[len] = '\0';
	/* Drain what did not fit so that the command is not cut off. */
	while (fgetc(f) != EOF)
		;
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* An ELF note header, as the kernel lays them out in /sys/kernel/notes. */
struct note {
	unsigned int namesz;
	unsigned int descsz;
	unsigned int type;
};

/* The GNU build id of the running kernel, in hex, from /sys/kernel/notes. */
static int running_build_id(char *hex, size_t size)
{
	unsigned char notes[4096];
	size_t off = 0, len;
	ssize_t n;
	int fd;

	fd = open("/sys/kernel/notes", O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, notes, sizeof(notes));
	close(fd);
	if (n < 0)
		return -1;
	len = n;
	while (off + sizeof(struct note) <= len) {
		struct note *nh = (struct note *)(notes + off);
		size_t name = off + sizeof(*nh);
		size_t desc = name + ((nh->namesz + 3) & ~3U);
		size_t i;

		if (desc + nh->descsz > len)
			break;
		if (nh->type == NT_GNU_BUILD_ID && nh->namesz == 4 &&
		    !memcmp(notes + name, "GNU", 4)) {
			if (2 * nh->descsz + 1 > size)
				return -1;
			for (i = 0; i < nh->descsz; i++)
				sprintf(hex + 2 * i, "%02x", notes[desc + i]);
			return 0;
		}
		off = desc + ((nh->descsz + 3) & ~3U);
	}
	return -1;
}

TEST(kernel_is_this_build)
{
	const char *want = getenv("STREAMID_BUILD_ID");
	const char *release = getenv("STREAMID_KERNEL_RELEASE");
	struct utsname uts;
	char id[128];

	if (!want || !release)
		SKIP(return, "STREAMID_BUILD_ID or STREAMID_KERNEL_RELEASE unset");
	ASSERT_EQ(0, uname(&uts));
	EXPECT_STREQ(release, uts.release);
	ASSERT_EQ(0, running_build_id(id, sizeof(id)));
	EXPECT_STREQ(want, id);
	TH_LOG("running %s %s, build id %s", uts.release, uts.version, id);
}

/*
 * The block device of the NVMe controller whose serial is
 * STREAMID_NVME_SERIAL: "nvme0n1" or so in @name.
 */
static int find_nvme_disk(const char *serial, char *name, size_t size)
{
	char path[512], buf[128];
	struct dirent *d;
	DIR *dir;
	int ret = -1;

	dir = opendir("/sys/block");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "nvme", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/device/serial",
			 d->d_name);
		if (read_file(path, buf, sizeof(buf)) < 0 || strcmp(buf, serial))
			continue;
		snprintf(name, size, "%s", d->d_name);
		ret = 0;
		break;
	}
	closedir(dir);
	return ret;
}

FIXTURE(nvme) {
	const char *serial;
	char disk[NAME_MAX + 1];
	char ctrl[NAME_MAX + 1];
};

FIXTURE_SETUP(nvme)
{
	char path[512], link[512];
	ssize_t n;

	self->serial = getenv("STREAMID_NVME_SERIAL");
	if (!self->serial)
		SKIP(return, "no NVMe disk attached (STREAMID_NVME_SERIAL unset)");
	ASSERT_EQ(0, find_nvme_disk(self->serial, self->disk,
				    sizeof(self->disk)))
		TH_LOG("no block device with serial %s", self->serial);
	snprintf(path, sizeof(path), "/sys/block/%s/device", self->disk);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT_LT(0, n);
	link[n] = '\0';
	snprintf(self->ctrl, sizeof(self->ctrl), "%s", basename(link));
}

FIXTURE_TEARDOWN(nvme)
{
}

/* The disk is QEMU's NVMe controller, with the size vm.sh gave it. */
TEST_F(nvme, disk_present)
{
	const char *mib = getenv("STREAMID_NVME_MIB");
	char path[512], buf[128];

	snprintf(path, sizeof(path), "/sys/block/%s/device/model", self->disk);
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	EXPECT_STREQ("QEMU NVMe Ctrl", buf);
	ASSERT_NE(NULL, mib);
	snprintf(path, sizeof(path), "/sys/block/%s/size", self->disk);
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	EXPECT_EQ(strtoull(mib, NULL, 0) * 2048, strtoull(buf, NULL, 0));
}

/* nvme-cli talks to the controller and reads back its serial number. */
TEST_F(nvme, nvme_cli_identifies)
{
	char cmd[512], out[8192];

	snprintf(cmd, sizeof(cmd), "nvme id-ctrl /dev/%s", self->ctrl);
	ASSERT_EQ(0, run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, self->serial)) TH_LOG("%s", out);
}

/* A counter from the controller's SMART log (nvme smart-log -o json). */
static unsigned long long smart_log_field(const char *ctrl, const char *field)
{
	char cmd[512], out[8192], key[64];
	char *p;

	snprintf(cmd, sizeof(cmd), "nvme smart-log /dev/%s -o json", ctrl);
	if (run(cmd, out, sizeof(out)))
		return ~0ULL;
	snprintf(key, sizeof(key), "\"%s\"", field);
	/* "key":"123": nvme-cli quotes its 128-bit counters. */
	p = strstr(out, key);
	if (p)
		p = strchr(p, ':');
	if (!p)
		return ~0ULL;
	p += strspn(p + 1, " \"") + 1;
	if (*p < '0' || *p > '9')
		return ~0ULL;
	return strtoull(p, NULL, 10);
}

#define FIO_MIB 32

/*
 * fio writes and verifies FIO_MIB MiB with O_DIRECT; the controller's
 * own counter of data written (units of 1000 sectors) and the disk's
 * sector counts show that all of it went to the device and came back.
 * It takes some 20 s without KVM, and several times that on a kernel with
 * KASAN.
 */
TEST_F_TIMEOUT(nvme, fio_write_verify, 180)
{
	unsigned long long units0, units1, wr0, wr1, rd0, rd1;
	char cmd[512], out[16384];

	units0 = smart_log_field(self->ctrl, "data_units_written");
	ASSERT_NE(~0ULL, units0);
	wr0 = disk_stat(self->disk, 6);
	rd0 = disk_stat(self->disk, 2);
	snprintf(cmd, sizeof(cmd), "fio --name=verify --filename=/dev/%s %s %s --size=%dM 2>&1",
		 self->disk, "--ioengine=psync --direct=1 --rw=randwrite --bs=4k",
		 "--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0", FIO_MIB);
	ASSERT_EQ(0, run(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "err= 0")) TH_LOG("%s", out);
	units1 = smart_log_field(self->ctrl, "data_units_written");
	wr1 = disk_stat(self->disk, 6);
	rd1 = disk_stat(self->disk, 2);
	EXPECT_LE(FIO_MIB * 2048ULL, wr1 - wr0);
	EXPECT_LE(FIO_MIB * 2048ULL, rd1 - rd0);
	EXPECT_LE(FIO_MIB * 2048ULL / 1000, units1 - units0);
	TH_LOG("written %llu sectors (device: %llu units), read %llu sectors",
	       wr1 - wr0, units1 - units0, rd1 - rd0);
}

TEST_HARNESS_MAIN
