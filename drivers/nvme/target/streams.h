/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NVMe over Fabrics target: the Streams state of a namespace and of its
 * hosts, shared by streams.c and streams-io.c.
 */
#ifndef NVMET_STREAMS_H
#define NVMET_STREAMS_H

#include <linux/bitmap.h>
#include "nvmet.h"

/*
 * The Streams state of one host in a subsystem, shared by its
 * controllers: by NSID, the struct nvmet_streams_host of each namespace
 * where the host has Streams enabled.
 */
struct nvmet_host_streams {
	struct xarray		ns;
	unsigned int		nr_ctrls;	/* sharing it */
};

/* What one host holds of the streams of one namespace. */
struct nvmet_streams_host {
	struct list_head	entry;		/* in nvmet_ns_streams.hosts */
	struct nvmet_host_streams *hs;
	struct nvmet_ns_streams	*sd;
	u32			nsid;
	bool			enabled;	/* until it ends */
	u16			allocated;	/* NSA */
	u16			nr_open;	/* NSO */
	DECLARE_BITMAP(open, NVMET_MAX_STREAMS + 1);
	struct rcu_head		rcu;
};

/* The Streams state of an enabled namespace with streams. */
struct nvmet_ns_streams {
	struct list_head	hosts;
	spinlock_t		lock;		/* the hosts' open streams */
	u16			allocated;	/* all hosts' NSA */
	u16			nr_open;	/* NSSO */
	u16			pool_open;	/* of hosts without NSA */
	u16			nr;		/* streams, fixed while enabled */
	struct nvmet_stream_stats __percpu *stats; /* by stream, 0 for none */
	struct nvmet_stream_stats zero[];	/* the sums at the last reset */
};

/*
 * The state of @ctrl's host in @ns, NULL if it has none: under RCU, or
 * with the subsystem lock held.
 */
static inline struct nvmet_streams_host *
nvmet_streams_find_host(struct nvmet_ctrl *ctrl, struct nvmet_ns *ns)
{
	if (!ctrl->host_streams)
		return NULL;
	return xa_load(&ctrl->host_streams->ns, ns->nsid);
}

void nvmet_streams_close(struct nvmet_ns_streams *sd,
			 struct nvmet_streams_host *h, unsigned int id);
struct nvmet_streams_host *
nvmet_streams_pool_victim(struct nvmet_ns_streams *sd);

#endif /* NVMET_STREAMS_H */
