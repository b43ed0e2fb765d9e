/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for every parser a peer can reach: RoCEv2 frames (with and
 * without ICRC verification; the rocewan extension opcodes 0xC0-0xC9 of
 * docs/wire.md included, their NTETH/SPETH round-tripped), PFC/PAUSE, ARP,
 * ICMP echo, IPv6 ND, ICMPv6 echo, the frame classifier every receive path
 * starts with, and lib/fec's decoder (a hostile repair or negotiation frame
 * into a block with a hole), QP1's MADs (lib/cm: the common header, every CM message
 * round-tripped, a CM state machine fed the input as a MAD sequence) and the lossy-emu's
 * MAD classifier. Built with
 * clang -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh; the seed corpus
 * is the golden pcaps' frames.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"
#include "cm_msg.h"
#include "emu_rules.h"
#include "fec.h"
#include "mad.h"
#include "mad_kind.h"
#include "net_arp.h"
#include "net_frame.h"
#include "net_nd.h"
#include "pfc.h"
#include "roce_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The classifier stays inside the frame (pfc_classify's priority, built on it,
 * too), and agrees with the RoCE parser: a
 * frame roce_parse() accepts (untagged or one 802.1Q tag) is RoCE to the
 * classifier, with the same offsets and destination QP.
 */
static void
fuzz_classify(const uint8_t *data, size_t size)
{
	struct net_frame fr;
	struct roce_pkt p;
	enum net_frame_kind k = net_frame_classify(data, size, &fr);

	if (k != fr.kind || fr.l3_off > size || fr.ntags > NET_FRAME_MAX_TAGS ||
	    (fr.ip && fr.l3_off + (fr.ethertype == NET_ETHERTYPE_IPV4 ? 20u : 40u) > size) ||
	    (fr.l4_off && fr.l4_off > size) || (fr.udp && fr.l4_off + 8u > size) ||
	    (fr.has_bth && fr.l4_off + 20u > size) || (k == NET_FRAME_ROCE && !fr.udp) ||
	    (k >= NET_FRAME_IP && fr.ethertype != NET_ETHERTYPE_IPV4 &&
	     fr.ethertype != NET_ETHERTYPE_IPV6))
		abort();
	if ((fr.has_tclass && fr.l3_off + 2u > size) ||
	    (fr.ip && fr.ip_version_ok && !fr.has_tclass))
		abort();
	/* the PFC priority of either trust, from the same walk */
	for (int t = PFC_TRUST_PCP; t <= PFC_TRUST_DSCP; t++) {
		struct pfc_classifier c;

		pfc_classifier_init(&c, (enum pfc_trust)t);
		if (pfc_classify(&c, data, size) > 7)
			abort();
	}
	if (roce_parse(data, size, &p, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM) == 0 &&
	    (k != NET_FRAME_ROCE || !net_frame_dot1q_only(&fr) || !fr.has_bth ||
	     fr.l3_off != p.l3_off || fr.l4_off + 8u != p.bth_off || fr.bth_dqpn != p.h.bth.dqpn))
		abort();
	/*
	 * QP1's MADs (lib/cm): the common header of whatever a UD SEND carries, and the
	 * lossy-emu's drop-mad classifier, which finds the MAD from the classifier's offsets
	 * only, agrees with the RoCE parser on the frames it takes whole
	 */
	if (roce_parse(data, size, &p, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM) == 0 &&
	    p.h.bth.dqpn == MAD_GSI_QPN) {
		struct mad_hdr mh;
		int mk = emu_rules_mad_kind(data, size, &fr);

		if (mad_hdr_parse(data + p.payload_off, p.payload_len, &mh) == 0 &&
		    p.payload_len < MAD_SIZE)
			abort();
		if (p.h.bth.opcode == 0x64 && p.payload_len >= 18 &&
		    mk != (int)mad_kind_of_bytes(data + p.payload_off, p.payload_len))
			abort();
		if (p.h.bth.opcode != 0x64 && mk != -1)
			abort();
	}
	/*
	 * the cut-frame test (lossy-emu drop_cut, pfc-relay rx_cut) stays inside the frame,
	 * never judges a frame below its limit, and never one the RoCE parser takes whole
	 */
	if (net_frame_rx_cut(data, size, &fr, size + 1) || net_frame_rx_cut(data, size, &fr, 0))
		abort();
	if (net_frame_rx_cut(data, size, &fr, size ? size : 1) &&
	    roce_parse(data, size, &p, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM) == 0)
		abort();
}

/* lib/fec: a block of xor:4,1 with frame 2 lost; the input arrives before the true repair. */
static uint8_t fz_frames[8][600];
static size_t fz_len[8];
static int fz_n;

static void
fz_keep(void *arg, const uint8_t *b, size_t n)
{
	(void)arg;
	if (fz_n < 8 && n <= sizeof(fz_frames[0])) {
		memcpy(fz_frames[fz_n], b, n);
		fz_len[fz_n++] = n;
	}
}

static uint8_t fz_post_b[600];
static size_t fz_post_n;

static void
fz_post(void *arg, const uint8_t *b, size_t n)
{
	(void)arg;
	if (n <= sizeof(fz_post_b)) {
		memcpy(fz_post_b, b, n);
		fz_post_n = n;
	}
}

static void
fz_rebuilt(void *arg, const uint8_t *b, size_t n)
{
	struct roce_pkt p;

	(void)arg;
	/* whatever a hostile repair does, a rebuilt frame is a valid RoCEv2 frame */
	if (roce_parse(b, n, &p, 0) != 0)
		abort();
}

static void
fuzz_fec(const uint8_t *data, size_t size)
{
	struct fec_params xp = {FEC_MODE_XOR, 4, 1, 1};
	struct fec_pkt pk;
	struct roce_pkt rp;
	struct fec_dec *d;

	if (!fz_n) {
		struct fec_enc *e = fec_enc_create(&xp);

		for (uint32_t i = 0; i < 4; i++) {
			struct roce_pkt p = {0};
			uint8_t b[600], pl[300];
			int n;

			p.l3.version = 4;
			p.l3.ttl = 64;
			net_ip4_to_mapped(0x0a000001, p.l3.src);
			net_ip4_to_mapped(0x0a000002, p.l3.dst);
			p.udp.sport = 0xc000;
			p.h.bth.opcode = 0x04; /* RC SEND ONLY */
			p.h.bth.dqpn = 0x11;
			p.h.bth.psn = 100 + i;
			memset(pl, (int)i + 1, sizeof(pl));
			n = roce_build(b, sizeof(b), &p, pl, 100 + 50 * i, 0);
			fz_post_n = 0;
			/* wire order: the COMMIT (before frame 0), the frame, the repair (after 3)
			 */
			fec_enc_frame(e, b, (size_t)n, fz_keep, fz_post, NULL);
			fz_keep(NULL, b, (size_t)n);
			if (fz_post_n)
				fz_keep(NULL, fz_post_b, fz_post_n);
		}
		fec_enc_free(e);
	}
	if (fec_parse(data, size, &pk, false) == 0 &&
	    ((size_t)pk.payload_off + pk.payload_len > size || pk.frame_len > size))
		abort();
	d = fec_dec_create(2);
	if (!d)
		return;
	for (int i = 0; i < fz_n; i++) {
		if (i == 3) /* data frame PSN 102 (after the COMMIT) is lost */
			continue;
		if (i == fz_n - 1)
			fec_dec_frame(d, data, size, fz_rebuilt, NULL, NULL);
		fec_dec_frame(d, fz_frames[i], fz_len[i], fz_rebuilt, NULL, NULL);
	}
	fec_dec_flush(d, NULL, NULL);
	/* an input that is no RoCE frame at all leaves the block alone: the true repair rebuilds */
	if (fz_n != 6 ||
	    (fec_parse(data, size, &pk, false) == -FEC_E_NOT_FEC &&
	     roce_parse(data, size, &rp,
			ROCE_PARSE_NO_ICRC | ROCE_PARSE_ANY_PORT | ROCE_PARSE_NO_IP_CSUM) < 0 &&
	     fec_dec_stat(d, FEC_DS_REBUILT) != 1))
		abort();
	fec_dec_free(d);
}

/* lib/cm: a CM MAD that parses rebuilds into one that parses to the same message */
static uint64_t fz_cm_now;

static int
fz_cm_send(void *ctx, const struct cm_dest *dst, const uint8_t mad[MAD_SIZE])
{
	struct cm_msg m;

	(void)ctx;
	(void)dst;
	/* everything the CM sends is a well-formed CM MAD */
	if (cm_msg_parse(mad, MAD_SIZE, &m) != 0)
		abort();
	return 0;
}

static void
fz_cm_event(void *ctx, struct cm_id *id, const struct cm_event *ev)
{
	struct cm *cm = ctx;
	struct cm_rep rep = {.local_qpn = 0x12, .starting_psn = 1};

	/* accept every REQ, RTU every REP, answer every SIDR_REQ */
	if (ev->type == CM_EV_REQ_RCVD)
		cm_accept(cm, id, &rep);
	else if (ev->type == CM_EV_REP_RCVD)
		cm_rtu(cm, id, NULL, 0);
	else if (ev->type == CM_EV_SIDR_REQ_RCVD)
		cm_sidr_rep(cm, id, &(struct cm_sidr_rep){.qpn = 0x13});
}

static uint64_t
fz_cm_clock(void *ctx)
{
	(void)ctx;
	return fz_cm_now;
}

static void
fuzz_cm(const uint8_t *data, size_t size)
{
	static const struct cm_ops ops = {
	    .send_mad = fz_cm_send, .event = fz_cm_event, .now = fz_cm_clock};
	static struct cm cm;
	static struct cm_msg m, r;
	struct cm_config cfg = {.local_ca_guid = 1, .seed = 7, .max_ids = 8};
	struct cm_dest src = {.qpn = MAD_GSI_QPN, .qkey = MAD_GSI_QKEY, .pkey = MAD_DEFAULT_PKEY};
	struct mad_hdr h;
	uint8_t out[MAD_SIZE];
	uint64_t used;

	mad_hdr_parse(data, size, &h);
	memset(&m, 0, sizeof(m));
	if (cm_msg_parse(data, size, &m) == 0) {
		memset(&r, 0, sizeof(r));
		if (cm_msg_build(out, &m) != 0 || cm_msg_parse(out, sizeof(out), &r) != 0 ||
		    memcmp(&m.u, &r.u, sizeof(m.u)) != 0 || r.hdr.tid != m.hdr.tid)
			abort();
	}
	/* the state machine: the input as a sequence of MADs, the clock moving between */
	cm_init(&cm, &cfg, &ops, &cm);
	cm_listen(&cm, 0, 0, NULL);
	fz_cm_now = 1;
	for (size_t off = 0; off < size; off += MAD_SIZE) {
		size_t n = size - off < MAD_SIZE ? size - off : MAD_SIZE;

		cm_rx(&cm, &src, data + off, n);
		fz_cm_now += (uint64_t)data[off] << 12;
		cm_tick(&cm);
	}
	used = cm.cnt.ids_alloc - cm.cnt.ids_free;
	if (used != cm_ids_in_use(&cm) || used > cfg.max_ids)
		abort();
}

/*
 * The receive path's parse of a classified frame (roce_parse_frame) agrees with
 * the full parse: the same return value, and the same fields when it parses.
 */
static void
fuzz_parse_frame(const uint8_t *data, size_t size)
{
	static const unsigned int flags[] = {0, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM,
					     ROCE_PARSE_ANY_PORT};
	struct net_frame fr;

	net_frame_classify(data, size, &fr);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct roce_pkt a, b;
		int ra, rb;

		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ra = roce_parse(data, size, &a, flags[i]);
		rb = roce_parse_frame(data, size, &fr, &b, flags[i]);
		if (ra != rb || (ra == 0 && memcmp(&a, &b, sizeof(a)) != 0))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt p;
	struct pfc_frame f;
	struct net_arp a;
	struct net_nd nd;
	uint8_t *copy;
	static const uint8_t ip6[16] = {0xfe, 0x80, [15] = 1};

	if (roce_parse(data, size, &p, 0) == 0) {
		/*
		 * A frame that parses must rebuild into a frame that parses to the same
		 * fields and payload (reserved bits are sent as zero, so bytes may differ).
		 */
		uint8_t *out = malloc(p.frame_len + 64);
		struct roce_pkt q = p, r;
		uint16_t ext = roce_opcode_info(p.h.bth.opcode)->ext;
		int n = roce_build(out, p.frame_len + 64, &q, data + p.payload_off, p.payload_len,
				   ROCE_BUILD_KEEP_PAD);
		if (n < (int)p.frame_len || roce_parse(out, (size_t)n, &r, 0) != 0 ||
		    r.h.bth.opcode != p.h.bth.opcode || r.h.bth.psn != p.h.bth.psn ||
		    r.h.bth.dqpn != p.h.bth.dqpn || r.h.bth.pad != p.h.bth.pad ||
		    r.payload_len != p.payload_len ||
		    ((ext & ROCE_EXT_NTETH) &&
		     (r.h.nt_psn != p.h.nt_psn || r.h.nt_run != p.h.nt_run)) ||
		    ((ext & ROCE_EXT_SPETH) && (r.h.speth.wqe_seq != p.h.speth.wqe_seq ||
						r.h.speth.offset != p.h.speth.offset)) ||
		    memcmp(out + r.payload_off, data + p.payload_off, p.payload_len) != 0)
			abort();
		free(out);
	}
	if (roce_parse(data, size, &p,
		       ROCE_PARSE_NO_ICRC | ROCE_PARSE_ANY_PORT | ROCE_PARSE_NO_IP_CSUM) == 0 &&
	    p.payload_len >= MAD_SIZE && (size_t)p.payload_off + p.payload_len <= size)
		fuzz_cm(data + p.payload_off, p.payload_len); /* a MAD in a UD SEND to QP1 */
	fuzz_classify(data, size);
	fuzz_parse_frame(data, size);
	fuzz_fec(data, size);
	fuzz_cm(data, size);
	pfc_parse(data, size, &f);
	net_arp_parse(data, size, &a);
	copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	net_icmp_echo_reply(copy, size, 0x0a000001, (const uint8_t *)"\x02\0\0\0\0\x01");
	net_nd_parse(data, size, &nd);
	memcpy(copy, data, size);
	net_icmp6_echo_reply(copy, size, ip6, (const uint8_t *)"\x02\0\0\0\0\x01");
	free(copy);
	return 0;
}
