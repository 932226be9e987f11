/* SPDX-License-Identifier: GPL-2.0 */
/*
 * io_uring without liburing, for the tests of write streams per I/O.  The
 * tests build against the system's headers, whose struct io_uring_sqe
 * (as the liburing of the test systems) predates write_stream: it is set
 * through its offset, as the user-space document shows programs.
 */
#ifndef STREAMID_URING_H
#define STREAMID_URING_H

#include <assert.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "streamid.h"

/*
 * sqe->write_stream: byte 44, in the union with splice_fd_in, where
 * mainline has it and programs written for mainline put it.
 */
#define SQE_WRITE_STREAM	44
static_assert(offsetof(struct io_uring_sqe, splice_fd_in) == SQE_WRITE_STREAM,
	      "write_stream is byte 44 of the sqe");

static inline void sqe_set_write_stream(struct io_uring_sqe *sqe, __u8 s)
{
	((__u8 *)sqe)[SQE_WRITE_STREAM] = s;
}

struct ring {
	int fd;
	struct io_uring_params p;
	void *sq, *cq;
	struct io_uring_sqe *sqes;
	size_t sq_len, cq_len, sqes_len;
};

static inline void ring_exit(struct ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq && r->cq != MAP_FAILED)
		munmap(r->cq, r->cq_len);
	if (r->sq && r->sq != MAP_FAILED)
		munmap(r->sq, r->sq_len);
	if (r->fd > 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
}

/* A ring of 4 entries; 0, or -errno. */
static inline int ring_init(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = syscall(__NR_io_uring_setup, 4, &r->p);
	if (r->fd < 0)
		return -errno;
	r->sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(__u32);
	r->cq_len = r->p.cq_off.cqes +
		    r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_len = r->p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     r->fd, IORING_OFF_SQ_RING);
	r->cq = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       r->fd, IORING_OFF_SQES);
	if (r->sq == MAP_FAILED || r->cq == MAP_FAILED ||
	    r->sqes == MAP_FAILED) {
		ring_exit(r);
		return -ENOMEM;
	}
	return 0;
}

/* Submit @sqe and wait for it: the result of its completion, or -errno. */
static inline int ring_run(struct ring *r, const struct io_uring_sqe *sqe)
{
	unsigned int *tail = r->sq + r->p.sq_off.tail;
	unsigned int *head = r->cq + r->p.cq_off.head;
	unsigned int smask = *(unsigned int *)(r->sq + r->p.sq_off.ring_mask);
	unsigned int cmask = *(unsigned int *)(r->cq + r->p.cq_off.ring_mask);
	unsigned int t = *tail, h;
	struct io_uring_cqe *cqe;
	int ret;

	r->sqes[t & smask] = *sqe;
	((__u32 *)(r->sq + r->p.sq_off.array))[t & smask] = t & smask;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	ret = syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
		      NULL, 0);
	if (ret != 1)
		return ret < 0 ? -errno : -EIO;
	h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
	cqe = (struct io_uring_cqe *)(r->cq + r->p.cq_off.cqes) + (h & cmask);
	ret = cqe->res;
	__atomic_store_n(head, h + 1, __ATOMIC_RELEASE);
	return ret;
}

/* An IORING_OP_WRITE of @len bytes from @buf at @off, in @stream. */
static inline struct io_uring_sqe uring_write_sqe(int fd, const void *buf,
						  size_t len, off_t off,
						  int stream)
{
	struct io_uring_sqe sqe = { };

	sqe.opcode = IORING_OP_WRITE;
	sqe.fd = fd;
	sqe.addr = (uintptr_t)buf;
	sqe.len = len;
	sqe.off = off;
	sqe_set_write_stream(&sqe, stream);
	return sqe;
}

/*
 * One write of @len bytes of the pattern for @id at @off through @fd,
 * submitted with io_uring in write stream @stream (0: none); the result
 * of its completion, or -errno if the ring could not be used.
 */
static inline int uring_write(int fd, off_t off, size_t len, int id,
			      int stream)
{
	struct io_uring_sqe sqe;
	struct ring r;
	void *buf;
	int ret;

	ret = ring_init(&r);
	if (ret)
		return ret;
	ret = -ENOMEM;
	if (!posix_memalign(&buf, 4096, len)) {
		fill(buf, len, off, id);
		sqe = uring_write_sqe(fd, buf, len, off, stream);
		ret = ring_run(&r, &sqe);
		free(buf);
	}
	ring_exit(&r);
	return ret;
}

#endif /* STREAMID_URING_H */
