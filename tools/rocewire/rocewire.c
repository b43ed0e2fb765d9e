/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocewire: the wire library (lib/roce) from the command line.
 *   rocewire gen --seed N --count N OUT.pcap   random valid RoCEv2 frames
 *   rocewire golden OUT.pcap                    one frame per opcode, IPv4 and IPv6
 *   rocewire parse IN.pcap                      one JSON object per frame on stdout
 *   rocewire selfcheck                          build -> parse -> compare every opcode
 *   rocewire spec 'SPEC'                        lossy-emu's netem SPEC parser (lib/emu):
 *                                               the effective SPEC and loss model as JSON
 * Used by the Scapy/tshark cross-validation tests, by `make demo` and by the
 * testbed's loss models (python/rocewan/testbed/model.py), so the C parser is
 * the one authority on the netem grammar.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_spec.h"
#include "net_bytes.h"
#include "roce_icrc.h"
#include "roce_pkt.h"
#include "roce_psn.h"
#include "rw_pcap.h"

#define MAX_FRAME 9216

static uint64_t rng;

static uint64_t
rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
usage(FILE *f)
{
	fputs("usage: rocewire gen [--seed N] [--count N] OUT.pcap\n"
	      "       rocewire golden OUT.pcap\n"
	      "       rocewire parse IN.pcap\n"
	      "       rocewire selfcheck\n"
	      "       rocewire spec 'SPEC'\n"
	      "Builds and parses RoCEv2 frames with lib/roce (see docs/wire.md).\n"
	      "spec: parses one lossy-emu SPEC (netem grammar, docs/lossy-emu.md) with\n"
	      "lib/emu and prints {\"spec\": the effective SPEC, \"loss\": the loss model's\n"
	      "parameters as probabilities}; exit 2 and one error line on a bad SPEC.\n",
	      f);
}

/* Fill every header field from the generator; payload sizes 0..4096 where allowed. */
static uint32_t
random_pkt(struct roce_pkt *p, uint8_t op, int ver)
{
	memset(p, 0, sizeof(*p));
	for (int i = 0; i < 6; i++)
		p->l2.src[i] = (uint8_t)rnd(), p->l2.dst[i] = (uint8_t)rnd();
	p->l2.src[0] &= 0xfe, p->l2.dst[0] &= 0xfe;
	p->l2.has_vlan = (rnd() % 4) == 0;
	p->l2.vlan_tci = (uint16_t)rnd();
	p->l3.version = (uint8_t)ver;
	p->l3.tos = (uint8_t)rnd();
	p->l3.ttl = (uint8_t)(1 + rnd() % 255);
	p->l3.ip_id = (uint16_t)rnd();
	if (ver == 4) {
		net_ip4_to_mapped(0x0a000000u | ((uint32_t)rnd() & 0xffffff), p->l3.src);
		net_ip4_to_mapped(0x0a000000u | ((uint32_t)rnd() & 0xffffff), p->l3.dst);
	} else {
		for (int i = 0; i < 16; i++)
			p->l3.src[i] = (uint8_t)rnd(), p->l3.dst[i] = (uint8_t)rnd();
		p->l3.src[0] = 0xfd, p->l3.dst[0] = 0xfd;
		p->l3.flow_label = (uint32_t)rnd() & 0xfffff;
	}
	p->udp.sport = roce_udp_sport((uint32_t)rnd() & 0xffffff, (uint32_t)rnd() & 0xffffff);
	p->h.bth.opcode = op;
	p->h.bth.se = rnd() & 1;
	p->h.bth.mig = rnd() & 1;
	p->h.bth.pkey = (uint16_t)rnd();
	p->h.bth.fecn = rnd() & 1;
	p->h.bth.becn = rnd() & 1;
	p->h.bth.dqpn = (uint32_t)rnd() & 0xffffff;
	p->h.bth.ackreq = rnd() & 1;
	p->h.bth.psn = (uint32_t)rnd() & ROCE_PSN_MASK;
	p->h.reth = (struct roce_reth){rnd(), (uint32_t)rnd(), (uint32_t)rnd()};
	p->h.aeth = (struct roce_aeth){(uint8_t)rnd(), (uint32_t)rnd() & 0xffffff};
	p->h.deth = (struct roce_deth){(uint32_t)rnd(), (uint32_t)rnd() & 0xffffff};
	p->h.imm = (uint32_t)rnd();
	p->h.ieth_rkey = (uint32_t)rnd();
	p->h.atomic = (struct roce_atomiceth){rnd(), (uint32_t)rnd(), rnd(), rnd()};
	p->h.atomic_orig = rnd();
	p->h.speth = (struct roce_speth){(uint32_t)rnd(), (uint32_t)rnd()};
	p->h.nt_psn = (uint32_t)rnd() & ROCE_PSN_MASK;
	p->h.nt_run = (uint8_t)rnd();
	if (!(roce_opcode_info(op)->flags & ROCE_OPF_PAYLOAD))
		return 0;
	switch (rnd() % 4) {
	case 0:
		return (uint32_t)(rnd() % 8);
	case 1:
		return 4096;
	default:
		return (uint32_t)(rnd() % 4097);
	}
}

/* Opcodes gen and golden write: not the FEC ones, whose FRH and coded payload
 * only lib/fec builds (tests/golden/fec-xor-rs.pcap has them). */
static bool
gen_opcode(uint8_t op)
{
	return roce_opcode_valid(op) && !roce_opcode_is_fec(op);
}

static uint8_t
random_opcode(void)
{
	uint8_t op;

	do
		op = (uint8_t)rnd();
	while (!gen_opcode(op));
	return op;
}

static int
write_frame(struct rw_pcap *pc, struct roce_pkt *p, uint32_t n, uint64_t ts)
{
	static uint8_t buf[MAX_FRAME], payload[4096];
	int len;

	for (uint32_t i = 0; i < n; i++)
		payload[i] = (uint8_t)rnd();
	len = roce_build(buf, sizeof(buf), p, payload, n, 0);
	if (len < 0) {
		fprintf(stderr, "rocewire: build %s failed: %s\n",
			roce_opcode_name(p->h.bth.opcode), net_err_str(len));
		return len;
	}
	return rw_pcap_write(pc, buf, (uint32_t)len, ts);
}

static int
cmd_gen(const char *out, uint64_t seed, long count, int golden)
{
	struct rw_pcap pc;
	struct roce_pkt p;
	int rc = rw_pcap_open_write(&pc, out);

	if (rc < 0) {
		fprintf(stderr, "rocewire: cannot create %s: %s\n", out, strerror(-rc));
		return 1;
	}
	rng = seed;
	if (golden) {
		long i = 0;

		for (int ver = 4; ver <= 6; ver += 2)
			for (int op = 0; op < 256; op++) {
				if (!gen_opcode((uint8_t)op))
					continue;
				uint32_t n = random_pkt(&p, (uint8_t)op, ver);
				p.l2.has_vlan = op % 3 == 0;
				if (write_frame(&pc, &p, n, (uint64_t)i++ * 1000) < 0)
					return 1;
			}
	} else {
		for (long i = 0; i < count; i++) {
			uint8_t op = random_opcode();
			uint32_t n = random_pkt(&p, op, (rnd() & 1) ? 4 : 6);
			if (write_frame(&pc, &p, n, (uint64_t)i * 1000) < 0)
				return 1;
		}
	}
	return rw_pcap_close(&pc) < 0;
}

static void
print_ip(const uint8_t a[16], int ver)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(ver == 4 ? AF_INET : AF_INET6, ver == 4 ? a + 12 : a, s, sizeof(s));
	printf("\"%s\"", s);
}

static void
print_frame(long idx, const uint8_t *f, int len)
{
	struct roce_pkt p;
	int rc, rc_noicrc;
	const struct roce_opcode_info *o;

	memset(&p, 0, sizeof(p));
	rc_noicrc = roce_parse(f, (size_t)len, &p, ROCE_PARSE_NO_ICRC);
	rc = rc_noicrc ? rc_noicrc : roce_parse(f, (size_t)len, &p, 0);
	printf("{\"idx\": %ld, \"len\": %d, \"roce\": %s, \"err\": \"%s\"", idx, len,
	       (p.bth_off || p.udp.dport == ROCE_UDP_DPORT) ? "true" : "false", net_err_name(rc));
	if (p.l2.hlen == 0)
		goto out;
	if (p.l2.has_vlan)
		printf(", \"vlan\": {\"pcp\": %u, \"vid\": %u}", net_vlan_pcp(p.l2.vlan_tci),
		       net_vlan_vid(p.l2.vlan_tci));
	else
		printf(", \"vlan\": null");
	if (p.l3.version != 4 && p.l3.version != 6)
		goto out;
	printf(", \"ip\": {\"ver\": %u, \"src\": ", p.l3.version);
	print_ip(p.l3.src, p.l3.version);
	printf(", \"dst\": ");
	print_ip(p.l3.dst, p.l3.version);
	printf(", \"tos\": %u, \"dscp\": %u, \"ecn\": %u, \"ttl\": %u, \"flow\": %u}", p.l3.tos,
	       net_tos_dscp(p.l3.tos), net_tos_ecn(p.l3.tos), p.l3.ttl, p.l3.flow_label);
	if (p.udp.len == 0)
		goto out;
	printf(", \"udp\": {\"sport\": %u, \"dport\": %u, \"len\": %u, \"csum\": %u}", p.udp.sport,
	       p.udp.dport, p.udp.len, p.udp.csum);
	if (p.bth_off == 0)
		goto out;
	const struct roce_bth *b = &p.h.bth;
	printf(", \"bth\": {\"opcode\": %u, \"name\": \"%s\", \"se\": %u, \"m\": %u, \"pad\": %u, "
	       "\"tver\": %u, \"pkey\": %u, \"fecn\": %u, \"becn\": %u, \"dqpn\": %u, \"a\": %u, "
	       "\"psn\": %u}",
	       b->opcode, roce_opcode_name(b->opcode), b->se, b->mig, b->pad, b->tver, b->pkey,
	       b->fecn, b->becn, b->dqpn, b->ackreq, b->psn);
	if (rc_noicrc != 0 && rc_noicrc != -NET_E_BAD_PAD &&
	    rc_noicrc != -NET_E_PAYLOAD_NOT_ALLOWED)
		goto out;
	o = roce_opcode_info(b->opcode);
	if (o->ext & ROCE_EXT_RETH)
		printf(", \"reth\": {\"va\": %llu, \"rkey\": %u, \"dlen\": %u}",
		       (unsigned long long)p.h.reth.va, p.h.reth.rkey, p.h.reth.dlen);
	if (o->ext & ROCE_EXT_AETH)
		printf(", \"aeth\": {\"syndrome\": %u, \"msn\": %u}", p.h.aeth.syndrome,
		       p.h.aeth.msn);
	if (o->ext & ROCE_EXT_DETH)
		printf(", \"deth\": {\"qkey\": %u, \"sqpn\": %u}", p.h.deth.qkey, p.h.deth.sqpn);
	if (o->ext & ROCE_EXT_IMMDT)
		printf(", \"immdt\": %u", p.h.imm);
	if (o->ext & ROCE_EXT_IETH)
		printf(", \"ieth\": %u", p.h.ieth_rkey);
	if (o->ext & ROCE_EXT_ATOMICETH)
		printf(
		    ", \"atomiceth\": {\"va\": %llu, \"rkey\": %u, \"swap\": %llu, \"cmp\": %llu}",
		    (unsigned long long)p.h.atomic.va, p.h.atomic.rkey,
		    (unsigned long long)p.h.atomic.swap_add, (unsigned long long)p.h.atomic.cmp);
	if (o->ext & ROCE_EXT_ATOMICACKETH)
		printf(", \"atomicacketh\": {\"orig\": %llu}", (unsigned long long)p.h.atomic_orig);
	if (o->ext & ROCE_EXT_SPETH)
		printf(", \"speth\": {\"wqe_seq\": %u, \"offset\": %u}", p.h.speth.wqe_seq,
		       p.h.speth.offset);
	if (o->ext & ROCE_EXT_NTETH)
		printf(", \"nteth\": {\"run\": %u, \"psn\": %u}", p.h.nt_run, p.h.nt_psn);
	if (o->ext & ROCE_EXT_VTETH) {
		printf(", \"vteth\": {\"flags\": %u, \"n_crit\": %u, \"loss_bp\": %u, "
		       "\"window\": %u, \"max_burst\": %u, \"crit\": [",
		       p.h.vt.flags, p.h.vt.n_crit, p.h.vt.loss_bp, p.h.vt.window,
		       p.h.vt.max_burst);
		for (int i = 0; i < ROCE_VTETH_CRIT; i++)
			printf("%s[%u, %u]", i ? ", " : "", p.h.vt.crit[i].off, p.h.vt.crit[i].len);
		printf("]}");
	}
	if (o->ext & ROCE_EXT_VLETH) {
		printf(", \"vleth\": {\"len\": %u, \"lost_pkts\": %u, \"lost_bytes\": %u, "
		       "\"n_holes\": %u, \"flags\": %u, \"holes\": [",
		       p.h.vl.len, p.h.vl.lost_pkts, p.h.vl.lost_bytes, p.h.vl.n_holes,
		       p.h.vl.flags);
		for (int i = 0; i < ROCE_VLETH_HOLES; i++)
			printf("%s[%u, %u]", i ? ", " : "", p.h.vl.holes[i].off,
			       p.h.vl.holes[i].len);
		printf("]}");
	}
	if (rc_noicrc == 0)
		printf(", \"payload_len\": %u, \"icrc\": %u, \"icrc_ok\": %s", p.payload_len,
		       p.icrc, rc == 0 ? "true" : "false");
out:
	printf("}\n");
}

static int
cmd_parse(const char *in)
{
	static uint8_t f[256 * 1024];
	struct rw_pcap pc;
	long idx = 0;
	uint32_t n;
	int r, rc = rw_pcap_open_read(&pc, in);

	if (rc < 0) {
		fprintf(stderr, "rocewire: cannot read %s: %s\n", in,
			rc == -EPROTO		 ? "not a pcap file"
			: rc == -EPROTONOSUPPORT ? "link type is not Ethernet"
						 : strerror(-rc));
		return 1;
	}
	while ((r = rw_pcap_next(&pc, f, sizeof(f), &n, NULL, NULL)) > 0)
		print_frame(idx++, f, (int)n);
	rw_pcap_close(&pc);
	if (r < 0) {
		fprintf(stderr, "rocewire: %s: truncated or corrupt record %ld\n", in, idx);
		return 1;
	}
	return 0;
}

static int
cmd_selfcheck(void)
{
	static uint8_t buf[MAX_FRAME];
	unsigned ok = 0, bad = 0;

	rng = 1;
	for (int ver = 4; ver <= 6; ver += 2)
		for (int op = 0; op < 256; op++) {
			struct roce_pkt p, q;
			uint32_t n;
			int len;

			if (!roce_opcode_valid((uint8_t)op))
				continue;
			n = random_pkt(&p, (uint8_t)op, ver);
			len = roce_build(buf, sizeof(buf), &p, NULL, n, 0);
			if (len > 0 && roce_parse(buf, (size_t)len, &q, 0) == 0 &&
			    q.h.bth.psn == p.h.bth.psn && q.payload_len == n) {
				buf[q.bth_off + 7] ^= 1; /* dest QP: covered by the ICRC */
				if (roce_parse(buf, (size_t)len, &q, 0) == -NET_E_BAD_ICRC) {
					ok++;
					continue;
				}
			}
			bad++;
			printf("  FAIL %-36s IPv%d\n", roce_opcode_name((uint8_t)op), ver);
		}
	printf("rocewire selfcheck: %u opcode x IP-version cases built, parsed, ICRC verified and "
	       "corruption detected; %u failed\n",
	       ok, bad);
	return bad != 0;
}

/*
 * The netem SPEC through lossy-emu's own parser (lib/emu/emu_spec.c): the
 * effective SPEC (emu_spec_format) and the loss model with every netem default
 * filled in, as probabilities. One JSON object on stdout.
 */
static int
cmd_spec(const char *text)
{
	const struct emu_loss_params *lp;
	struct emu_spec s;
	char msg[256], fmt[1024];

	if (emu_spec_parse(&s, text, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "rocewire: spec: %s\n", msg);
		return 2;
	}
	if (emu_spec_format(&s, fmt, sizeof(fmt)) < 0) {
		fprintf(stderr, "rocewire: spec: the effective SPEC does not fit %zu bytes\n",
			sizeof(fmt));
		return 2;
	}
	lp = &s.impair.loss;
	printf("{\"spec\": \"%s\", \"loss\": {\"model\": \"%s\"", fmt,
	       emu_loss_kind_name(lp->kind));
	switch (lp->kind) {
	case EMU_LOSS_NONE:
		break;
	case EMU_LOSS_RANDOM:
		printf(", \"p\": %.17g, \"corr\": %.17g", lp->p, lp->corr);
		break;
	case EMU_LOSS_GEMODEL:
		printf(", \"p\": %.17g, \"r\": %.17g, \"1-h\": %.17g, \"1-k\": %.17g", lp->ge_p,
		       lp->ge_r, lp->ge_1h, lp->ge_1k);
		break;
	case EMU_LOSS_STATE:
		printf(", \"p13\": %.17g, \"p31\": %.17g, \"p32\": %.17g, \"p23\": %.17g, "
		       "\"p14\": %.17g",
		       lp->p13, lp->p31, lp->p32, lp->p23, lp->p14);
		break;
	}
	printf("}}\n");
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"seed", required_argument, NULL, 's'},
	    {"count", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t seed = 1;
	long count = 100;
	const char *cmd;
	int c;

	while ((c = getopt_long(argc, argv, "s:c:h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 's':
			seed = strtoull(optarg, &end, 0);
			if (*end) {
				fprintf(stderr, "rocewire: --seed \"%s\" is not a number\n",
					optarg);
				return 2;
			}
			break;
		case 'c':
			count = strtol(optarg, &end, 0);
			if (*end || count < 0 || count > 10000000) {
				fprintf(stderr, "rocewire: --count \"%s\" must be 0..10000000\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind++];
	if (strcmp(cmd, "selfcheck") == 0 && optind == argc)
		return cmd_selfcheck();
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	if (strcmp(cmd, "gen") == 0)
		return cmd_gen(argv[optind], seed, count, 0);
	if (strcmp(cmd, "golden") == 0)
		return cmd_gen(argv[optind], 0x601de4, 0, 1);
	if (strcmp(cmd, "parse") == 0)
		return cmd_parse(argv[optind]);
	if (strcmp(cmd, "spec") == 0)
		return cmd_spec(argv[optind]);
	fprintf(stderr,
		"rocewire: unknown command \"%s\" (expected gen, golden, parse, selfcheck, spec)\n",
		cmd);
	return 2;
}
