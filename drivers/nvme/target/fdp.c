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
 * host sees it in Identify, the FDP feature and the four FDP log pages,
 * which are here, and in I/O Management Receive and Send, which are in
 * fdp-io.c with the writes.
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
 * FDP is enabled and disabled only through configfs: Set Features FDP
 * from a host fails with Command Sequence Error, as it does on any
 * endurance group that has a namespace.  A change of "fdp_enable" while
 * the namespace is enabled is announced to the hosts as a change of the
 * namespace.
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
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include "fdp.h"

/*
 * Whether some enabled namespace has placement handles; subsystem lock
 * held.
 */
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
	BUILD_BUG_ON(sizeof(struct nvme_id_endgrp_list) !=
		     NVME_IDENTIFY_DATA_SIZE);
	BUILD_BUG_ON(sizeof(struct nvme_endgrp_log) != 512);
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
	/* Whole blocks, so that what a unit has written is in blocks too. */
	if (!IS_ALIGNED(ns->fdp_ru_size, 1ULL << ns->blksize_shift)) {
		pr_err("nsid %u: fdp_ru_size is not a multiple of the block size\n",
		       ns->nsid);
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

/* --- Get Log Page, Identify, Get and Set Features, by endurance group. */

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
		status = nvmet_invalid_field(req, LOG_LOC(lpo));
		goto out;
	}
	mutex_lock(&subsys->lock);
	ns = nvmet_fdp_endgrp(subsys, le16_to_cpu(cmd->lsi));
	if (!ns) {
		mutex_unlock(&subsys->lock);
		status = nvmet_invalid_field(req, LOG_LOC(lsi));
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
		status = nvmet_invalid_field(req, LOG_LOC(lpo));
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
		status = nvmet_invalid_field(req, FEAT_LOC(cdw11));
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
		status = nvmet_invalid_field(req, FEAT_LOC(cdw11));
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
		return nvmet_invalid_field(req, FEAT_LOC(nsid));
	if (!READ_ONCE(req->ns->fdp_enabled))
		return NVME_SC_FDP_DISABLED | NVME_STATUS_DNR;
	*handle = cdw11 & 0xffff;
	*noet = (cdw11 >> 16) & 0xff;
	if (*handle >= req->ns->fdp->nr_handles)
		return nvmet_invalid_field(req, FEAT_LOC(cdw11));
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
		return nvmet_invalid_field(req, FEAT_LOC(cdw11));
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

/* Get (@set false) or Set Features FDP or FDP Events. */
u16 nvmet_feat_fdp(struct nvmet_req *req, bool set)
{
	u8 fid = le32_to_cpu(req->cmd->common.cdw10) & 0xff;

	if (!req->sq->ctrl->fdp)
		return nvmet_invalid_field(req, FEAT_LOC(cdw10));
	if (fid == NVME_FEAT_FDP)
		return set ? nvmet_set_feat_fdp(req) : nvmet_get_feat_fdp(req);
	return set ? nvmet_set_feat_fdp_events(req) :
		nvmet_get_feat_fdp_events(req);
}
