/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_keymsg.c
 * perftest 6.06's key message when it exchanges over rdma_cm (-R): one QP's
 * destination as 56 binary bytes, every field big-endian, sent as one RDMA SEND on
 * the channel QP (docs/rdma-cm.md "The key message"). Written from the rxe <-> rxe
 * captures; no perftest code is used.
 *
 *   0 lid (4)  4 out_reads (4)  8 qpn (4)  12 psn (4)  16 rkey (4)  20 padding (4,
 *   uninitialised: ignored)  24 vaddr (8)  32 gid (16)  48 srqn (4)  52 gid_index (4)
 */
#include "perftest_xchg.h"

#include <stdio.h>
#include <string.h>

#include "net_bytes.h"

int
perftest_format_dest_bin(const struct perftest_dest *d, uint32_t gid_index,
			 uint8_t out[PERFTEST_KEY_MSG_BIN_LEN], char *err, size_t errlen)
{
	if (d->qpn > 0xffffff || d->psn > 0xffffff) {
		snprintf(err, errlen,
			 "QP details out of range for perftest's key message (QPN 0x%x, PSN 0x%x: "
			 "24 bits)",
			 d->qpn, d->psn);
		return OOB_ERR_ARG;
	}
	memset(out, 0, PERFTEST_KEY_MSG_BIN_LEN);
	net_put_be32(out + 0, d->lid);
	net_put_be32(out + 4, d->out_reads);
	net_put_be32(out + 8, d->qpn);
	net_put_be32(out + 12, d->psn);
	net_put_be32(out + 16, d->rkey);
	net_put_be64(out + 24, d->vaddr);
	memcpy(out + 32, d->gid, 16);
	net_put_be32(out + 48, d->srqn);
	net_put_be32(out + 52, gid_index);
	return PERFTEST_KEY_MSG_BIN_LEN;
}

int
perftest_parse_dest_bin(const uint8_t *msg, size_t len, struct perftest_dest *d,
			uint32_t *gid_index, char *err, size_t errlen)
{
	struct perftest_dest t;

	if (len != PERFTEST_KEY_MSG_BIN_LEN) {
		snprintf(err, errlen,
			 "malformed perftest key message: %zu bytes, expected %u (rdma_cm's binary "
			 "struct pingpong_dest)",
			 len, PERFTEST_KEY_MSG_BIN_LEN);
		return OOB_ERR_PROTO;
	}
	memset(&t, 0, sizeof(t));
	t.lid = net_get_be32(msg + 0);
	t.out_reads = net_get_be32(msg + 4);
	t.qpn = net_get_be32(msg + 8);
	t.psn = net_get_be32(msg + 12);
	t.rkey = net_get_be32(msg + 16);
	t.vaddr = net_get_be64(msg + 24);
	memcpy(t.gid, msg + 32, 16);
	t.srqn = net_get_be32(msg + 48);
	if (t.lid > 0xffff || t.qpn > 0xffffff || t.psn > 0xffffff) {
		snprintf(err, errlen,
			 "malformed perftest key message: LID 0x%x (16 bits), QPN 0x%x, PSN 0x%x "
			 "(24 bits) out of range",
			 t.lid, t.qpn, t.psn);
		return OOB_ERR_PROTO;
	}
	if (gid_index)
		*gid_index = net_get_be32(msg + 52);
	*d = t;
	return OOB_OK;
}
