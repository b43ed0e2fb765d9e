/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for every parser a peer can reach: RoCEv2 frames (with and
 * without ICRC verification), PFC/PAUSE, ARP, ICMP echo, IPv6 ND, ICMPv6 echo. Built with
 * clang -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh; the seed corpus
 * is the golden pcaps' frames.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net_arp.h"
#include "net_nd.h"
#include "pfc.h"
#include "roce_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
		int n = roce_build(out, p.frame_len + 64, &q, data + p.payload_off, p.payload_len,
				   ROCE_BUILD_KEEP_PAD);
		if (n < (int)p.frame_len || roce_parse(out, (size_t)n, &r, 0) != 0 ||
		    r.h.bth.opcode != p.h.bth.opcode || r.h.bth.psn != p.h.bth.psn ||
		    r.h.bth.dqpn != p.h.bth.dqpn || r.h.bth.pad != p.h.bth.pad ||
		    r.payload_len != p.payload_len ||
		    memcmp(out + r.payload_off, data + p.payload_off, p.payload_len) != 0)
			abort();
		free(out);
	}
	roce_parse(data, size, &p, ROCE_PARSE_NO_ICRC | ROCE_PARSE_ANY_PORT | ROCE_PARSE_NO_IP_CSUM);
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
