// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe host: the placement handles of Flexible Data Placement (FDP) used
 * as streams.  Where a namespace's endurance group has FDP enabled, with
 * one reclaim group, each scan reads the FDP feature, the reclaim unit
 * size of the configuration in force (FDP Configurations log page) and
 * the placement identifiers of the namespace's handles (Reclaim Unit
 * Handle Status); stream s then goes to the one of handle s - 1, with the
 * Data Placement directive.  streams.c does the rest, as for Streams.
 */
#include "nvme.h"

/* Unlike Streams, FDP needs no enable: the host changes nothing to use it. */
static bool fdp = true;
module_param(fdp, bool, 0644);
MODULE_PARM_DESC(fdp,
		 "use Flexible Data Placement of controllers that have it (default: true)");

/* A log page of endurance group @endgid. */
static int nvme_fdp_get_log(struct nvme_ns *ns, u8 lid, u16 endgid,
			    void *buf, unsigned int len)
{
	struct nvme_command c = { };
	u32 numd = nvme_bytes_to_numd(len);

	c.get_log_page.opcode = nvme_admin_get_log_page;
	c.get_log_page.lid = lid;
	c.get_log_page.numdl = cpu_to_le16(numd & 0xffff);
	c.get_log_page.numdu = cpu_to_le16(numd >> 16);
	c.get_log_page.lsi = cpu_to_le16(endgid);
	c.get_log_page.csi = NVME_CSI_NVM;
	return nvme_streams_cmd(ns, ns->ctrl->admin_q, &c, buf, len, NULL);
}

/*
 * The FDP Configurations log is read whole, in one transfer, up to this
 * size; real logs are a few hundred bytes.
 */
#define NVME_FDP_CONFIGS_MAX	SZ_64K

/*
 * The reclaim unit size of configuration @cidx of endurance group
 * @endgid, which must have one reclaim group; 0 with the reason in @why.
 */
static u64 nvme_fdp_runs(struct nvme_ns *ns, u16 endgid, u8 cidx,
			 const char **why, int *err)
{
	struct nvme_fdp_config_log *log;
	struct nvme_fdp_config_desc *desc = NULL;
	size_t size, len, dsze, off;
	unsigned int i;
	u64 runs = 0;

	*why = "out of memory";
	*err = -ENOMEM;
	log = kzalloc(sizeof(*log), GFP_KERNEL);
	if (!log)
		return 0;
	*why = "configurations log failed";
	*err = nvme_fdp_get_log(ns, NVME_LOG_FDP_CONFIGS, endgid, log,
				sizeof(*log));
	if (*err)
		goto out;
	size = le32_to_cpu(log->sze);
	*why = "configurations log is not valid";
	if (cidx > le16_to_cpu(log->numfdpc) || size <= sizeof(*log))
		goto out;
	*why = "configurations log is too large";
	if (size > min_t(size_t, NVME_FDP_CONFIGS_MAX,
			 (size_t)ns->ctrl->max_hw_sectors << SECTOR_SHIFT))
		goto out;
	kfree(log);
	*why = "out of memory";
	*err = -ENOMEM;
	/* Log pages are read in dwords. */
	len = round_up(size, 4);
	log = kzalloc(len, GFP_KERNEL);
	if (!log)
		return 0;
	*why = "configurations log failed";
	*err = nvme_fdp_get_log(ns, NVME_LOG_FDP_CONFIGS, endgid, log, len);
	if (*err)
		goto out;
	/* Descriptor @cidx, each where the one before it says it ends. */
	*why = "configurations log is not valid";
	for (i = 0, off = sizeof(*log); i <= cidx; i++, off += dsze) {
		if (off + sizeof(*desc) > size)
			goto out;
		desc = (void *)log + off;
		dsze = le16_to_cpu(desc->dsze);
		if (dsze < sizeof(*desc) || off + dsze > size)
			goto out;
	}
	if (!(desc->fdpa & NVME_FDP_FDPA_VALID))
		goto out;
	*why = "more than one reclaim group";
	if (le32_to_cpu(desc->nrg) != 1)
		goto out;
	*why = "no reclaim unit size";
	runs = le64_to_cpu(desc->runs);
	if (runs)
		*why = NULL;
out:
	kfree(log);
	return runs;
}

/* Placement handles read, at most: the most streams a namespace has. */
#define NVME_FDP_MAX_HANDLES	BLK_MAX_STREAMS

/*
 * The placement identifiers of the handles of @ns, in @si, from its
 * Reclaim Unit Handle Status; their number, 0 with the reason in @why.
 */
static u16 nvme_fdp_handles(struct nvme_ns *ns, struct nvme_streams_info *si,
			    const char **why, int *err)
{
	struct nvme_fdp_ruh_status *st;
	struct nvme_command c = { };
	unsigned int size, i;
	u16 n = 0;

	*why = "out of memory";
	*err = -ENOMEM;
	size = struct_size(st, ruhsd, NVME_FDP_MAX_HANDLES);
	st = kzalloc(size, GFP_KERNEL);
	if (!st)
		return 0;
	*why = NULL;
	c.common.opcode = nvme_cmd_io_mgmt_recv;
	c.common.nsid = cpu_to_le32(ns->head->ns_id);
	c.common.cdw10 = cpu_to_le32(NVME_IO_MGMT_RECV_MO_RUHS);
	c.common.cdw11 = cpu_to_le32(nvme_bytes_to_numd(size));
	*err = nvme_streams_cmd(ns, ns->queue, &c, st, size, NULL);
	if (*err) {
		/* An I/O command: an inaccessible path (ANA) cannot say. */
		si->path_error = *err > 0 && nvme_is_path_error(*err);
		*why = si->path_error ? "path not accessible" :
			"handle status failed";
		goto out;
	}
	n = min_t(unsigned int, le16_to_cpu(st->nruhsd), NVME_FDP_MAX_HANDLES);
	if (!n) {
		*why = "no placement handles";
		goto out;
	}
	si->plids = kcalloc(n, sizeof(*si->plids), GFP_KERNEL);
	if (!si->plids) {
		*why = "out of memory";
		*err = -ENOMEM;
		n = 0;
		goto out;
	}
	for (i = 0; i < n; i++)
		si->plids[i] = le16_to_cpu(st->ruhsd[i].pid);
out:
	kfree(st);
	return n;
}

/**
 * nvme_fdp_setup() - find the placement handles a namespace may use
 * @ns: the namespace
 * @id: its Identify Namespace data
 * @si: where the placement identifiers of its handles go
 * @used: set where its endurance group has FDP enabled, even where the
 *	handles cannot be used; then the Streams directive is not tried
 * @why: the reason where there are none
 * @err: the status or error that goes with @why
 *
 * Return: the number of placement handles @ns may use as streams, 0 if
 * none.
 */
u16 nvme_fdp_setup(struct nvme_ns *ns, struct nvme_id_ns *id,
		   struct nvme_streams_info *si, bool *used, const char **why,
		   int *err)
{
	u16 endgid = le16_to_cpu(id->endgid);
	struct nvme_command c = { };
	union nvme_result res;
	u32 result;
	u64 runs;
	u16 n;

	*used = false;
	if (!fdp || !(ns->ctrl->ctratt & NVME_CTRL_ATTR_FDPS) || !endgid)
		return 0;
	c.features.opcode = nvme_admin_get_features;
	c.features.fid = cpu_to_le32(NVME_FEAT_FDP);
	c.features.dword11 = cpu_to_le32(endgid);
	*err = nvme_streams_cmd(ns, ns->ctrl->admin_q, &c, NULL, 0, &res);
	if (*err) {
		/* Said for a new namespace; Streams may still be there. */
		*used = false;
		if (!test_bit(NVME_NS_READY, &ns->flags))
			dev_info(ns->ctrl->device,
				 "nsid %u: FDP not used: FDP feature failed (%d)\n",
				 ns->head->ns_id, *err);
		*err = 0;
		return 0;
	}
	result = le32_to_cpu(res.u32);
	*used = result & NVME_FDP_FDPE;
	/*
	 * FDP disabled: where the streams were placement handles, or the
	 * namespace has none left (an earlier scan already saw FDP off and
	 * dropped the handles before the refusal of a write placed by them
	 * came in), that explains a refusal, and FDP is set up afresh once
	 * it is enabled again.  Not where the namespace uses the Streams
	 * directive: a refusal of that is not explained by FDP.
	 */
	if (!*used) {
		if (ns->plids || !ns->nr_streams)
			clear_bit(NVME_NS_STREAMS_REFUSED, &ns->flags);
		return 0;
	}
	if (!nvme_streams_trusted(ns))
		return 0;

	runs = nvme_fdp_runs(ns, endgid,
			     (result >> NVME_FDP_FDPCIDX_SHIFT) & 0xff, why, err);
	if (!runs)
		return 0;
	n = nvme_fdp_handles(ns, si, why, err);
	if (!n)
		return 0;
	si->granularity = min_t(u64, runs, U32_MAX);
	/* Said when the count changes; io_min and io_opt stay as they were. */
	if (n != ns->nr_streams || !ns->plids)
		dev_info(ns->ctrl->device,
			 "nsid %u: FDP, %u placement handles, reclaim unit %llu bytes\n",
			 ns->head->ns_id, n, runs);
	return n;
}
