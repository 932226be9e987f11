// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe host: the Streams directive, and the placement handles of Flexible
 * Data Placement (fdp.c) used as streams.  At each scan of a namespace,
 * before its queue is frozen, nvme_streams_query_ns() sets up FDP where
 * its endurance group has it enabled, else Streams where the namespace
 * has them, and counts the streams it may use; inside the limits update
 * nvme_streams_set_limits() makes that its max_write_streams.  Writes then
 * carry their stream as nvme_streams_setup_write() says, until a
 * controller reset ends the set-up (NVME_NS_STREAMS) or the drive refuses
 * one for its directive (nvme_streams_refused()).  Nothing here fails a
 * probe or a write.  See Documentation/nvme/write-streams.rst.
 */
#include "nvme.h"

/*
 * Off by default.  Enabling Streams changes the state of a device for
 * every host and namespace that shares its stream resources, and some
 * devices place data differently once it is on.  The support of Linux
 * 4.13 to 5.17, once turned on, enabled Streams on every capable
 * namespace whether anyone used streams or not, which is part of why it
 * was removed.  The administrator who wants streams turns this on.
 */
static bool streams;
module_param(streams, bool, 0644);
MODULE_PARM_DESC(streams,
		 "enable and use the Streams directive of controllers that have it (default: false)");

/*
 * A command that sets up streams, on queue @q: its status, or a negative
 * error.  One that got no answer within the timeout costs a timeout and
 * the recovery that follows; the controller gets a second chance, as the
 * timeout may have had another cause, and after a second such command is
 * sent no more of them for its life.
 */
int nvme_streams_cmd(struct nvme_ns *ns, struct request_queue *q,
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
bool nvme_streams_trusted(struct nvme_ns *ns)
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
static u16 nvme_streams_count(struct nvme_ns *ns, struct nvme_id_ns *id,
			      struct nvme_streams_info *si, const char **why,
			      int *err)
{
	u8 lbads = id->lbaf[nvme_lbaf_index(id->flbas)].ds;
	struct streams_directive_params *p;
	u64 blocks;
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
		/* SGS counts in units of SWS, which counts logical blocks. */
		blocks = (u64)le16_to_cpu(p->sgs) * le32_to_cpu(p->sws);
		si->granularity = lbads >= 32 || blocks > (U32_MAX >> lbads) ?
				  U32_MAX : blocks << lbads;
	}
	kfree(p);
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
	n = nvme_fdp_setup(ns, id, si, &used, why, err);
	if (used) {
		si->fdp_tried = true;
		return n;
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

	return nvme_streams_count(ns, id, si, why, err);
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

	si->max_write_streams = nvme_streams_setup(ns, id, si, &why, &err);
	si->refused = test_bit(NVME_NS_STREAMS_REFUSED, &ns->flags);
	if (si->max_write_streams)
		return;
	clear_bit(NVME_NS_STREAMS, &ns->flags);
	if (why && (ns->nr_streams || !test_bit(NVME_NS_READY, &ns->flags)))
		dev_info(ns->ctrl->device,
			 "nsid %u: %s not used: %s (%d)\n", ns->head->ns_id,
			 si->fdp_tried ? "FDP" : "Streams", why, err);
}

/*
 * Inside the limits update: the streams found by nvme_streams_query_ns().
 * Without multipath they are also what the namespace head has.  Writes
 * use them from here on.
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
	WRITE_ONCE(ns->nr_streams, si->max_write_streams);
	lim->max_write_streams = si->max_write_streams;
	lim->write_stream_granularity = si->granularity;
	if (!nvme_ns_head_multipath(ns->head))
		WRITE_ONCE(ns->head->nr_streams, si->max_write_streams);
	/*
	 * Not where a write was refused for its stream since the device was
	 * asked: the scan that the refusal queued decides.
	 */
	if (si->max_write_streams &&
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
 * accessible (nvme_streams_path_live()).  Returns the head's count.
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
	return max;
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
