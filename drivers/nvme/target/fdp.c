// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe over Fabrics target: Flexible Data Placement (FDP).
 *
 * A namespace whose "fdp_handles" attribute is not 0 is alone in an
 * endurance group whose identifier is its NSID, with one FDP
 * configuration: one reclaim group, that many reclaim unit handles of
 * "fdp_ru_size" bytes each, and the namespace's placement handle i on
 * reclaim unit handle i, so that placement identifier i is handle i.
 * "fdp_enable" says whether FDP is enabled in the endurance group.  The
 * host sees it in Identify, the FDP feature, the four FDP log pages and
 * I/O Management Receive and Send; a write with the Data Placement
 * directive is counted in "stream_stats" under its handle plus one and
 * passed on to the backing block device as that stream.
 *
 * The state a host can see is kept as a device would: how much of the
 * current reclaim unit of each handle is written (a handle moves on to
 * a new unit when one is full, or when the host updates it), the events
 * enabled on each handle, the host events that happened (a unit left
 * not fully written by an update, a write with an invalid placement
 * identifier) and the bytes the host wrote.  Nothing models the media:
 * the FDP Statistics log reports media bytes written equal to host
 * bytes written, and no bytes erased.
 *
 * The specification leaves some things to the controller; here:
 * - a write with an invalid placement identifier is not failed: it goes
 *   to placement handle 0, and the Invalid Placement Identifier event is
 *   logged if handle 0 has it enabled;
 * - a write with the Data Placement directive while FDP is disabled is
 *   failed with Invalid Field in Command, as a write with any directive
 *   that is not enabled;
 * - FDP is enabled and disabled only through configfs: Set Features FDP
 *   from a host fails with Command Sequence Error, as it does on any
 *   endurance group that has a namespace.  A change of "fdp_enable"
 *   while the namespace is enabled is announced to the hosts as a
 *   change of the namespace.
 *
 * Writes are the hot path: a write with a valid placement identifier, or
 * none, takes no lock and writes no memory other CPUs write; it is
 * counted in per-CPU counters only.  How much of its current reclaim unit
 * a handle has written follows from those: the sectors written to it
 * since it last moved to a new unit by an update, modulo the unit's
 * size, worked out only when a host asks (Reclaim Unit Handle Status and
 * Update).  A write with an invalid placement identifier, which may log
 * an event, takes the lock.
 *
 * Locking: "fdp_enable" is read without a lock.  The namespace's FDP
 * state exists from when the namespace is enabled until no command uses
 * it any more after it is disabled, with the handle count and reclaim
 * unit size of the enable (the attributes cannot change while it
 * exists); its spinlock guards the handles (where their reclaim units
 * start, their events enabled) and the events.  The counters are summed
 * over the CPUs without stopping the writes: a write in flight may or
 * may not be seen yet (and on 32-bit, may tear a count).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/unaligned.h>
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

struct nvmet_fdp_stats {
	u64	requests;
	u64	sectors;
};

/*
 * The writes to the namespace on one CPU, since it was enabled.  Those
 * of stream s + 1 are the writes to placement handle s, which give its
 * reclaim unit's writes too.
 */
struct nvmet_fdp_cpu {
	u64			host_bytes;	/* HBMW */
	u64			host_writes;	/* write commands */
	struct nvmet_fdp_stats	stats[];	/* by stream, 0 for none */
};

/* The FDP state of an enabled namespace with placement handles. */
struct nvmet_ns_fdp {
	u16			nr_handles;	/* fdp_handles, at enable */
	u64			ru_size;	/* fdp_ru_size, at enable */
	spinlock_t		lock;		/* handles, events */
	unsigned int		first_event, nr_events;
	struct nvme_fdp_event	events[NVME_FDP_EVENTS_MAX];
	struct nvmet_fdp_cpu __percpu *cpu;
	struct nvmet_fdp_stats	*zero;		/* the sums at the last reset */
	struct nvmet_fdp_handle	handles[];
};

bool nvmet_subsys_has_fdp(struct nvmet_subsys *subsys)
{
	struct nvmet_ns *ns;
	unsigned long idx;

	nvmet_for_each_enabled_ns(&subsys->namespaces, idx, ns)
		if (ns->fdp)
			return true;
	return false;
}

static void nvmet_fdp_check_sizes(void)
{
	BUILD_BUG_ON(sizeof(struct nvme_fdp_config_log) != 16);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_config_desc) != 64);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_ruhu_log) != 8);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_ruhu_desc) != 8);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_stats_log) != 64);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_event) != 64);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_events_log) != 4096);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_ruh_status) != 16);
	BUILD_BUG_ON(sizeof(struct nvme_id_endgrp_list) !=
		     NVME_IDENTIFY_DATA_SIZE);
	BUILD_BUG_ON(sizeof(struct nvme_endgrp_log) != 512);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_ruh_status_desc) != 32);
}

int nvmet_fdp_ns_enable(struct nvmet_ns *ns)
{
	struct nvmet_ns_fdp *fdp;

	nvmet_fdp_check_sizes();

	if (!ns->fdp_handles)
		return 0;
	if (ns->csi == NVME_CSI_ZNS) {
		pr_err("nsid %u: FDP on a zoned namespace\n", ns->nsid);
		return -EINVAL;
	}
	/* The endurance group is named by the NSID: 16 bits. */
	if (ns->nsid > U16_MAX) {
		pr_err("nsid %u: FDP needs an NSID of at most %u\n", ns->nsid,
		       U16_MAX);
		return -EINVAL;
	}
	if (ns->fdp_ru_size < (1ULL << ns->blksize_shift)) {
		pr_err("nsid %u: fdp_ru_size is less than a block\n", ns->nsid);
		return -EINVAL;
	}
	fdp = kzalloc(struct_size(fdp, handles, ns->fdp_handles), GFP_KERNEL);
	if (!fdp)
		return -ENOMEM;
	fdp->zero = kcalloc(ns->fdp_handles + 1, sizeof(*fdp->zero),
			    GFP_KERNEL);
	fdp->cpu = __alloc_percpu(struct_size_t(struct nvmet_fdp_cpu, stats,
						ns->fdp_handles + 1),
				  __alignof__(struct nvmet_fdp_cpu));
	if (!fdp->zero || !fdp->cpu) {
		free_percpu(fdp->cpu);
		kfree(fdp->zero);
		kfree(fdp);
		return -ENOMEM;
	}
	fdp->nr_handles = ns->fdp_handles;
	fdp->ru_size = ns->fdp_ru_size;
	spin_lock_init(&fdp->lock);
	ns->fdp = fdp;
	return 0;
}

/* The namespace is going, subsystem lock held: no command uses it. */
void nvmet_fdp_ns_disable(struct nvmet_ns *ns)
{
	struct nvmet_ns_fdp *fdp = ns->fdp;

	lockdep_assert_held(&ns->subsys->lock);
	if (!fdp)
		return;
	ns->fdp = NULL;
	free_percpu(fdp->cpu);
	kfree(fdp->zero);
	kfree(fdp);
}

/* "fdp_enable" changed: the hosts learn it as a change of the namespace. */
void nvmet_fdp_ns_changed(struct nvmet_ns *ns)
{
	lockdep_assert_held(&ns->subsys->lock);
	if (ns->enabled && ns->fdp_handles)
		nvmet_ns_changed(ns->subsys, ns->nsid);
}

static u16 nvmet_fdp_invalid(struct nvmet_req *req, size_t loc)
{
	req->error_loc = loc;
	return NVME_SC_INVALID_FIELD | NVME_STATUS_DNR;
}

/* Log a host event; the FDP lock held. */
static void nvmet_fdp_event(struct nvmet_ns *ns, u8 type, u16 pid,
			    bool located)
{
	struct nvmet_ns_fdp *fdp = ns->fdp;
	struct nvme_fdp_event *ev;

	lockdep_assert_held(&fdp->lock);
	if (fdp->nr_events == NVME_FDP_EVENTS_MAX) {
		/* Full: the oldest goes. */
		fdp->first_event = (fdp->first_event + 1) % NVME_FDP_EVENTS_MAX;
		fdp->nr_events--;
	}
	ev = &fdp->events[(fdp->first_event + fdp->nr_events++) %
			  NVME_FDP_EVENTS_MAX];
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->flags = NVME_FDP_EVENT_F_PIV | NVME_FDP_EVENT_F_NSIDV;
	ev->pid = cpu_to_le16(pid);
	/* The Timestamp feature's format: milliseconds in bits 47:0. */
	put_unaligned_le64(div_u64(ktime_get_real_ns(), NSEC_PER_MSEC),
			   ev->timestamp);
	ev->nsid = cpu_to_le32(ns->nsid);
	if (located) {
		ev->flags |= NVME_FDP_EVENT_F_LV;
		ev->ruhid = pid;
	}
}

/* Whether @handle has event @type enabled; the FDP lock held. */
static bool nvmet_fdp_event_enabled(struct nvmet_ns_fdp *fdp,
				    unsigned int handle, u8 type)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nvmet_fdp_event_types); i++)
		if (nvmet_fdp_event_types[i] == type)
			return fdp->handles[handle].events & (1 << i);
	return false;
}

/*
 * A write with placement identifier @pid that is not valid: it goes to
 * handle 0, and logs an event where handle 0 has that enabled.
 */
static void nvmet_fdp_invalid_pid(struct nvmet_ns *ns, u16 pid)
{
	struct nvmet_ns_fdp *fdp = ns->fdp;
	unsigned long flags;

	spin_lock_irqsave(&fdp->lock, flags);
	if (nvmet_fdp_event_enabled(fdp, 0, NVME_FDP_EVENT_PID))
		nvmet_fdp_event(ns, NVME_FDP_EVENT_PID, pid, false);
	spin_unlock_irqrestore(&fdp->lock, flags);
}

/*
 * The placement handle of a write with the Data Placement directive: its
 * placement identifier, or 0 where that is not valid.
 */
static inline unsigned int nvmet_fdp_handle(struct nvmet_ns *ns, u16 pid)
{
	return pid < ns->fdp->nr_handles ? pid : 0;
}

/*
 * The stream of the backing device that a write with placement
 * identifier @pid goes to: its handle plus one, at most 255.
 */
u8 nvmet_fdp_stream(struct nvmet_ns *ns, u16 pid)
{
	return nvmet_fdp_handle(ns, pid) + 1;
}

/* A write of @len bytes with placement identifier @pid. */
static void nvmet_fdp_write(struct nvmet_ns *ns, u16 pid, u32 len)
{
	struct nvmet_fdp_cpu __percpu *cpu = ns->fdp->cpu;
	unsigned int handle = nvmet_fdp_handle(ns, pid);

	if (unlikely(pid != handle))
		nvmet_fdp_invalid_pid(ns, pid);
	/*
	 * Under the stream of its handle; that counts the writes of the
	 * handle's reclaim units too (see nvmet_fdp_ru_written()).
	 */
	this_cpu_inc(cpu->stats[handle + 1].requests);
	this_cpu_add(cpu->stats[handle + 1].sectors, len >> SECTOR_SHIFT);
}

/* The host wrote @len bytes, with or without a directive. */
static void nvmet_fdp_host_write(struct nvmet_ns_fdp *fdp, u32 len)
{
	this_cpu_add(fdp->cpu->host_bytes, len);
	this_cpu_inc(fdp->cpu->host_writes);
}

/*
 * A write to a namespace with placement handles: with the Data Placement
 * directive it needs FDP enabled, and goes to its placement handle; with
 * the Streams directive it is left to the Streams code if the namespace
 * has streams.  Counted under its stream, 0 for none.
 */
static u16 nvmet_fdp_parse_write(struct nvmet_req *req)
{
	struct nvme_rw_command *rw = &req->cmd->rw;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_fdp *fdp = ns->fdp;
	u32 len = nvmet_rw_data_len(req);
	u16 status;

	switch (nvmet_rw_dtype(rw)) {
	case 0:
		this_cpu_inc(fdp->cpu->stats[0].requests);
		this_cpu_add(fdp->cpu->stats[0].sectors, len >> SECTOR_SHIFT);
		break;
	case NVME_DIR_FDP:
		if (!READ_ONCE(ns->fdp_enabled))
			return nvmet_fdp_invalid(req,
				offsetof(struct nvme_rw_command, control));
		nvmet_fdp_write(ns, nvmet_rw_dspec(rw), len);
		break;
	case NVME_DIR_STREAMS:
		if (ns->streams_state) {
			/* Counted under its stream by the Streams code. */
			status = nvmet_streams_parse_io_cmd(req);
			if (!status)
				nvmet_fdp_host_write(fdp, len);
			return status;
		}
		fallthrough;
	default:
		return nvmet_fdp_invalid(req,
				offsetof(struct nvme_rw_command, control));
	}
	nvmet_fdp_host_write(fdp, len);
	return NVME_SC_SUCCESS;
}

/* The writes counted under stream @id on all CPUs, since enabled. */
static void nvmet_fdp_sum(struct nvmet_ns_fdp *fdp, unsigned int id,
			  struct nvmet_fdp_stats *sum)
{
	const struct nvmet_fdp_stats *st;
	int cpu;

	sum->requests = 0;
	sum->sectors = 0;
	for_each_possible_cpu(cpu) {
		st = &per_cpu_ptr(fdp->cpu, cpu)->stats[id];
		sum->requests += READ_ONCE(st->requests);
		sum->sectors += READ_ONCE(st->sectors);
	}
}

/* The bytes and write commands of the host, on all CPUs. */
static void nvmet_fdp_host_sum(struct nvmet_ns_fdp *fdp, u64 *bytes,
			       u64 *writes)
{
	const struct nvmet_fdp_cpu *c;
	int cpu;

	*bytes = 0;
	*writes = 0;
	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(fdp->cpu, cpu);
		*bytes += READ_ONCE(c->host_bytes);
		*writes += READ_ONCE(c->host_writes);
	}
}

/*
 * What @handle has written of its current reclaim unit, in bytes, with
 * @sectors written to it in all: a unit written full is left for a new
 * one.  The FDP lock held.
 */
static u64 nvmet_fdp_ru_written(struct nvmet_ns_fdp *fdp,
				unsigned int handle, u64 sectors)
{
	u64 rem;

	lockdep_assert_held(&fdp->lock);
	/* The only division: not per write, per question of a host. */
	div64_u64_rem(sectors - fdp->handles[handle].ru_start,
		      fdp->ru_size >> SECTOR_SHIFT, &rem);
	return rem << SECTOR_SHIFT;
}

/* The sectors written to @handle, since enabled. */
static u64 nvmet_fdp_handle_sectors(struct nvmet_ns_fdp *fdp,
				    unsigned int handle)
{
	struct nvmet_fdp_stats sum;

	nvmet_fdp_sum(fdp, handle + 1, &sum);
	return sum.sectors;
}

/* Add the writes counted under stream @id to @requests and @sectors. */
void nvmet_fdp_stream_stats(struct nvmet_ns *ns, unsigned int id,
			    u64 *requests, u64 *sectors)
{
	struct nvmet_fdp_stats sum;

	if (!ns->fdp || id > ns->fdp->nr_handles)
		return;
	nvmet_fdp_sum(ns->fdp, id, &sum);
	*requests += sum.requests - ns->fdp->zero[id].requests;
	*sectors += sum.sectors - ns->fdp->zero[id].sectors;
}

/* Reset: what the counters are now is what is zero from now on. */
void nvmet_fdp_stream_stats_reset(struct nvmet_ns *ns)
{
	unsigned int id;

	for (id = 0; ns->fdp && id <= ns->fdp->nr_handles; id++)
		nvmet_fdp_sum(ns->fdp, id, &ns->fdp->zero[id]);
}

/* --- Get Log Page and Get and Set Features, by endurance group. */

/*
 * The namespace of endurance group @endgid, or NULL; subsystem lock held.
 * Enabled namespaces only: the others have no FDP state.
 */
static struct nvmet_ns *nvmet_fdp_endgrp(struct nvmet_subsys *subsys,
					 u16 endgid)
{
	struct nvmet_ns *ns;

	lockdep_assert_held(&subsys->lock);
	ns = xa_load(&subsys->namespaces, endgid);
	return ns && ns->fdp ? ns : NULL;
}

static void *nvmet_fdp_configs(struct nvmet_ns *ns, size_t *size)
{
	struct nvme_fdp_config_log *log;
	struct nvme_fdp_config_desc *desc;
	size_t dsze = struct_size(desc, ruhs, ns->fdp->nr_handles);
	unsigned int i;

	*size = sizeof(*log) + dsze;
	log = kzalloc(*size, GFP_KERNEL);
	if (!log)
		return NULL;
	log->numfdpc = 0;	/* 0's based: one configuration */
	log->sze = cpu_to_le32(*size);
	desc = (void *)(log + 1);
	desc->dsze = cpu_to_le16(dsze);
	desc->fdpa = NVME_FDP_FDPA_VALID;
	desc->nrg = cpu_to_le32(1);
	desc->nruh = cpu_to_le16(ns->fdp->nr_handles);
	desc->maxpids = cpu_to_le16(ns->fdp->nr_handles - 1);
	desc->nnss = cpu_to_le32(1);
	desc->runs = cpu_to_le64(ns->fdp->ru_size);
	for (i = 0; i < ns->fdp->nr_handles; i++)
		desc->ruhs[i].ruht = NVME_FDP_RUHT_INITIALLY_ISOLATED;
	return log;
}

static void *nvmet_fdp_ruh_usage(struct nvmet_ns *ns, size_t *size)
{
	struct nvme_fdp_ruhu_log *log;
	unsigned int i;

	*size = struct_size(log, ruhus, ns->fdp->nr_handles);
	log = kzalloc(*size, GFP_KERNEL);
	if (!log)
		return NULL;
	log->nruh = cpu_to_le16(ns->fdp->nr_handles);
	/* Every handle is one of the namespace's placement handles. */
	for (i = 0; i < ns->fdp->nr_handles; i++)
		log->ruhus[i].ruha = NVME_FDP_RUHA_HOST;
	return log;
}

static void *nvmet_fdp_stats(struct nvmet_ns *ns, size_t *size)
{
	struct nvme_fdp_stats_log *log;
	u64 bytes, writes;

	nvmet_fdp_host_sum(ns->fdp, &bytes, &writes);
	*size = sizeof(*log);
	log = kzalloc(*size, GFP_KERNEL);
	if (!log)
		return NULL;
	/* No model of the media: it writes what the host writes. */
	log->hbmw[0] = cpu_to_le64(bytes);
	log->mbmw[0] = cpu_to_le64(bytes);
	return log;
}

/*
 * Endurance Group Information: what the host wrote, in thousands of
 * 512-byte units rounded up, which the media wrote too, and the host's
 * write commands.  The rest, of media the target does not model, is 0.
 */
static void *nvmet_fdp_endgrp_log(struct nvmet_ns *ns, size_t *size)
{
	struct nvme_endgrp_log *log;
	u64 bytes, writes, units;

	nvmet_fdp_host_sum(ns->fdp, &bytes, &writes);
	units = DIV_ROUND_UP_ULL(bytes >> SECTOR_SHIFT, 1000);
	*size = sizeof(*log);
	log = kzalloc(*size, GFP_KERNEL);
	if (!log)
		return NULL;
	put_unaligned_le64(units, log->duw);
	put_unaligned_le64(units, log->muw);
	put_unaligned_le64(writes, log->hwc);
	return log;
}

static void *nvmet_fdp_events(struct nvmet_ns *ns, bool host, size_t *size)
{
	struct nvmet_ns_fdp *fdp = ns->fdp;
	struct nvme_fdp_events_log *log;
	unsigned long flags;
	unsigned int i;

	*size = sizeof(*log);
	log = kzalloc(*size, GFP_KERNEL);
	if (!log)
		return NULL;
	/* All the events here are host events. */
	if (!host)
		return log;
	spin_lock_irqsave(&fdp->lock, flags);
	for (i = 0; i < fdp->nr_events; i++)
		log->events[i] = fdp->events[(fdp->first_event + i) %
					     NVME_FDP_EVENTS_MAX];
	log->nevents = cpu_to_le32(fdp->nr_events);
	spin_unlock_irqrestore(&fdp->lock, flags);
	return log;
}

#define LOG_LOC(field)	offsetof(struct nvme_get_log_page_command, field)

/*
 * The four FDP log pages and Endurance Group Information, of the
 * endurance group that LSI names.
 */
void nvmet_execute_get_log_page_fdp(struct nvmet_req *req)
{
	struct nvme_get_log_page_command *cmd = &req->cmd->get_log_page;
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	u64 offset = nvmet_get_log_page_offset(req->cmd);
	struct nvmet_ns *ns;
	void *log = NULL;
	size_t size;
	u16 status;

	if (offset & 3) {
		status = nvmet_fdp_invalid(req, LOG_LOC(lpo));
		goto out;
	}
	mutex_lock(&subsys->lock);
	ns = nvmet_fdp_endgrp(subsys, le16_to_cpu(cmd->lsi));
	if (!ns) {
		mutex_unlock(&subsys->lock);
		status = nvmet_fdp_invalid(req, LOG_LOC(lsi));
		goto out;
	}
	/* The configurations are there to be read before FDP is enabled. */
	if (cmd->lid != NVME_LOG_FDP_CONFIGS &&
	    cmd->lid != NVME_LOG_ENDURANCE_GROUP &&
	    !READ_ONCE(ns->fdp_enabled)) {
		mutex_unlock(&subsys->lock);
		status = NVME_SC_FDP_DISABLED | NVME_STATUS_DNR;
		goto out;
	}
	switch (cmd->lid) {
	case NVME_LOG_FDP_CONFIGS:
		log = nvmet_fdp_configs(ns, &size);
		break;
	case NVME_LOG_FDP_RUH_USAGE:
		log = nvmet_fdp_ruh_usage(ns, &size);
		break;
	case NVME_LOG_FDP_STATS:
		log = nvmet_fdp_stats(ns, &size);
		break;
	case NVME_LOG_ENDURANCE_GROUP:
		log = nvmet_fdp_endgrp_log(ns, &size);
		break;
	default:
		log = nvmet_fdp_events(ns, cmd->lsp & NVME_FDP_EVENTS_LSP_HOST,
				       &size);
	}
	mutex_unlock(&subsys->lock);
	if (!log) {
		status = NVME_SC_INTERNAL;
		goto out;
	}
	if (offset >= size) {
		status = nvmet_fdp_invalid(req, LOG_LOC(lpo));
		goto out;
	}
	status = nvmet_copy_reply(req, log + offset, size - offset);
out:
	kfree(log);
	nvmet_req_complete(req, status);
}

/*
 * Identify Endurance Group List: the endurance groups, those of the
 * enabled namespaces with placement handles, from the ID in CDW11 bits
 * 15:0 up.
 */
void nvmet_execute_identify_endgrp_list(struct nvmet_req *req)
{
	u16 first = le32_to_cpu(req->cmd->common.cdw11) & 0xffff;
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	struct nvme_id_endgrp_list *list;
	unsigned int n = 0;
	struct nvmet_ns *ns;
	unsigned long idx;
	u16 status;

	list = kzalloc(sizeof(*list), GFP_KERNEL);
	if (!list) {
		status = NVME_SC_INTERNAL;
		goto out;
	}
	mutex_lock(&subsys->lock);
	xa_for_each_start(&subsys->namespaces, idx, ns, first) {
		if (n == NVME_ID_ENDGRP_LIST_MAX)
			break;
		if (ns->fdp)
			list->endgid[n++] = cpu_to_le16(ns->nsid);
	}
	mutex_unlock(&subsys->lock);
	list->num = cpu_to_le16(n);
	status = nvmet_copy_to_sgl(req, 0, list, sizeof(*list));
	kfree(list);
out:
	nvmet_req_complete(req, status);
}

#define FEAT_LOC(field)	offsetof(struct nvme_common_command, field)

/* Get Features FDP: whether FDP is enabled in endurance group CDW11. */
static u16 nvmet_get_feat_fdp(struct nvmet_req *req)
{
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	u16 endgid = le32_to_cpu(req->cmd->common.cdw11);
	struct nvmet_ns *ns;
	u16 status = NVME_SC_SUCCESS;

	mutex_lock(&subsys->lock);
	ns = nvmet_fdp_endgrp(subsys, endgid);
	if (!ns)
		status = nvmet_fdp_invalid(req, FEAT_LOC(cdw11));
	else if (READ_ONCE(ns->fdp_enabled))
		nvmet_set_result(req, NVME_FDP_FDPE);	/* configuration 0 */
	mutex_unlock(&subsys->lock);
	return status;
}

/* Set Features FDP: never, while the endurance group has its namespace. */
static u16 nvmet_set_feat_fdp(struct nvmet_req *req)
{
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	u16 endgid = le32_to_cpu(req->cmd->common.cdw11);
	u16 status;

	mutex_lock(&subsys->lock);
	if (nvmet_fdp_endgrp(subsys, endgid))
		status = NVME_SC_CMD_SEQ_ERROR | NVME_STATUS_DNR;
	else
		status = nvmet_fdp_invalid(req, FEAT_LOC(cdw11));
	mutex_unlock(&subsys->lock);
	return status;
}

/*
 * FDP Events: the placement handle (CDW11 bits 15:0) of the namespace
 * (NSID), and the number of event types (bits 23:16).
 */
static u16 nvmet_fdp_events_args(struct nvmet_req *req, unsigned int *handle,
				 unsigned int *noet)
{
	u32 cdw11 = le32_to_cpu(req->cmd->common.cdw11);
	u16 status;

	status = nvmet_req_find_ns(req);
	if (status)
		return status;
	if (!req->ns->fdp)
		return nvmet_fdp_invalid(req, FEAT_LOC(nsid));
	if (!READ_ONCE(req->ns->fdp_enabled))
		return NVME_SC_FDP_DISABLED | NVME_STATUS_DNR;
	*handle = cdw11 & 0xffff;
	*noet = (cdw11 >> 16) & 0xff;
	if (*handle >= req->ns->fdp->nr_handles)
		return nvmet_fdp_invalid(req, FEAT_LOC(cdw11));
	return NVME_SC_SUCCESS;
}

/* The data of Get Features FDP Events: NOET event descriptors. */
u32 nvmet_feat_fdp_events_len(struct nvmet_req *req)
{
	u32 cdw11 = le32_to_cpu(req->cmd->common.cdw11);

	return ((cdw11 >> 16) & 0xff) *
		sizeof(struct nvme_fdp_supported_event_desc);
}

/* Get Features FDP Events: the events a handle has, and which are on. */
static u16 nvmet_get_feat_fdp_events(struct nvmet_req *req)
{
	struct nvme_fdp_supported_event_desc d[ARRAY_SIZE(nvmet_fdp_event_types)];
	unsigned int handle, noet, i, n;
	unsigned long flags;
	u16 status;

	status = nvmet_fdp_events_args(req, &handle, &noet);
	if (status)
		return status;
	if (!noet)
		return nvmet_fdp_invalid(req, FEAT_LOC(cdw11));
	n = min_t(unsigned int, noet, ARRAY_SIZE(d));
	spin_lock_irqsave(&req->ns->fdp->lock, flags);
	for (i = 0; i < n; i++) {
		d[i].evt = nvmet_fdp_event_types[i];
		d[i].evta = req->ns->fdp->handles[handle].events & (1 << i) ?
			NVME_FDP_EVTA_ENABLED : 0;
	}
	spin_unlock_irqrestore(&req->ns->fdp->lock, flags);
	status = nvmet_copy_reply(req, d, n * sizeof(*d));
	if (!status)
		nvmet_set_result(req, n);
	return status;
}

/*
 * Set Features FDP Events: the event types listed in the data (NOET
 * bytes) on or off (CDW12 bit 0) for a handle.  Types not supported are
 * left alone.
 */
static u16 nvmet_set_feat_fdp_events(struct nvmet_req *req)
{
	bool enable = le32_to_cpu(req->cmd->common.cdw12) & 1;
	unsigned int handle, noet, i, j;
	unsigned long flags;
	u8 types[U8_MAX];
	u8 mask = 0;
	u16 status;

	status = nvmet_fdp_events_args(req, &handle, &noet);
	if (status)
		return status;
	if (noet > req->transfer_len) {
		req->error_loc = FEAT_LOC(dptr);
		return NVME_SC_SGL_INVALID_DATA | NVME_STATUS_DNR;
	}
	status = nvmet_copy_from_sgl(req, 0, types, noet);
	if (status)
		return status;
	for (i = 0; i < noet; i++)
		for (j = 0; j < ARRAY_SIZE(nvmet_fdp_event_types); j++)
			if (types[i] == nvmet_fdp_event_types[j])
				mask |= 1 << j;
	spin_lock_irqsave(&req->ns->fdp->lock, flags);
	if (enable)
		req->ns->fdp->handles[handle].events |= mask;
	else
		req->ns->fdp->handles[handle].events &= ~mask;
	spin_unlock_irqrestore(&req->ns->fdp->lock, flags);
	return NVME_SC_SUCCESS;
}

/* --- I/O Management Receive and Send. */

#define MGMT_LOC(field)	offsetof(struct nvme_common_command, field)

/* Reclaim Unit Handle Status: every placement handle, in order. */
static u16 nvmet_fdp_ruh_status(struct nvmet_req *req)
{
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_fdp *fdp = ns->fdp;
	struct nvme_fdp_ruh_status *st;
	struct nvme_fdp_ruh_status_desc *d;
	unsigned long flags;
	unsigned int i;
	u64 written;
	size_t size;
	u16 status;

	size = struct_size(st, ruhsd, ns->fdp->nr_handles);
	st = kzalloc(size, GFP_KERNEL);
	if (!st)
		return NVME_SC_INTERNAL;
	st->nruhsd = cpu_to_le16(ns->fdp->nr_handles);
	spin_lock_irqsave(&fdp->lock, flags);
	for (i = 0; i < ns->fdp->nr_handles; i++) {
		d = &st->ruhsd[i];
		d->pid = cpu_to_le16(i);
		d->ruhid = cpu_to_le16(i);
		/* Available media writes, in logical blocks. */
		written = nvmet_fdp_ru_written(fdp, i,
					       nvmet_fdp_handle_sectors(fdp, i));
		d->ruamw = cpu_to_le64((fdp->ru_size - written) >>
				       ns->blksize_shift);
	}
	spin_unlock_irqrestore(&fdp->lock, flags);
	/* A smaller buffer gets what fits of it. */
	status = nvmet_copy_reply(req, st, size);
	kfree(st);
	return status;
}

static void nvmet_execute_io_mgmt_recv(struct nvmet_req *req)
{
	u32 cdw10 = le32_to_cpu(req->cmd->common.cdw10);
	u32 numd = le32_to_cpu(req->cmd->common.cdw11);
	u16 status;

	if (!nvmet_check_transfer_len(req, ((size_t)numd + 1) * 4))
		return;
	if (!(cdw10 & 0xff))	/* no operation */
		status = nvmet_zero_sgl(req, 0, req->transfer_len);
	else if ((cdw10 & 0xff) != NVME_IO_MGMT_RECV_MO_RUHS)
		status = nvmet_fdp_invalid(req, MGMT_LOC(cdw10));
	else if (!READ_ONCE(req->ns->fdp_enabled))
		status = NVME_SC_FDP_DISABLED | NVME_STATUS_DNR;
	else
		status = nvmet_fdp_ruh_status(req);
	nvmet_req_complete(req, status);
}

/*
 * Reclaim Unit Handle Update: each placement identifier listed (MOS + 1
 * of them) moves to a new reclaim unit.  All are checked first: one that
 * is not valid fails the command and changes nothing.
 */
static u16 nvmet_fdp_ruh_update(struct nvmet_req *req, unsigned int n)
{
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_fdp *fdp = ns->fdp;
	unsigned long flags;
	unsigned int i, pid;
	__le16 *pids;
	u64 sectors;
	u16 status;

	pids = kmalloc_array(n, sizeof(*pids), GFP_KERNEL);
	if (!pids)
		return NVME_SC_INTERNAL;
	status = nvmet_copy_from_sgl(req, 0, pids, n * sizeof(*pids));
	if (status)
		goto out;
	for (i = 0; i < n; i++) {
		if (le16_to_cpu(pids[i]) >= ns->fdp->nr_handles) {
			status = nvmet_fdp_invalid(req, MGMT_LOC(dptr));
			goto out;
		}
	}
	spin_lock_irqsave(&fdp->lock, flags);
	for (i = 0; i < n; i++) {
		pid = le16_to_cpu(pids[i]);
		sectors = nvmet_fdp_handle_sectors(fdp, pid);
		if (nvmet_fdp_ru_written(fdp, pid, sectors) &&
		    nvmet_fdp_event_enabled(fdp, pid, NVME_FDP_EVENT_RUNFW))
			nvmet_fdp_event(ns, NVME_FDP_EVENT_RUNFW, pid, true);
		fdp->handles[pid].ru_start = sectors;
	}
	spin_unlock_irqrestore(&fdp->lock, flags);
out:
	kfree(pids);
	return status;
}

static void nvmet_execute_io_mgmt_send(struct nvmet_req *req)
{
	u32 cdw10 = le32_to_cpu(req->cmd->common.cdw10);
	unsigned int n = (cdw10 >> 16) + 1;
	u16 status;

	if ((cdw10 & 0xff) != NVME_IO_MGMT_SEND_MO_RUHU) {
		/* 0: no operation */
		nvmet_req_complete(req, (cdw10 & 0xff) ?
				   nvmet_fdp_invalid(req, MGMT_LOC(cdw10)) : 0);
		return;
	}
	if (!nvmet_check_transfer_len(req, n * sizeof(__le16)))
		return;
	if (!READ_ONCE(req->ns->fdp_enabled))
		status = NVME_SC_FDP_DISABLED | NVME_STATUS_DNR;
	else if (n > req->ns->fdp->nr_handles)
		status = nvmet_fdp_invalid(req, MGMT_LOC(cdw10));
	else
		status = nvmet_fdp_ruh_update(req, n);
	nvmet_req_complete(req, status);
}

/*
 * An I/O command to a namespace with placement handles: a write is
 * checked and counted, then goes on to the command set with the rest;
 * I/O Management Receive and Send are parsed here (@mgmt set).
 */
u16 nvmet_fdp_parse_io_cmd(struct nvmet_req *req, bool *mgmt)
{
	*mgmt = false;
	switch (req->cmd->common.opcode) {
	case nvme_cmd_write:
		return nvmet_fdp_parse_write(req);
	case nvme_cmd_io_mgmt_recv:
		*mgmt = true;
		req->execute = nvmet_execute_io_mgmt_recv;
		return NVME_SC_SUCCESS;
	case nvme_cmd_io_mgmt_send:
		*mgmt = true;
		req->execute = nvmet_execute_io_mgmt_send;
		return NVME_SC_SUCCESS;
	default:
		return NVME_SC_SUCCESS;
	}
}

/* Get (@set false) or Set Features FDP or FDP Events. */
u16 nvmet_feat_fdp(struct nvmet_req *req, bool set)
{
	u8 fid = le32_to_cpu(req->cmd->common.cdw10) & 0xff;

	if (!req->sq->ctrl->fdp)
		return nvmet_fdp_invalid(req, FEAT_LOC(cdw10));
	if (fid == NVME_FEAT_FDP)
		return set ? nvmet_set_feat_fdp(req) : nvmet_get_feat_fdp(req);
	return set ? nvmet_set_feat_fdp_events(req) :
		nvmet_get_feat_fdp_events(req);
}
