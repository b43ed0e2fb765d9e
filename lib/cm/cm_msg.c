/* SPDX-License-Identifier: BSD-3-Clause */
/* The IB CM messages (IBTA Vol. 1 12.6.5-12.6.11, 12.8, 12.11), field by field. Offsets
 * are into the MAD data (after the 24-byte common header), as cm_msgs.h lays them out. */
#include "cm_msg.h"

#include <string.h>

#include "net_bytes.h"

const char *
cm_msg_err_name(int err)
{
	static const char *const n[CM_MSG_E_COUNT] = {
	    "ok", "short", "base_version", "class", "class_version", "method", "attr", "field"};
	if (err < 0)
		err = -err;
	return err < CM_MSG_E_COUNT ? n[err] : "?";
}

const char *
cm_attr_name(uint16_t a)
{
	static const char *const n[] = {"REQ",	"MRA",	    "REJ",	"REP", "RTU", "DREQ",
					"DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR"};
	if (a < MAD_ATTR_CM_REQ || a > MAD_ATTR_CM_APR)
		return "?";
	return n[a - MAD_ATTR_CM_REQ];
}

static void
path_parse(const uint8_t *d, struct cm_path *p)
{
	uint32_t w = net_get_be32(d + 36);

	p->local_lid = net_get_be16(d);
	p->remote_lid = net_get_be16(d + 2);
	memcpy(p->local_gid, d + 4, 16);
	memcpy(p->remote_gid, d + 20, 16);
	p->flow_label = w >> 12;
	p->packet_rate = w & 0x3f;
	p->traffic_class = d[40];
	p->hop_limit = d[41];
	p->sl = d[42] >> 4;
	p->subnet_local = (d[42] >> 3) & 1;
	p->local_ack_timeout = d[43] >> 3;
}

static void
path_build(uint8_t *d, const struct cm_path *p)
{
	net_put_be16(d, p->local_lid);
	net_put_be16(d + 2, p->remote_lid);
	memcpy(d + 4, p->local_gid, 16);
	memcpy(d + 20, p->remote_gid, 16);
	net_put_be32(d + 36, (p->flow_label & 0xfffff) << 12 | (p->packet_rate & 0x3f));
	d[40] = p->traffic_class;
	d[41] = p->hop_limit;
	d[42] = (uint8_t)((p->sl & 0xf) << 4 | (p->subnet_local & 1) << 3);
	d[43] = (uint8_t)((p->local_ack_timeout & 0x1f) << 3);
}

static void
req_parse(const uint8_t *d, struct cm_req *r)
{
	r->local_comm_id = net_get_be32(d);
	r->service_id = net_get_be64(d + 8);
	r->local_ca_guid = net_get_be64(d + 16);
	r->local_qkey = net_get_be32(d + 28);
	r->local_qpn = net_get_be24(d + 32);
	r->responder_resources = d[35];
	r->local_eecn = net_get_be24(d + 36);
	r->initiator_depth = d[39];
	r->remote_eecn = net_get_be24(d + 40);
	r->remote_cm_response_timeout = d[43] >> 3;
	r->transport = (d[43] >> 1) & 3;
	r->flow_control = d[43] & 1;
	r->starting_psn = net_get_be24(d + 44);
	r->local_cm_response_timeout = d[47] >> 3;
	r->retry_count = d[47] & 7;
	r->pkey = net_get_be16(d + 48);
	r->path_mtu = d[50] >> 4;
	r->rdc_exists = (d[50] >> 3) & 1;
	r->rnr_retry_count = d[50] & 7;
	r->max_cm_retries = d[51] >> 4;
	r->srq = (d[51] >> 3) & 1;
	r->ext_transport = d[51] & 7;
	path_parse(d + 52, &r->primary);
	path_parse(d + 96, &r->alternate);
	memcpy(r->private_data, d + 140, CM_REQ_PD);
}

static void
req_build(uint8_t *d, const struct cm_req *r)
{
	net_put_be32(d, r->local_comm_id);
	net_put_be64(d + 8, r->service_id);
	net_put_be64(d + 16, r->local_ca_guid);
	net_put_be32(d + 28, r->local_qkey);
	net_put_be24(d + 32, r->local_qpn & 0xffffff);
	d[35] = r->responder_resources;
	net_put_be24(d + 36, r->local_eecn & 0xffffff);
	d[39] = r->initiator_depth;
	net_put_be24(d + 40, r->remote_eecn & 0xffffff);
	d[43] = (uint8_t)((r->remote_cm_response_timeout & 0x1f) << 3 | (r->transport & 3) << 1 |
			  (r->flow_control & 1));
	net_put_be24(d + 44, r->starting_psn & 0xffffff);
	d[47] = (uint8_t)((r->local_cm_response_timeout & 0x1f) << 3 | (r->retry_count & 7));
	net_put_be16(d + 48, r->pkey);
	d[50] = (uint8_t)((r->path_mtu & 0xf) << 4 | (r->rdc_exists & 1) << 3 |
			  (r->rnr_retry_count & 7));
	d[51] =
	    (uint8_t)((r->max_cm_retries & 0xf) << 4 | (r->srq & 1) << 3 | (r->ext_transport & 7));
	path_build(d + 52, &r->primary);
	path_build(d + 96, &r->alternate);
	memcpy(d + 140, r->private_data, CM_REQ_PD);
}

static int
rep_parse(const uint8_t *d, struct cm_rep *r)
{
	r->local_comm_id = net_get_be32(d);
	r->remote_comm_id = net_get_be32(d + 4);
	r->local_qkey = net_get_be32(d + 8);
	r->local_qpn = net_get_be24(d + 12);
	r->local_eecn = net_get_be24(d + 16);
	r->starting_psn = net_get_be24(d + 20);
	r->responder_resources = d[24];
	r->initiator_depth = d[25];
	r->target_ack_delay = d[26] >> 3;
	r->failover_accepted = (d[26] >> 1) & 3;
	r->flow_control = d[26] & 1;
	r->rnr_retry_count = d[27] >> 5;
	r->srq = (d[27] >> 4) & 1;
	r->local_ca_guid = net_get_be64(d + 28);
	memcpy(r->private_data, d + 36, CM_REP_PD);
	return 0;
}

static void
rep_build(uint8_t *d, const struct cm_rep *r)
{
	net_put_be32(d, r->local_comm_id);
	net_put_be32(d + 4, r->remote_comm_id);
	net_put_be32(d + 8, r->local_qkey);
	net_put_be24(d + 12, r->local_qpn & 0xffffff);
	net_put_be24(d + 16, r->local_eecn & 0xffffff);
	net_put_be24(d + 20, r->starting_psn & 0xffffff);
	d[24] = r->responder_resources;
	d[25] = r->initiator_depth;
	d[26] = (uint8_t)((r->target_ack_delay & 0x1f) << 3 | (r->failover_accepted & 3) << 1 |
			  (r->flow_control & 1));
	d[27] = (uint8_t)((r->rnr_retry_count & 7) << 5 | (r->srq & 1) << 4);
	net_put_be64(d + 28, r->local_ca_guid);
	memcpy(d + 36, r->private_data, CM_REP_PD);
}

int
cm_msg_parse(const uint8_t *p, size_t len, struct cm_msg *m)
{
	const uint8_t *d = p + MAD_HDR_SIZE;
	int rc = mad_hdr_parse(p, len, &m->hdr);

	if (rc < 0)
		return rc;
	if (m->hdr.mgmt_class != MAD_CLASS_CM)
		return -CM_MSG_E_CLASS;
	if (m->hdr.class_version != MAD_CLASS_CM_VERSION)
		return -CM_MSG_E_CLASS_VERSION;
	if (m->hdr.method != MAD_METHOD_SEND)
		return -CM_MSG_E_METHOD;
	switch (m->hdr.attr_id) {
	case MAD_ATTR_CM_REQ:
		req_parse(d, &m->u.req);
		break;
	case MAD_ATTR_CM_MRA:
		m->u.mra.local_comm_id = net_get_be32(d);
		m->u.mra.remote_comm_id = net_get_be32(d + 4);
		m->u.mra.msg_mraed = d[8] >> 6;
		m->u.mra.service_timeout = d[9] >> 3;
		memcpy(m->u.mra.private_data, d + 10, CM_MRA_PD);
		if (m->u.mra.msg_mraed > CM_MSG_REF_OTHER)
			return -CM_MSG_E_FIELD;
		break;
	case MAD_ATTR_CM_REJ:
		m->u.rej.local_comm_id = net_get_be32(d);
		m->u.rej.remote_comm_id = net_get_be32(d + 4);
		m->u.rej.msg_rejected = d[8] >> 6;
		m->u.rej.ari_length = d[9] >> 1;
		m->u.rej.reason = net_get_be16(d + 10);
		memcpy(m->u.rej.ari, d + 12, CM_REJ_ARI);
		memcpy(m->u.rej.private_data, d + 84, CM_REJ_PD);
		if (m->u.rej.ari_length > CM_REJ_ARI || m->u.rej.msg_rejected > CM_MSG_REF_OTHER)
			return -CM_MSG_E_FIELD;
		break;
	case MAD_ATTR_CM_REP:
		rep_parse(d, &m->u.rep);
		break;
	case MAD_ATTR_CM_RTU:
		m->u.rtu.local_comm_id = net_get_be32(d);
		m->u.rtu.remote_comm_id = net_get_be32(d + 4);
		memcpy(m->u.rtu.private_data, d + 8, CM_RTU_PD);
		break;
	case MAD_ATTR_CM_DREQ:
		m->u.dreq.local_comm_id = net_get_be32(d);
		m->u.dreq.remote_comm_id = net_get_be32(d + 4);
		m->u.dreq.remote_qpn = net_get_be24(d + 8);
		memcpy(m->u.dreq.private_data, d + 12, CM_DREQ_PD);
		break;
	case MAD_ATTR_CM_DREP:
		m->u.drep.local_comm_id = net_get_be32(d);
		m->u.drep.remote_comm_id = net_get_be32(d + 4);
		memcpy(m->u.drep.private_data, d + 8, CM_DREP_PD);
		break;
	case MAD_ATTR_CM_SIDR_REQ:
		m->u.sidr_req.request_id = net_get_be32(d);
		m->u.sidr_req.pkey = net_get_be16(d + 4);
		m->u.sidr_req.service_id = net_get_be64(d + 8);
		memcpy(m->u.sidr_req.private_data, d + 16, CM_SIDR_REQ_PD);
		break;
	case MAD_ATTR_CM_SIDR_REP:
		m->u.sidr_rep.request_id = net_get_be32(d);
		m->u.sidr_rep.status = d[4];
		m->u.sidr_rep.info_length = d[5];
		m->u.sidr_rep.qpn = net_get_be24(d + 8);
		m->u.sidr_rep.service_id = net_get_be64(d + 12);
		m->u.sidr_rep.qkey = net_get_be32(d + 20);
		memcpy(m->u.sidr_rep.info, d + 24, CM_SIDR_REP_INFO);
		memcpy(m->u.sidr_rep.private_data, d + 96, CM_SIDR_REP_PD);
		if (m->u.sidr_rep.info_length > CM_SIDR_REP_INFO)
			return -CM_MSG_E_FIELD;
		break;
	case MAD_ATTR_CM_LAP:
		m->u.lap.local_comm_id = net_get_be32(d);
		m->u.lap.remote_comm_id = net_get_be32(d + 4);
		break;
	case MAD_ATTR_CM_APR:
		m->u.apr.local_comm_id = net_get_be32(d);
		m->u.apr.remote_comm_id = net_get_be32(d + 4);
		m->u.apr.info_length = d[8];
		m->u.apr.status = d[9];
		if (m->u.apr.info_length > CM_APR_INFO)
			return -CM_MSG_E_FIELD;
		break;
	default:
		return -CM_MSG_E_ATTR;
	}
	return 0;
}

int
cm_msg_build(uint8_t mad[MAD_SIZE], const struct cm_msg *m)
{
	uint8_t *d = mad + MAD_HDR_SIZE;
	struct mad_hdr h = {.base_version = MAD_BASE_VERSION,
			    .mgmt_class = MAD_CLASS_CM,
			    .class_version = MAD_CLASS_CM_VERSION,
			    .method = MAD_METHOD_SEND,
			    .tid = m->hdr.tid,
			    .attr_id = m->hdr.attr_id};

	if (m->hdr.attr_id < MAD_ATTR_CM_REQ || m->hdr.attr_id > MAD_ATTR_CM_APR)
		return -CM_MSG_E_ATTR;
	memset(mad, 0, MAD_SIZE);
	mad_hdr_build(mad, &h);
	switch (m->hdr.attr_id) {
	case MAD_ATTR_CM_REQ:
		req_build(d, &m->u.req);
		break;
	case MAD_ATTR_CM_MRA:
		net_put_be32(d, m->u.mra.local_comm_id);
		net_put_be32(d + 4, m->u.mra.remote_comm_id);
		d[8] = (uint8_t)((m->u.mra.msg_mraed & 3) << 6);
		d[9] = (uint8_t)((m->u.mra.service_timeout & 0x1f) << 3);
		memcpy(d + 10, m->u.mra.private_data, CM_MRA_PD);
		break;
	case MAD_ATTR_CM_REJ: {
		uint8_t al = m->u.rej.ari_length > CM_REJ_ARI ? CM_REJ_ARI : m->u.rej.ari_length;

		net_put_be32(d, m->u.rej.local_comm_id);
		net_put_be32(d + 4, m->u.rej.remote_comm_id);
		d[8] = (uint8_t)((m->u.rej.msg_rejected & 3) << 6);
		d[9] = (uint8_t)(al << 1);
		net_put_be16(d + 10, m->u.rej.reason);
		memcpy(d + 12, m->u.rej.ari, CM_REJ_ARI);
		memcpy(d + 84, m->u.rej.private_data, CM_REJ_PD);
		break;
	}
	case MAD_ATTR_CM_REP:
		rep_build(d, &m->u.rep);
		break;
	case MAD_ATTR_CM_RTU:
		net_put_be32(d, m->u.rtu.local_comm_id);
		net_put_be32(d + 4, m->u.rtu.remote_comm_id);
		memcpy(d + 8, m->u.rtu.private_data, CM_RTU_PD);
		break;
	case MAD_ATTR_CM_DREQ:
		net_put_be32(d, m->u.dreq.local_comm_id);
		net_put_be32(d + 4, m->u.dreq.remote_comm_id);
		net_put_be24(d + 8, m->u.dreq.remote_qpn & 0xffffff);
		memcpy(d + 12, m->u.dreq.private_data, CM_DREQ_PD);
		break;
	case MAD_ATTR_CM_DREP:
		net_put_be32(d, m->u.drep.local_comm_id);
		net_put_be32(d + 4, m->u.drep.remote_comm_id);
		memcpy(d + 8, m->u.drep.private_data, CM_DREP_PD);
		break;
	case MAD_ATTR_CM_SIDR_REQ:
		net_put_be32(d, m->u.sidr_req.request_id);
		net_put_be16(d + 4, m->u.sidr_req.pkey);
		net_put_be64(d + 8, m->u.sidr_req.service_id);
		memcpy(d + 16, m->u.sidr_req.private_data, CM_SIDR_REQ_PD);
		break;
	case MAD_ATTR_CM_SIDR_REP:
		net_put_be32(d, m->u.sidr_rep.request_id);
		d[4] = m->u.sidr_rep.status;
		d[5] = m->u.sidr_rep.info_length > CM_SIDR_REP_INFO ? CM_SIDR_REP_INFO
								    : m->u.sidr_rep.info_length;
		net_put_be24(d + 8, m->u.sidr_rep.qpn & 0xffffff);
		net_put_be64(d + 12, m->u.sidr_rep.service_id);
		net_put_be32(d + 20, m->u.sidr_rep.qkey);
		memcpy(d + 24, m->u.sidr_rep.info, CM_SIDR_REP_INFO);
		memcpy(d + 96, m->u.sidr_rep.private_data, CM_SIDR_REP_PD);
		break;
	case MAD_ATTR_CM_LAP:
		net_put_be32(d, m->u.lap.local_comm_id);
		net_put_be32(d + 4, m->u.lap.remote_comm_id);
		break;
	case MAD_ATTR_CM_APR:
		net_put_be32(d, m->u.apr.local_comm_id);
		net_put_be32(d + 4, m->u.apr.remote_comm_id);
		d[8] = m->u.apr.info_length > CM_APR_INFO ? CM_APR_INFO : m->u.apr.info_length;
		d[9] = m->u.apr.status;
		break;
	}
	return 0;
}
