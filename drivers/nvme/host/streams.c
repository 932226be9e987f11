// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe host: the Streams directive.
 *
 * On a controller that has Directives (OACS) and lists Streams in its
 * Identify directive, Streams is enabled for all namespaces, and each
 * namespace is given the streams the controller grants it; the count
 * becomes the max_streams queue limit.  Writes then carry their bio's
 * stream ID as the Streams directive (see nvme_streams_setup_write()).
 * Nothing here fails a probe: a controller or namespace whose set-up
 * fails works on without streams, with one log line.
 */
#include "nvme.h"

static bool streams = true;
module_param(streams, bool, 0644);
MODULE_PARM_DESC(streams,
		 "use the Streams directive of controllers that have it (default: true)");

static int nvme_dir_recv(struct nvme_ctrl *ctrl, u32 nsid, u8 dtype, u8 doper,
			 u32 cdw12, void *buf, unsigned int len,
			 union nvme_result *result)
{
	struct nvme_command c = { };

	c.directive.opcode = nvme_admin_directive_recv;
	c.directive.nsid = cpu_to_le32(nsid);
	c.directive.numd = cpu_to_le32(len ? len / 4 - 1 : 0);
	c.directive.doper = doper;
	c.directive.dtype = dtype;
	c.common.cdw12 = cpu_to_le32(cdw12);
	return __nvme_submit_sync_cmd(ctrl->admin_q, &c, result, buf, len,
				      NVME_QID_ANY, 0);
}

/*
 * Whether the Identify directive of @nsid has Streams supported (@what 0)
 * or enabled (@what 1): bit 1 of the first byte of that bitmap in its
 * Return Parameters.  0 or 1, or the error of the command.
 */
static int nvme_dir_streams_bit(struct nvme_ctrl *ctrl, u32 nsid, int what)
{
	struct nvme_dir_identify_params *id;
	int ret;

	id = kzalloc(sizeof(*id), GFP_KERNEL);
	if (!id)
		return -ENOMEM;
	ret = nvme_dir_recv(ctrl, nsid, NVME_DIR_IDENTIFY,
			    NVME_DIR_RCV_ID_OP_PARAM, 0, id, sizeof(*id), NULL);
	if (!ret)
		ret = !!((what ? id->enabled : id->supported)[0] &
			 (1 << NVME_DIR_STREAMS));
	kfree(id);
	return ret;
}

/*
 * Called when the controller is (re)initialized: enable Streams for all
 * namespaces if the controller has it.  Streams state does not survive a
 * controller reset, so this runs again after each.
 */
void nvme_streams_init_ctrl(struct nvme_ctrl *ctrl)
{
	struct nvme_command c = { };
	int ret;

	ctrl->streams = false;
	if (!streams || !(ctrl->oacs & NVME_CTRL_OACS_DIRECTIVES))
		return;

	ret = nvme_dir_streams_bit(ctrl, NVME_NSID_ALL, 0);
	if (ret < 0)
		dev_info(ctrl->device,
			 "Streams not used: Identify directive failed (%d)\n",
			 ret);
	if (ret <= 0)
		return;

	c.directive.opcode = nvme_admin_directive_send;
	c.directive.nsid = cpu_to_le32(NVME_NSID_ALL);
	c.directive.doper = NVME_DIR_SND_ID_OP_ENABLE;
	c.directive.dtype = NVME_DIR_IDENTIFY;
	c.directive.tdtype = NVME_DIR_STREAMS;
	c.directive.endir = NVME_DIR_ENDIR;
	ret = nvme_submit_sync_cmd(ctrl->admin_q, &c, NULL, 0);
	if (ret) {
		dev_info(ctrl->device,
			 "Streams not used: enabling them failed (%d)\n", ret);
		return;
	}
	ctrl->streams = true;
}

/*
 * Before the queue is frozen: how many streams namespace @ns gets.  Its
 * own allocation if it has one, else what the controller grants when
 * asked for as many streams as it has (MSL, at most BLK_MAX_STREAMS).
 */
void nvme_streams_query_ns(struct nvme_ns *ns, struct nvme_streams_info *si)
{
	struct nvme_ctrl *ctrl = ns->ctrl;
	struct streams_directive_params p;
	union nvme_result res;
	u32 nsid = ns->head->ns_id;
	u16 want;
	int ret;

	si->max_streams = 0;
	/* Not every namespace of a controller with Streams has them. */
	if (!ctrl->streams || nvme_dir_streams_bit(ctrl, nsid, 1) <= 0)
		return;

	ret = nvme_dir_recv(ctrl, nsid, NVME_DIR_STREAMS,
			    NVME_DIR_RCV_ST_OP_PARAM, 0, &p, sizeof(p), NULL);
	if (ret) {
		dev_info(ctrl->device,
			 "nsid %u: Streams not used: parameters failed (%d)\n",
			 nsid, ret);
		return;
	}
	si->max_streams = le16_to_cpu(p.nsa);
	if (!si->max_streams) {
		want = min_t(u16, le16_to_cpu(p.msl), BLK_MAX_STREAMS);
		ret = want ? nvme_dir_recv(ctrl, nsid, NVME_DIR_STREAMS,
					   NVME_DIR_RCV_ST_OP_RESOURCE, want,
					   NULL, 0, &res) : -EINVAL;
		if (!ret)
			si->max_streams = le32_to_cpu(res.u32) & 0xffff;
		if (!si->max_streams) {
			dev_info(ctrl->device,
				 "nsid %u: Streams not used: no stream granted (%d)\n",
				 nsid, ret);
			return;
		}
	}
	si->max_streams = min_t(u16, si->max_streams, BLK_MAX_STREAMS);
	/*
	 * Said when the count changes, not applied: io_min and io_opt stay
	 * as they were.
	 */
	if (si->max_streams != ns->disk->queue->limits.max_streams)
		dev_info(ctrl->device,
			 "nsid %u: %u streams, write size %u blocks, granularity %u\n",
			 nsid, si->max_streams, le32_to_cpu(p.sws),
			 le16_to_cpu(p.sgs));
}

/* Inside the limits update: the streams found by nvme_streams_query_ns(). */
void nvme_streams_set_limits(struct nvme_ns *ns, struct queue_limits *lim,
			     struct nvme_streams_info *si)
{
	lim->max_streams = si->max_streams;
}

/*
 * The streams a multipath head offers: the fewest of its paths'.  Worked
 * out afresh at each update, as stacking onto the head's own limit could
 * only ever lower it, and a path's count grows again after a reset.
 */
u16 nvme_streams_head_max(struct nvme_ns_head *head)
{
	unsigned short max = BLK_MAX_STREAMS;
	struct nvme_ns *ns;
	int srcu_idx;

	srcu_idx = srcu_read_lock(&head->srcu);
	list_for_each_entry_srcu(ns, &head->list, siblings,
				 srcu_read_lock_held(&head->srcu))
		max = min(max, ns->disk->queue->limits.max_streams);
	srcu_read_unlock(&head->srcu, srcu_idx);
	return max;
}
