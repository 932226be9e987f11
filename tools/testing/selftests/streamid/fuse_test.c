// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE passthrough and write stream IDs.  A small FUSE server of the
 * test's own, speaking the raw protocol over /dev/fuse, keeps the data
 * of its files in backing files on ext4 on a null_blk device with
 * streams, and opens them in passthrough mode.  POSIX_FADV_STREAMID on a
 * FUSE file passes the ID on to its backing file, so that buffered
 * (then fsync) and O_DIRECT writes through the FUSE file reach the
 * device in the stream, all of them; the data reads back through FUSE
 * and from the backing file.  A FUSE file the server does not open in
 * passthrough mode takes the ID too, but the server writes its data, so
 * the data lands in stream 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "fs.h"
/* The distribution's <linux/fuse.h> may predate passthrough (7.40). */
#include "../../../../include/uapi/linux/fuse.h"

#define STREAMS		8
#define DEV_MIB		256
#define FILE_MIB	4
#define FILE_SECTORS	(FILE_MIB * 2048ULL)
#define MAX_WRITE	(128 * 1024)
/* Seconds the server has to answer INIT (the guest may run without KVM). */
#define INIT_SECS	60

/*
 * The server's files, in its root directory, each backed by the file of
 * the same name on ext4: node ID 2 + index.  "plain" is not opened in
 * passthrough mode: the server reads and writes it itself.
 */
static const char *const names[] = { "buffered", "direct", "plain" };
#define NR_NODES	3
#define NODE_ID(i)	((uint64_t)(i) + 2)
#define PLAIN		2

/* Everything the test sets up, to take down again. */
struct fuse_env {
	char dir[256];		/* null_blk configfs directory */
	char dev[128];
	char ext4[64];		/* ext4 mount, the backing files */
	char mnt[64];		/* FUSE mount */
	bool ext4_mounted, fuse_mounted;
	pid_t server;
	char why[200];		/* why the test is skipped */
};

FIXTURE(fuse) {
	struct fuse_env e;
};

/* The server's side ------------------------------------------------------ */

#define MAX_HANDLES	16

struct server {
	int fuse;		/* /dev/fuse */
	int dir;		/* the backing directory */
	/* per node: backing ID shared by its passthrough opens, and those */
	int backing_id[NR_NODES];
	int opens[NR_NODES];
	/* per open file (fh): the server's own descriptor and the node */
	int fd[MAX_HANDLES];
	int node[MAX_HANDLES];
};

/* Reply @error (-errno) or @len bytes of @data to request @unique. */
static int reply(struct server *s, uint64_t unique, int error,
		 const void *data, size_t len)
{
	struct fuse_out_header out = {
		.len = sizeof(out) + (error ? 0 : len),
		.error = error,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ &out, sizeof(out) },
		{ (void *)data, error ? 0 : len },
	};

	/* ENOENT: the request was interrupted meanwhile. */
	if (writev(s->fuse, iov, 2) < 0 && errno != ENOENT)
		_exit(1);
	return 0;
}

/* The node of @nodeid: its index, -1 for the root, -2 for none. */
static int node_of(uint64_t nodeid)
{
	if (nodeid == FUSE_ROOT_ID)
		return -1;
	if (nodeid >= NODE_ID(0) && nodeid < NODE_ID(NR_NODES))
		return nodeid - NODE_ID(0);
	return -2;
}

/* The attributes of node @i (-1: the root) from its backing file. */
static int node_attr(struct server *s, int i, struct fuse_attr *a)
{
	struct stat st;

	if (i == -1 ? fstat(s->dir, &st) :
	    fstatat(s->dir, names[i], &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	memset(a, 0, sizeof(*a));
	a->ino = i == -1 ? FUSE_ROOT_ID : NODE_ID(i);
	a->size = st.st_size;
	a->blocks = st.st_blocks;
	a->atime = st.st_atim.tv_sec;
	a->mtime = st.st_mtim.tv_sec;
	a->ctime = st.st_ctim.tv_sec;
	a->atimensec = st.st_atim.tv_nsec;
	a->mtimensec = st.st_mtim.tv_nsec;
	a->ctimensec = st.st_ctim.tv_nsec;
	a->mode = st.st_mode;
	a->nlink = st.st_nlink;
	a->uid = st.st_uid;
	a->gid = st.st_gid;
	a->blksize = st.st_blksize;
	return 0;
}

static int do_lookup(struct server *s, struct fuse_in_header *h,
		     const char *name)
{
	struct fuse_entry_out out = { 0 };
	int i, err;

	for (i = 0; i < NR_NODES; i++)
		if (!strcmp(name, names[i]))
			break;
	if (h->nodeid != FUSE_ROOT_ID || i == NR_NODES)
		return reply(s, h->unique, -ENOENT, NULL, 0);
	/* No caching: every lookup and stat asks the server. */
	out.nodeid = NODE_ID(i);
	out.generation = 1;
	err = node_attr(s, i, &out.attr);
	return reply(s, h->unique, err, &out, sizeof(out));
}

static int do_getattr(struct server *s, struct fuse_in_header *h)
{
	struct fuse_attr_out out = { 0 };
	int i = node_of(h->nodeid);

	if (i == -2)
		return reply(s, h->unique, -ENOENT, NULL, 0);
	return reply(s, h->unique, node_attr(s, i, &out.attr), &out,
		     sizeof(out));
}

/* Size, times and mode, applied to the backing file. */
static int do_setattr(struct server *s, struct fuse_in_header *h,
		      const struct fuse_setattr_in *in)
{
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
	struct fuse_attr_out out = { 0 };
	int i = node_of(h->nodeid), fd, err = 0;
	const char *name = i >= 0 ? names[i] : ".";

	if (i == -2)
		return reply(s, h->unique, -ENOENT, NULL, 0);
	if (in->valid & FATTR_SIZE) {
		fd = i >= 0 ? openat(s->dir, name, O_WRONLY) : -1;
		if (fd < 0 || ftruncate(fd, in->size))
			err = i >= 0 ? -errno : -EISDIR;
		if (fd >= 0)
			close(fd);
	}
	if (in->valid & FATTR_ATIME)
		ts[0] = (struct timespec){ in->atime, in->atimensec };
	if (in->valid & FATTR_ATIME_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	if (in->valid & FATTR_MTIME)
		ts[1] = (struct timespec){ in->mtime, in->mtimensec };
	if (in->valid & FATTR_MTIME_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	if (!err && (in->valid & (FATTR_ATIME | FATTR_MTIME)) &&
	    utimensat(s->dir, name, ts, AT_SYMLINK_NOFOLLOW))
		err = -errno;
	if (!err && (in->valid & FATTR_MODE) &&
	    fchmodat(s->dir, name, in->mode & 07777, 0))
		err = -errno;
	if (!err)
		err = node_attr(s, i, &out.attr);
	return reply(s, h->unique, err, &out, sizeof(out));
}

/*
 * Open the backing file with the flags of the FUSE file and, for a
 * passthrough file, give the kernel its backing ID: one per node, shared
 * by all its opens, as the kernel wants one backing file per inode.
 */
static int do_open(struct server *s, struct fuse_in_header *h,
		   const struct fuse_open_in *in)
{
	struct fuse_open_out out = { 0 };
	struct fuse_backing_map map = { 0 };
	int i = node_of(h->nodeid), fh, flags, err;

	if (i < 0)
		return reply(s, h->unique, i == -1 ? -EISDIR : -ENOENT,
			     NULL, 0);
	for (fh = 0; fh < MAX_HANDLES && s->node[fh] >= 0; fh++)
		;
	if (fh == MAX_HANDLES)
		return reply(s, h->unique, -EMFILE, NULL, 0);
	flags = in->flags & (O_ACCMODE | O_DIRECT | O_APPEND | O_DSYNC |
			     O_SYNC);
	/* The server's own I/O on "plain" is buffered, of any alignment. */
	if (i == PLAIN)
		flags &= ~O_DIRECT;
	s->fd[fh] = openat(s->dir, names[i], flags);
	if (s->fd[fh] < 0)
		return reply(s, h->unique, -errno, NULL, 0);
	if (i != PLAIN) {
		if (!s->opens[i]) {
			map.fd = s->fd[fh];
			s->backing_id[i] = ioctl(s->fuse,
						 FUSE_DEV_IOC_BACKING_OPEN,
						 &map);
			if (s->backing_id[i] < 0) {
				err = -errno;
				close(s->fd[fh]);
				return reply(s, h->unique, err, NULL, 0);
			}
		}
		s->opens[i]++;
		out.open_flags = FOPEN_PASSTHROUGH;
		out.backing_id = s->backing_id[i];
	}
	s->node[fh] = i;
	out.fh = fh;
	return reply(s, h->unique, 0, &out, sizeof(out));
}

/* The server's descriptor for open file @fh, or -1. */
static int handle_fd(struct server *s, uint64_t fh)
{
	return fh < MAX_HANDLES && s->node[fh] >= 0 ? s->fd[fh] : -1;
}

static int do_release(struct server *s, struct fuse_in_header *h,
		      const struct fuse_release_in *in)
{
	uint32_t id;
	int i;

	if (handle_fd(s, in->fh) < 0)
		return reply(s, h->unique, -EBADF, NULL, 0);
	i = s->node[in->fh];
	if (i != PLAIN && !--s->opens[i]) {
		id = s->backing_id[i];
		ioctl(s->fuse, FUSE_DEV_IOC_BACKING_CLOSE, &id);
	}
	close(s->fd[in->fh]);
	s->node[in->fh] = -1;
	return reply(s, h->unique, 0, NULL, 0);
}

static int do_fsync(struct server *s, struct fuse_in_header *h,
		    const struct fuse_fsync_in *in)
{
	int fd = handle_fd(s, in->fh), ret;

	if (fd < 0)
		return reply(s, h->unique, -EBADF, NULL, 0);
	ret = in->fsync_flags & FUSE_FSYNC_FDATASYNC ? fdatasync(fd) :
						       fsync(fd);
	return reply(s, h->unique, ret ? -errno : 0, NULL, 0);
}

/* Reads and writes of files not in passthrough mode. */
static int do_read(struct server *s, struct fuse_in_header *h,
		   const struct fuse_read_in *in)
{
	static char data[MAX_WRITE];
	int fd = handle_fd(s, in->fh);
	ssize_t n;

	if (fd < 0)
		return reply(s, h->unique, -EBADF, NULL, 0);
	n = pread(fd, data, in->size < sizeof(data) ? in->size : sizeof(data),
		  in->offset);
	return reply(s, h->unique, n < 0 ? -errno : 0, data, n < 0 ? 0 : n);
}

static int do_write(struct server *s, struct fuse_in_header *h,
		    const struct fuse_write_in *in)
{
	struct fuse_write_out out = { 0 };
	int fd = handle_fd(s, in->fh);
	ssize_t n;

	if (fd < 0)
		return reply(s, h->unique, -EBADF, NULL, 0);
	n = pwrite(fd, in + 1, in->size, in->offset);
	out.size = n < 0 ? 0 : n;
	return reply(s, h->unique, n < 0 ? -errno : 0, &out, sizeof(out));
}

/*
 * Answer INIT, asking for passthrough with backing files one level deep,
 * and tell the test over @status whether the kernel granted it: then a
 * backing file can be registered.
 */
static int do_init(struct server *s, struct fuse_in_header *h,
		   const struct fuse_init_in *in, int status)
{
	struct fuse_init_out out = { 0 };
	struct fuse_backing_map map = { 0 };
	bool offered;
	char msg[200];
	uint32_t id;

	if (in->major != FUSE_KERNEL_VERSION) {
		dprintf(status, "fail: FUSE protocol %u.%u", in->major,
			in->minor);
		_exit(1);
	}
	offered = (in->flags & FUSE_INIT_EXT) &&
		  (in->flags2 & (FUSE_PASSTHROUGH >> 32));
	out.major = FUSE_KERNEL_VERSION;
	out.minor = FUSE_KERNEL_MINOR_VERSION;
	out.max_readahead = in->max_readahead;
	out.flags = FUSE_INIT_EXT | FUSE_BIG_WRITES;
	out.flags2 = offered ? FUSE_PASSTHROUGH >> 32 : 0;
	out.max_background = 16;
	out.congestion_threshold = 12;
	out.max_write = MAX_WRITE;
	out.time_gran = 1;
	out.max_stack_depth = 1;
	reply(s, h->unique, 0, &out, sizeof(out));

	if (!offered) {
		snprintf(msg, sizeof(msg),
			 "skip: FUSE %u.%u offers no passthrough (CONFIG_FUSE_PASSTHROUGH)",
			 in->major, in->minor);
	} else {
		/* The kernel took the reply in: is passthrough on? */
		map.fd = openat(s->dir, names[0], O_RDONLY);
		id = ioctl(s->fuse, FUSE_DEV_IOC_BACKING_OPEN, &map);
		if ((int)id > 0) {
			ioctl(s->fuse, FUSE_DEV_IOC_BACKING_CLOSE, &id);
			snprintf(msg, sizeof(msg), "ok");
		} else {
			snprintf(msg, sizeof(msg),
				 "skip: no passthrough: BACKING_OPEN: %s",
				 strerror(errno));
		}
		close(map.fd);
	}
	if (write(status, msg, strlen(msg)) < 0)
		_exit(1);
	return 0;
}

/*
 * Serve requests until the FUSE file system goes away (or the test: the
 * server dies with it).  Single-threaded: the test waits for each reply.
 */
static void serve(int fuse, const char *dir, int status)
{
	/* Room for a WRITE of MAX_WRITE and its headers. */
	static char buf[MAX_WRITE + 4096];
	struct fuse_in_header *h = (struct fuse_in_header *)buf;
	struct server s = { .fuse = fuse };
	void *arg = h + 1;
	ssize_t n;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (i = 0; i < MAX_HANDLES; i++)
		s.node[i] = -1;
	s.dir = open(dir, O_RDONLY | O_DIRECTORY);
	if (s.dir < 0)
		_exit(1);
	for (;;) {
		n = read(fuse, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		/* ENODEV: unmounted. */
		if (n < (ssize_t)sizeof(*h))
			_exit(n < 0 && errno == ENODEV ? 0 : 1);
		switch (h->opcode) {
		case FUSE_INIT:
			do_init(&s, h, arg, status);
			break;
		case FUSE_LOOKUP:
			do_lookup(&s, h, arg);
			break;
		case FUSE_GETATTR:
			do_getattr(&s, h);
			break;
		case FUSE_SETATTR:
			do_setattr(&s, h, arg);
			break;
		case FUSE_OPEN:
			do_open(&s, h, arg);
			break;
		case FUSE_RELEASE:
			do_release(&s, h, arg);
			break;
		case FUSE_FLUSH:
			reply(&s, h->unique, 0, NULL, 0);
			break;
		case FUSE_FSYNC:
			do_fsync(&s, h, arg);
			break;
		case FUSE_READ:
			do_read(&s, h, arg);
			break;
		case FUSE_WRITE:
			do_write(&s, h, arg);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
			/* No reply. */
			break;
		case FUSE_DESTROY:
			reply(&s, h->unique, 0, NULL, 0);
			_exit(0);
		default:
			/* GETXATTR, LISTXATTR, ACCESS, INTERRUPT... */
			reply(&s, h->unique, -EOPNOTSUPP, NULL, 0);
			break;
		}
	}
}

/* The test's side -------------------------------------------------------- */

/* Fail the setup with @what and errno, from fuse_up(). */
static int up_failed(struct __test_metadata *_metadata, const char *what)
{
	TH_LOG("%s: %s", what, strerror(errno));
	return -1;
}

/*
 * null_blk, ext4 with the backing files, and the FUSE file system with
 * its server.  0 when all is up; 1 to skip, saying why in e->why; -1 on
 * failure.  What is up is in @e, for fuse_down(), either way.
 */
static int fuse_up(struct __test_metadata *_metadata, struct fuse_env *e)
{
	char name[64], path[128], opts[128], msg[200] = "";
	struct pollfd pfd;
	int i, fd, fuse, pipefd[2];
	ssize_t n;

	snprintf(name, sizeof(name), "fuse_%d", getpid());
	if (nullb_create(name, DEV_MIB, STREAMS, 0, e->dir, sizeof(e->dir),
			 e->dev, sizeof(e->dev)))
		return up_failed(_metadata, "null_blk");
	if (run("mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 %s",
		e->dev))
		return up_failed(_metadata, "mkfs.ext4");
	snprintf(e->ext4, sizeof(e->ext4), "/tmp/fuse_test.%d.ext4", getpid());
	if (mkdir(e->ext4, 0755))
		return up_failed(_metadata, e->ext4);
	if (fs_mount(&fs_ext4, e->dev, e->ext4, NULL))
		return up_failed(_metadata, "mount ext4");
	e->ext4_mounted = true;
	for (i = 0; i < NR_NODES; i++) {
		snprintf(path, sizeof(path), "%s/%s", e->ext4, names[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return up_failed(_metadata, path);
		close(fd);
	}

	snprintf(e->mnt, sizeof(e->mnt), "/tmp/fuse_test.%d", getpid());
	if (mkdir(e->mnt, 0755))
		return up_failed(_metadata, e->mnt);
	fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse < 0)
		return up_failed(_metadata, "/dev/fuse");
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse);
	if (mount("fuse_test", e->mnt, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		TH_LOG("mount fuse: %s", strerror(errno));
		close(fuse);
		return -1;
	}
	e->fuse_mounted = true;
	if (pipe2(pipefd, O_CLOEXEC)) {
		close(fuse);
		return up_failed(_metadata, "pipe");
	}
	e->server = fork();
	if (!e->server) {
		close(pipefd[0]);
		serve(fuse, e->ext4, pipefd[1]);
		_exit(1);
	}
	/*
	 * Only the server holds /dev/fuse: should it die, the connection
	 * ends and no request of the test waits for it.
	 */
	close(fuse);
	close(pipefd[1]);
	if (e->server <= 0)
		return up_failed(_metadata, "fork");

	pfd = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	n = poll(&pfd, 1, INIT_SECS * 1000) == 1 ?
	    read(pipefd[0], msg, sizeof(msg) - 1) : -1;
	close(pipefd[0]);
	if (n <= 0) {
		TH_LOG("the FUSE server did not answer INIT");
		return -1;
	}
	msg[n] = '\0';
	if (!strncmp(msg, "skip: ", 6)) {
		snprintf(e->why, sizeof(e->why), "%s", msg + 6);
		return 1;
	}
	if (strcmp(msg, "ok")) {
		TH_LOG("FUSE server: %s", msg);
		return -1;
	}
	/* What mkfs and mount wrote is not what the tests look at. */
	sync();
	return 0;
}

static void fuse_down(struct __test_metadata *_metadata, struct fuse_env *e)
{
	int i, status;

	if (e->fuse_mounted && umount2(e->mnt, 0) &&
	    umount2(e->mnt, MNT_DETACH))
		TH_LOG("umount %s: %s", e->mnt, strerror(errno));
	if (e->server > 0) {
		/* The unmount ends the connection: the server's read fails. */
		for (i = 0; i < 100 && !waitpid(e->server, &status, WNOHANG);
		     i++)
			usleep(100000);
		if (i == 100) {
			TH_LOG("FUSE server still running: killed");
			kill(e->server, SIGKILL);
			waitpid(e->server, &status, 0);
		}
	}
	if (e->mnt[0])
		rmdir(e->mnt);
	if (e->ext4_mounted) {
		/* Backing files may be let go of a little after. */
		for (i = 0; i < 50 && umount(e->ext4); i++)
			usleep(100000);
		EXPECT_GT(50, i)
			TH_LOG("umount %s: %s", e->ext4, strerror(errno));
	}
	if (e->ext4[0])
		rmdir(e->ext4);
	if (e->dir[0])
		EXPECT_EQ(0, nullb_remove(e->dir));
}

FIXTURE_SETUP(fuse)
{
	int ret;

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	if (access("/dev/fuse", F_OK))
		SKIP(return, "no /dev/fuse");
	if (run("command -v %s", "mkfs.ext4"))
		SKIP(return, "no mkfs.ext4");
	ret = fuse_up(_metadata, &self->e);
	if (ret) {
		/* The harness runs no teardown after a failed setup. */
		fuse_down(_metadata, &self->e);
		if (ret > 0)
			SKIP(return, "%s", self->e.why);
		ASSERT_EQ(0, ret);
	}
}

FIXTURE_TEARDOWN(fuse)
{
	fuse_down(_metadata, &self->e);
}

/*
 * Write FILE_MIB MiB of the pattern for @id to FUSE file @name, opened
 * O_WRONLY | @flags, with stream @id, then fsync; the ID shows in
 * fdinfo all along.  The device's counters start at the first write;
 * what it received then is in @st.  The file reads back through FUSE and
 * from its backing file.
 */
static void write_file(struct __test_metadata *_metadata,
		       struct fuse_env *e, const char *name, int flags,
		       int id, struct stats *st)
{
	char path[128];
	int fd, i;

	snprintf(path, sizeof(path), "%s/%s", e->mnt, name);
	fd = open(path, O_WRONLY | flags);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(id, fdinfo_streamid(fd));
	ASSERT_EQ(0, write_attr(e->dir, "stream_stats", "0"));
	for (i = 0; i < FILE_MIB; i++)
		ASSERT_EQ(0, write_at(fd, (off_t)i << 20, 1 << 20, id));
	ASSERT_EQ(0, fsync(fd));
	EXPECT_EQ(id, fdinfo_streamid(fd));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(e->dir, st));
	TH_LOG("%s: %llu of %llu sectors in stream %d (%.3f), stream 0: %llu",
	       name, st->sectors[id], FILE_SECTORS, id,
	       (double)st->sectors[id] / FILE_SECTORS, st->sectors[0]);

	for (i = 0; i < FILE_MIB; i++)
		EXPECT_EQ(0, check_at(path, (off_t)i << 20, 1 << 20, id))
			TH_LOG("%s: MiB %d through FUSE", name, i);
	snprintf(path, sizeof(path), "%s/%s", e->ext4, name);
	for (i = 0; i < FILE_MIB; i++)
		EXPECT_EQ(0, check_at(path, (off_t)i << 20, 1 << 20, id))
			TH_LOG("%s: MiB %d of the backing file", name, i);
}

/*
 * Buffered writes through a passthrough file, then fsync (which the
 * server does on its backing file): the backing file took the ID, and
 * its writeback puts all of the data in the stream.
 */
TEST_F_TIMEOUT(fuse, buffered, 300)
{
	struct stats st;

	write_file(_metadata, &self->e, "buffered", 0, 3, &st);
	EXPECT_EQ(FILE_SECTORS, st.sectors[3]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 3, -1 }))
		TH_LOG("stream %d", only(&st, (const int []){ 0, 3, -1 }));
}

/* O_DIRECT writes through a passthrough file: all in the stream. */
TEST_F_TIMEOUT(fuse, direct, 300)
{
	struct stats st;

	write_file(_metadata, &self->e, "direct", O_DIRECT, 4, &st);
	EXPECT_EQ(FILE_SECTORS, st.sectors[4]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 4, -1 }))
		TH_LOG("stream %d", only(&st, (const int []){ 0, 4, -1 }));
}

/*
 * A FUSE file not in passthrough mode takes the ID (fdinfo shows it),
 * but the ID has nowhere to go: the server writes the data to the
 * backing file with its own descriptor, without an ID, so the data
 * reaches the device in stream 0 and stream 5 gets nothing.
 */
TEST_F_TIMEOUT(fuse, not_passthrough, 300)
{
	struct stats st;

	write_file(_metadata, &self->e, "plain", 0, 5, &st);
	EXPECT_LE(FILE_SECTORS, st.sectors[0]);
	EXPECT_EQ(0, st.sectors[5]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }))
		TH_LOG("stream %d", only(&st, (const int []){ 0, -1 }));
}

TEST_HARNESS_MAIN
