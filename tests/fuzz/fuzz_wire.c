/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for every parser a peer can reach: RoCEv2 frames (with and
 * without ICRC verification; the rocewan extension opcodes 0xC0-0xC9 of
 * docs/wire.md included, their NTETH/SPETH round-tripped), PFC/PAUSE, ARP,
 * ICMP echo, IPv6 ND, ICMPv6 echo, and the frame classifier every receive
 * path starts with. Built with
 * clang -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh; the seed corpus
 * is the golden pcaps' frames.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net_arp.h"
#include "net_frame.h"
#include "net_nd.h"
#include "pfc.h"
#include "roce_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The classifier stays inside the frame, and agrees with the RoCE parser: a
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
	if (roce_parse(data, size, &p, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM) == 0 &&
	    (k != NET_FRAME_ROCE || !net_frame_dot1q_only(&fr) || !fr.has_bth ||
	     fr.l3_off != p.l3_off || fr.l4_off + 8u != p.bth_off || fr.bth_dqpn != p.h.bth.dqpn))
		abort();
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
		    ((ext & ROCE_EXT_NTETH) && (r.h.nt_psn != p.h.nt_psn || r.h.nt_run != p.h.nt_run)) ||
		    ((ext & ROCE_EXT_SPETH) && (r.h.speth.wqe_seq != p.h.speth.wqe_seq ||
						r.h.speth.offset != p.h.speth.offset)) ||
		    memcmp(out + r.payload_off, data + p.payload_off, p.payload_len) != 0)
			abort();
		free(out);
	}
	roce_parse(data, size, &p, ROCE_PARSE_NO_ICRC | ROCE_PARSE_ANY_PORT | ROCE_PARSE_NO_IP_CSUM);
	fuzz_classify(data, size);
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
