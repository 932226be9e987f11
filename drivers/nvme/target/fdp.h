/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NVMe over Fabrics target: the Flexible Data Placement state of a
 * namespace, shared by fdp.c and fdp-io.c.
 */
#ifndef NVMET_FDP_H
#define NVMET_FDP_H

#include "nvmet.h"

/* The events a handle can have enabled, by bit. */
static const u8 nvmet_fdp_event_types[] = {
	NVME_FDP_EVENT_RUNFW,
	NVME_FDP_EVENT_PID,
};

struct nvmet_fdp_handle {
	/* Its sectors when an update last moved it to a new reclaim unit. */
	u64	ru_start;
	u8	events;		/* enabled, bits of nvmet_fdp_event_types */
};

/*
 * The writes to the namespace on one CPU, since it was enabled.  Those
 * of stream s + 1 are the writes to placement handle s, which give its
 * reclaim unit's writes too.
 */
struct nvmet_fdp_cpu {
	u64			host_bytes;	/* HBMW */
	u64			host_writes;	/* write commands */
	struct nvmet_stream_stats stats[];	/* by stream, 0 for none */
};

/* The FDP state of an enabled namespace with placement handles. */
struct nvmet_ns_fdp {
	u16			nr_handles;	/* fdp_handles, at enable */
	u64			ru_size;	/* fdp_ru_size, at enable */
	spinlock_t		lock;		/* handles, events */
	unsigned int		first_event, nr_events;
	struct nvme_fdp_event	events[NVME_FDP_EVENTS_MAX];
	struct nvmet_fdp_cpu __percpu *cpu;
	struct nvmet_stream_stats *zero;	/* the sums at the last reset */
	struct nvmet_fdp_handle	handles[];
};

#endif /* NVMET_FDP_H */
