// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe host: the Streams directive and Flexible Data Placement (FDP).
 *
 * A namespace whose endurance group has FDP enabled uses its placement
 * handles as streams, whether or not it also has the Streams directive:
 * at each scan the FDP feature, the FDP Configurations log page (one
 * reclaim group, a reclaim unit size) and the Reclaim Unit Handle Status
 * give the placement identifiers of its handles, at most 255, and stream
 * s goes to the one of handle s - 1 with the Data Placement directive.
 * The rest of what is said below of Streams holds for FDP too: when a
 * write carries a placement, what makes a write refused for it, and that
 * nothing fails because of it.  "fdp=0" turns FDP off; the Streams
 * directive is only used with "streams=1".
 *
 * Each namespace whose Identify directive lists Streams is set up when
 * the controller's namespaces are scanned, after the controller is live:
 * Streams enabled for it (Enable Directive, NSID of the namespace) unless
 * it is already, and its Return Parameters read.  No stream resources are
 * allocated: the namespace uses the subsystem's shared pool, so that no
 * host or namespace takes streams from another.  It uses as many stream
 * identifiers as it may have streams open: its allocation (NSA) if
 * someone made one, else the pool (NSSA), at most MSL and at most 255.
 * Writes then carry their bio's stream ID as the Streams directive (see
 * nvme_streams_setup_write()).
 *
 * A write only carries a directive while its namespace's streams are set
 * up on the controller as it is now (NVME_NS_STREAMS): a controller reset
 * ends that, and the scan that follows sets them up again.  A write the
 * device still refuses for its directive goes out again without it (see
 * nvme_streams_refused()), and only if that succeeds does the namespace
 * stop using streams.  Nothing here fails a probe or a write: a
 * namespace whose set-up fails works on without streams, with one log
 * line, and a controller that lets directive commands time out twice is
 * sent no more of them.
 */
#include "nvme.h"

/*
 * Off by default.  Enabling Streams changes the state of a device for
 * every host and namespace that shares its stream resources, and some
 * devices place data differently once it is on.  The support of Linux
 * 4.13 to 5.17, once turned on, enabled Streams on every capable
 * namespace whether anyone used streams or not, which is part of why it
 * was removed.  The administrator who wants streams turns this on.  (FDP
 * needs no such switch: the host changes nothing on the device to use
 * it.)
 */
static bool streams;
module_param(streams, bool, 0644);
MODULE_PARM_DESC(streams,
		 "enable and use the Streams directive of controllers that have it (default: false)");

static bool fdp = true;
module_param(fdp, bool, 0644);
MODULE_PARM_DESC(fdp,
		 "use Flexible Data Placement of controllers that have it (default: true)");

/*
 * A command that sets up streams, on queue @q: its status, or a negative
 * error.  One that got no answer within the timeout costs a timeout and
 * the recovery that follows; the controller gets a second chance, as the
 * timeout may have had another cause, and after a second such command is
 * sent no more of them for its life.
 */
static int nvme_streams_cmd(struct nvme_ns *ns, struct request_queue *q,
			    struct nvme_command *c, void *buf, unsigned int len,
			    union nvme_result *result)
{
	struct nvme_ctrl *ctrl = ns->ctrl;
	unsigned long start = jiffies;
	int ret;

	ret = __nvme_submit_sync_cmd(q, c, result, buf, len, NVME_QID_ANY, 0);
	if (ret < 0 && time_after_eq(jiffies, start + q->rq_timeout) &&
	    test_and_set_bit(NVME_CTRL_STREAMS_TIMEOUT, &ctrl->flags) &&
	    !test_and_set_bit(NVME_CTRL_STREAMS_BROKEN, &ctrl->flags))
		dev_warn(ctrl->device,
			 "Streams and FDP not used: their commands time out\n");
	return ret;
}

/* A directive command for @ns. */
static int nvme_dir_cmd(struct nvme_ns *ns, struct nvme_command *c,
			void *buf, unsigned int len, union nvme_result *result)
{
	c->directive.nsid = cpu_to_le32(ns->head->ns_id);
	c->directive.numd = cpu_to_le32(len ? len / 4 - 1 : 0);
	return nvme_streams_cmd(ns, ns->ctrl->admin_q, c, buf, len, result);
}

static int nvme_dir_recv(struct nvme_ns *ns, u8 dtype, u8 doper, u32 cdw12,
			 void *buf, unsigned int len, union nvme_result *result)
{
	struct nvme_command c = { };

	c.directive.opcode = nvme_admin_directive_recv;
	c.directive.dtype = dtype;
	c.directive.doper = doper;
	c.common.cdw12 = cpu_to_le32(cdw12);
	return nvme_dir_cmd(ns, &c, buf, len, result);
}

/*
 * Whether the Identify directive of @ns lists Streams as supported and
 * as enabled.  0, or the status or error of the command.
 */
static int nvme_dir_streams(struct nvme_ns *ns, bool *supported, bool *enabled)
{
	struct nvme_dir_identify_params *id;
	int ret;

	id = kzalloc(sizeof(*id), GFP_KERNEL);
	if (!id)
		return -ENOMEM;
	ret = nvme_dir_recv(ns, NVME_DIR_IDENTIFY, NVME_DIR_RCV_ID_OP_PARAM, 0,
			    id, sizeof(*id), NULL);
	*supported = !ret && (id->supported[0] & (1 << NVME_DIR_STREAMS));
	*enabled = !ret && (id->enabled[0] & (1 << NVME_DIR_STREAMS));
	kfree(id);
	return ret;
}

static int nvme_dir_enable_streams(struct nvme_ns *ns)
{
	struct nvme_command c = { };

	c.directive.opcode = nvme_admin_directive_send;
	c.directive.dtype = NVME_DIR_IDENTIFY;
	c.directive.doper = NVME_DIR_SND_ID_OP_ENABLE;
	c.directive.tdtype = NVME_DIR_STREAMS;
	c.directive.endir = NVME_DIR_ENDIR;
	return nvme_dir_cmd(ns, &c, NULL, 0, NULL);
}

/*
 * The controller is being (re)initialized: whatever Streams state it had
 * is gone, so no namespace uses streams until the scan that follows sets
 * them up again.  I/O is quiesced.
 */
void nvme_streams_init_ctrl(struct nvme_ctrl *ctrl)
{
	struct nvme_ns *ns;
	int srcu_idx;

	srcu_idx = srcu_read_lock(&ctrl->srcu);
	list_for_each_entry_srcu(ns, &ctrl->namespaces, list,
				 srcu_read_lock_held(&ctrl->srcu)) {
		clear_bit(NVME_NS_STREAMS, &ns->flags);
		clear_bit(NVME_NS_STREAMS_REFUSED, &ns->flags);
	}
	srcu_read_unlock(&ctrl->srcu, srcu_idx);
}

/*
 * Whether @ns may use the streams that its device says are enabled.  Not
 * after a write was refused for its stream (nvme_streams_resent()) while
 * they are off since: the device refused them although enabled, and they
 * stay off until the next reset.  Once a scan finds them set up again and
 * still enabled, a later refusal asks for a scan again.
 */
static bool nvme_streams_trusted(struct nvme_ns *ns)
{
	if (!test_bit(NVME_NS_STREAMS_REFUSED, &ns->flags))
		return true;
	if (!test_bit(NVME_NS_STREAMS, &ns->flags))
		return false;
	clear_bit(NVME_NS_STREAMS_REFUSED, &ns->flags);
	return true;
}

/*
 * How many streams @ns may use, from its Streams Return Parameters: its
 * allocation, else the shared pool, at most MSL and BLK_MAX_STREAMS.
 */
static u16 nvme_streams_count(struct nvme_ns *ns, const char **why, int *err)
{
	struct streams_directive_params *p;
	u16 n;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return 0;
	*err = nvme_dir_recv(ns, NVME_DIR_STREAMS, NVME_DIR_RCV_ST_OP_PARAM, 0,
			     p, sizeof(*p), NULL);
	if (*err) {
		*why = "parameters failed";
		n = 0;
	} else {
		n = le16_to_cpu(p->nsa) ?: le16_to_cpu(p->nssa);
		n = min3(n, le16_to_cpu(p->msl), (u16)BLK_MAX_STREAMS);
		if (!n)
			*why = "no stream resources available";
		/*
		 * Said when the count changes, not applied: io_min and io_opt
		 * stay as they were.
		 */
		else if (n != ns->nr_streams)
			dev_info(ns->ctrl->device,
				 "nsid %u: %u streams, write size %u blocks, granularity %u\n",
				 ns->head->ns_id, n, le32_to_cpu(p->sws),
				 le16_to_cpu(p->sgs));
	}
	kfree(p);
	return n;
}

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
	size_t size, dsze, off;
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
	log = kzalloc(size, GFP_KERNEL);
	if (!log)
		return 0;
	*why = "configurations log failed";
	*err = nvme_fdp_get_log(ns, NVME_LOG_FDP_CONFIGS, endgid, log, size);
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

/*
 * The FDP placement handles @ns may use as streams, where its endurance
 * group @endgid has FDP enabled (@used set then, even where they cannot
 * be used); 0 if none, with the reason in @why.
 */
static u16 nvme_fdp_setup(struct nvme_ns *ns, u16 endgid,
			  struct nvme_streams_info *si, bool *used,
			  const char **why, int *err)
{
	struct nvme_command c = { };
	union nvme_result res;
	u32 result;
	u64 runs;
	u16 n;

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
	/* Said when the count changes; io_min and io_opt stay as they were. */
	if (n != ns->nr_streams || !ns->plids)
		dev_info(ns->ctrl->device,
			 "nsid %u: FDP, %u placement handles, reclaim unit %llu bytes\n",
			 ns->head->ns_id, n, runs);
	return n;
}

/* How many streams @ns may use: 0 if none, with the reason in @why. */
static u16 nvme_streams_setup(struct nvme_ns *ns, struct nvme_id_ns *id,
			      struct nvme_streams_info *si, const char **why,
			      int *err)
{
	bool supported, enabled, used;
	u16 n;
	int ret;

	*why = NULL;
	*err = 0;
	if (test_bit(NVME_CTRL_STREAMS_BROKEN, &ns->ctrl->flags))
		return 0;
	/* FDP first; the Streams directive where FDP is not enabled. */
	if (fdp && (ns->ctrl->ctratt & NVME_CTRL_ATTR_FDPS) && id->endgid) {
		n = nvme_fdp_setup(ns, le16_to_cpu(id->endgid), si, &used, why,
				   err);
		if (used) {
			si->fdp_tried = true;
			return n;
		}
	}
	if (!streams || !(ns->ctrl->oacs & NVME_CTRL_OACS_DIRECTIVES))
		return 0;
	/* A device that rejects the Identify directive has no Streams. */
	ret = nvme_dir_streams(ns, &supported, &enabled);
	if (ret || !supported)
		return 0;

	/* One that lost its state (the namespace came back) is set up again. */
	if (enabled && !nvme_streams_trusted(ns))
		return 0;
	if (!enabled) {
		ret = nvme_dir_enable_streams(ns);
		if (ret) {
			*why = "enabling them failed";
			*err = ret;
			return 0;
		}
	}

	return nvme_streams_count(ns, why, err);
}

/*
 * Before the queue is frozen, at each scan: set up the streams of @ns
 * (Identify Namespace @id) and say how many it has.  A failure is logged
 * once: when the namespace had streams, or when it is new.
 */
void nvme_streams_query_ns(struct nvme_ns *ns, struct nvme_id_ns *id,
			   struct nvme_streams_info *si)
{
	const char *why;
	int err;

	si->max_streams = nvme_streams_setup(ns, id, si, &why, &err);
	si->refused = test_bit(NVME_NS_STREAMS_REFUSED, &ns->flags);
	if (si->max_streams)
		return;
	clear_bit(NVME_NS_STREAMS, &ns->flags);
	if (why && (ns->nr_streams || !test_bit(NVME_NS_READY, &ns->flags)))
		dev_info(ns->ctrl->device,
			 "nsid %u: %s not used: %s (%d)\n", ns->head->ns_id,
			 si->fdp_tried ? "FDP" : "Streams", why, err);
}

/*
 * Inside the limits update: the streams found by nvme_streams_query_ns().
 * Without multipath they are also what the namespace head has.  Of
 * those, max_streams counts the ones stream IDs go to.  Writes use them
 * from here on.
 */
void nvme_streams_set_limits(struct nvme_ns *ns, struct queue_limits *lim,
			     struct nvme_streams_info *si)
{
	/* The queue is frozen: no write reads the placement identifiers. */
	swap(ns->plids, si->plids);
	kfree(si->plids);
	if (si->path_error)
		set_bit(NVME_NS_STREAMS_UNKNOWN, &ns->flags);
	else
		clear_bit(NVME_NS_STREAMS_UNKNOWN, &ns->flags);
	WRITE_ONCE(ns->nr_streams, si->max_streams);
	lim->max_streams = nvme_streams_for_ids(si->max_streams);
	if (!nvme_ns_head_multipath(ns->head))
		WRITE_ONCE(ns->head->nr_streams, si->max_streams);
	/*
	 * Not where a write was refused for its stream since the device was
	 * asked: the scan that the refusal queued decides.
	 */
	if (si->max_streams &&
	    (si->refused || !test_bit(NVME_NS_STREAMS_REFUSED, &ns->flags)))
		set_bit(NVME_NS_STREAMS, &ns->flags);
}

/*
 * Inside the limits update of a multipath head: the streams it offers,
 * the fewest of its paths', which every path folds stream IDs onto, so
 * that an ID goes to the same stream whichever path carries it.  Worked
 * out afresh at each update, as a path's count grows again after a reset
 * that brings its streams back.  A path that was inaccessible when asked
 * carries no writes and does not count until it is asked again, once
 * accessible (nvme_streams_path_live()).  Returns the head's max_streams.
 */
u16 nvme_streams_head_max(struct nvme_ns_head *head)
{
	u8 max = BLK_MAX_STREAMS;
	bool known = false;
	struct nvme_ns *ns;
	int srcu_idx;

	srcu_idx = srcu_read_lock(&head->srcu);
	list_for_each_entry_srcu(ns, &head->list, siblings,
				 srcu_read_lock_held(&head->srcu)) {
		if (test_bit(NVME_NS_STREAMS_UNKNOWN, &ns->flags))
			continue;
		max = min(max, READ_ONCE(ns->nr_streams));
		known = true;
	}
	srcu_read_unlock(&head->srcu, srcu_idx);
	if (!known)
		max = 0;
	WRITE_ONCE(head->nr_streams, max);
	return nvme_streams_for_ids(max);
}

/*
 * The path @ns became accessible (ANA): if it could not say what streams
 * it has when it was scanned, scan it again.
 */
void nvme_streams_path_live(struct nvme_ns *ns)
{
	if (test_bit(NVME_NS_STREAMS_UNKNOWN, &ns->flags))
		nvme_queue_scan(ns->ctrl);
}

/*
 * A write that the device refused with Invalid Field while it carried the
 * Streams or the Data Placement directive, or with FDP Disabled while it
 * carried the Data Placement directive, as a device does that no longer
 * has Streams enabled for the namespace (it was reset, or the namespace
 * went and came back), or has FDP disabled, or does not take them at
 * all.  Whether the directive was the cause is not known yet: the caller
 * sends the write again without it, whatever its retry count, and
 * nvme_streams_resent() sees how that ends.
 */
bool nvme_streams_refused(struct request *req)
{
	struct nvme_ns *ns = req->q->queuedata;
	struct nvme_command *cmd = nvme_req(req)->cmd;
	u16 dtype = le16_to_cpu(cmd->rw.control) & NVME_RW_DTYPE_MASK;
	u16 sc = nvme_req(req)->status & NVME_SCT_SC_MASK;

	if ((sc != NVME_SC_INVALID_FIELD &&
	     (sc != NVME_SC_FDP_DISABLED || dtype != NVME_RW_DTYPE_DPLCMT)) ||
	    blk_rq_is_passthrough(req) ||
	    req_op(req) != REQ_OP_WRITE || !ns ||
	    (dtype != NVME_RW_DTYPE_STREAMS && dtype != NVME_RW_DTYPE_DPLCMT))
		return false;
	nvme_req(req)->flags |= NVME_REQ_NO_STREAM;
	return true;
}

/*
 * A write sent again without its directive (nvme_streams_refused()) has
 * completed.  If it failed, the directive was not what the device
 * refused: the error goes up as it would without streams, which stay in
 * use.  If it succeeded, the directive was: the namespace stops using
 * streams, with one log line, and the first such refusal since the last
 * reset asks for a scan, which sets them up again where the device had
 * merely lost its state (nvme_streams_setup()).
 */
void nvme_streams_resent(struct request *req)
{
	struct nvme_ns *ns = req->q->queuedata;

	if (nvme_req(req)->status ||
	    !test_and_clear_bit(NVME_NS_STREAMS, &ns->flags))
		return;
	dev_info(ns->ctrl->device,
		 "nsid %u: %s not used: a write was refused for its stream\n",
		 ns->head->ns_id, ns->plids ? "FDP" : "Streams");
	if (!test_and_set_bit(NVME_NS_STREAMS_REFUSED, &ns->flags))
		nvme_queue_scan(ns->ctrl);
}
