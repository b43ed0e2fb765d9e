/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_class.c
 * Per-flow impairment classes: see emu_class.h.
 */
#include "emu_class.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_rng.h"
#include "net_frame.h"

#define MAX_TOK 64

/* a decimal or 0x hexadecimal number up to @p max (tc-flower reads both) */
static int
num(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long x;

	if (v[0] < '0' || v[0] > '9')
		return -EMU_E_BAD_NUMBER;
	x = strtoull(v, &end, 0);
	if (*end != 0 || x > max)
		return -EMU_E_RANGE;
	*out = x;
	return 0;
}

__attribute__((format(printf, 4, 5))) static int
fail(char *msg, size_t msglen, int err, const char *fmt, ...)
{
	va_list ap;

	if (msg != NULL && msglen != 0) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return -err;
}

static int
parse_addr(struct emu_class_addr *a, const char *v)
{
	char buf[64], *slash;
	uint64_t plen;

	if (strlen(v) >= sizeof(buf))
		return -EMU_E_BAD_NUMBER;
	strcpy(buf, v);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash++ = 0;
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, buf, a->a) == 1)
		a->fam = 4;
	else if (inet_pton(AF_INET6, buf, a->a) == 1)
		a->fam = 6;
	else
		return -EMU_E_BAD_NUMBER;
	a->plen = a->fam == 4 ? 32 : 128;
	if (slash != NULL) {
		if (num(slash, a->plen, &plen) != 0)
			return -EMU_E_RANGE;
		a->plen = (uint8_t)plen;
	}
	/* clear the host bits so that format and compare see one value */
	for (unsigned b = a->plen; b < (a->fam == 4 ? 32u : 128u); b++)
		a->a[b / 8] &= (uint8_t) ~(0x80u >> (b % 8));
	return 0;
}

static int
parse_range(const char *v, uint16_t *lo, uint16_t *hi)
{
	char buf[32], *dash;
	uint64_t a, b;

	if (strlen(v) >= sizeof(buf))
		return -EMU_E_BAD_NUMBER;
	strcpy(buf, v);
	dash = strchr(buf, '-');
	if (dash != NULL)
		*dash++ = 0;
	if (num(buf, 65535, &a) != 0)
		return -EMU_E_RANGE;
	b = a;
	if (dash != NULL && num(dash, 65535, &b) != 0)
		return -EMU_E_RANGE;
	if (b < a)
		return -EMU_E_RANGE;
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

static const struct {
	const char *name;
	uint8_t v;
} protos[] = {{"tcp", 6}, {"udp", 17}, {"sctp", 132}, {"icmp", 1}, {"icmpv6", 58}};

static const char *
proto_name(uint8_t p)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].v == p)
			return protos[i].name;
	return NULL;
}

static const struct {
	const char *name;
	uint32_t bit;
} keys[] = {
    {"src_ip", EMU_CK_SRC_IP},	   {"dst_ip", EMU_CK_DST_IP},
    {"ip_proto", EMU_CK_IP_PROTO}, {"src_port", EMU_CK_SRC_PORT},
    {"dst_port", EMU_CK_DST_PORT}, {"ip_tos", EMU_CK_IP_TOS},
    {"vlan_id", EMU_CK_VLAN_ID},   {"vlan_prio", EMU_CK_VLAN_PRIO},
    {"roce_dqp", EMU_CK_ROCE_DQP}, {"roce_opcode", EMU_CK_ROCE_OPCODE},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static int
key_value(struct emu_class_match *m, uint32_t bit, const char *k, const char *v, char *msg,
	  size_t msglen)
{
	uint64_t x, y;
	char buf[32], *slash;
	int rc = 0;

	switch (bit) {
	case EMU_CK_SRC_IP:
	case EMU_CK_DST_IP:
		rc = parse_addr(bit == EMU_CK_SRC_IP ? &m->src_ip : &m->dst_ip, v);
		if (rc == -EMU_E_RANGE)
			return fail(msg, msglen, EMU_E_RANGE,
				    "class: %s \"%s\": prefix is out of range (0..32 for IPv4, "
				    "0..128 for IPv6)",
				    k, v);
		if (rc)
			return fail(msg, msglen, EMU_E_BAD_NUMBER,
				    "class: %s \"%s\" is not an IPv4 or IPv6 address[/prefix]", k,
				    v);
		return 0;
	case EMU_CK_IP_PROTO:
		for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
			if (strcmp(v, protos[i].name) == 0) {
				m->ip_proto = protos[i].v;
				return 0;
			}
		if (num(v, 255, &x) != 0)
			return fail(msg, msglen, EMU_E_RANGE,
				    "class: ip_proto \"%s\": tcp, udp, sctp, icmp, icmpv6 or "
				    "0..255",
				    v);
		m->ip_proto = (uint8_t)x;
		return 0;
	case EMU_CK_SRC_PORT:
	case EMU_CK_DST_PORT:
		rc = bit == EMU_CK_SRC_PORT ? parse_range(v, &m->sport_lo, &m->sport_hi)
					    : parse_range(v, &m->dport_lo, &m->dport_hi);
		if (rc)
			return fail(msg, msglen, EMU_E_RANGE,
				    "class: %s \"%s\": a port or LOW-HIGH range (0..65535)", k, v);
		return 0;
	case EMU_CK_IP_TOS:
		if (strlen(v) >= sizeof(buf))
			return fail(msg, msglen, EMU_E_RANGE, "class: ip_tos: value too long");
		strcpy(buf, v);
		slash = strchr(buf, '/');
		if (slash != NULL)
			*slash++ = 0;
		y = 0xff;
		if (num(buf, 255, &x) != 0 || (slash != NULL && num(slash, 255, &y) != 0))
			return fail(msg, msglen, EMU_E_RANGE,
				    "class: ip_tos \"%s\": TOS[/MASK], each 0..255", v);
		m->tos = (uint8_t)(x & y);
		m->tos_mask = (uint8_t)y;
		return 0;
	case EMU_CK_VLAN_ID:
		if (num(v, 4095, &x) != 0)
			return fail(msg, msglen, EMU_E_RANGE, "class: vlan_id \"%s\": 0..4095", v);
		m->vlan_id = (uint16_t)x;
		return 0;
	case EMU_CK_VLAN_PRIO:
		if (num(v, 7, &x) != 0)
			return fail(msg, msglen, EMU_E_RANGE, "class: vlan_prio \"%s\": 0..7", v);
		m->vlan_prio = (uint8_t)x;
		return 0;
	case EMU_CK_ROCE_DQP:
		if (num(v, 0xffffff, &x) != 0)
			return fail(msg, msglen, EMU_E_RANGE,
				    "class: roce_dqp \"%s\": a QP number 0..0xffffff", v);
		m->roce_dqp = (uint32_t)x;
		return 0;
	default: /* EMU_CK_ROCE_OPCODE */
		if (num(v, 255, &x) != 0)
			return fail(msg, msglen, EMU_E_RANGE,
				    "class: roce_opcode \"%s\": a BTH opcode 0..0xff", v);
		m->roce_opcode = (uint8_t)x;
		return 0;
	}
}

/* split @p text (copied into @p buf) on whitespace */
static int
split(char *buf, const char *tok[], int max)
{
	int n = 0;

	for (char *p = strtok(buf, " \t\r\n"); p != NULL; p = strtok(NULL, " \t\r\n")) {
		if (n == max)
			return -1;
		tok[n++] = p;
	}
	return n;
}

int
emu_class_match_parse(struct emu_class_match *m, const char *text, char *msg, size_t msglen)
{
	char buf[EMU_SPEC_MAX_LEN];
	const char *tok[MAX_TOK];
	int n, rc;

	memset(m, 0, sizeof(*m));
	if (text == NULL || strlen(text) >= sizeof(buf))
		return fail(msg, msglen, EMU_E_RANGE, "class: MATCH is too long");
	strcpy(buf, text);
	n = split(buf, tok, MAX_TOK);
	if (n < 0)
		return fail(msg, msglen, EMU_E_RANGE, "class: more than %d words in MATCH",
			    MAX_TOK);
	if (n == 0)
		return fail(msg, msglen, EMU_E_EMPTY,
			    "class: empty MATCH (give at least one key, e.g. ip_proto udp)");
	for (int i = 0; i < n; i += 2) {
		uint32_t bit = 0;

		for (size_t k = 0; k < NKEYS; k++)
			if (strcmp(tok[i], keys[k].name) == 0)
				bit = keys[k].bit;
		if (bit == 0)
			return fail(msg, msglen, EMU_E_UNKNOWN_KEYWORD,
				    "class: unknown key \"%s\" (src_ip, dst_ip, ip_proto, "
				    "src_port, dst_port, ip_tos, vlan_id, vlan_prio, roce_dqp, "
				    "roce_opcode)",
				    tok[i]);
		if (m->keys & bit)
			return fail(msg, msglen, EMU_E_DUPLICATE, "class: %s given more than once",
				    tok[i]);
		if (i + 1 >= n)
			return fail(msg, msglen, EMU_E_MISSING_ARG, "class: %s needs a value",
				    tok[i]);
		rc = key_value(m, bit, tok[i], tok[i + 1], msg, msglen);
		if (rc)
			return rc;
		m->keys |= bit;
	}
	if ((m->keys & (EMU_CK_SRC_PORT | EMU_CK_DST_PORT)) &&
	    (!(m->keys & EMU_CK_IP_PROTO) ||
	     (m->ip_proto != 6 && m->ip_proto != 17 && m->ip_proto != 132)))
		return fail(msg, msglen, EMU_E_CONFLICT,
			    "class: src_port/dst_port need ip_proto tcp, udp or sctp (as in "
			    "tc-flower)");
	if ((m->keys & EMU_CK_SRC_IP) && (m->keys & EMU_CK_DST_IP) &&
	    m->src_ip.fam != m->dst_ip.fam)
		return fail(msg, msglen, EMU_E_CONFLICT,
			    "class: src_ip and dst_ip are of different families");
	return 0;
}

/* what a class SPEC may not set: the direction's bottleneck and rules */
static const char *
class_spec_extra(const struct emu_spec *s)
{
	struct emu_spec d;

	emu_spec_init(&d);
	if (s->queue.rate_bps != 0 || s->queue.overhead != 0 || s->queue.cell_size != 0 ||
	    s->queue.cell_overhead != 0)
		return "rate";
	if (s->queue.limit_pkts != d.queue.limit_pkts)
		return "limit";
	if (s->queue.limit_bytes != 0)
		return "limit-bytes";
	if (s->red.enabled)
		return "red";
	if (s->pfc.enabled)
		return "pfc";
	if (s->ctrl_delay)
		return "ctrl-delay";
	if (s->rules.n != 0)
		return "drop-psn/drop-nth/drop-mad";
	return NULL;
}

int
emu_class_parse(struct emu_class *c, const char *text, char *msg, size_t msglen)
{
	char buf[EMU_SPEC_MAX_LEN];
	const char *arrow, *extra;
	size_t ml;
	int rc;

	memset(c, 0, sizeof(*c));
	emu_spec_init(&c->spec);
	if (text == NULL)
		return fail(msg, msglen, EMU_E_EMPTY, "class: empty (MATCH => SPEC)");
	arrow = strstr(text, "=>");
	if (arrow == NULL)
		return fail(msg, msglen, EMU_E_MISSING_ARG,
			    "class: \"MATCH => SPEC\" has no \"=>\" (e.g. 'ip_proto udp "
			    "dst_port 4791 => delay 40ms loss 1%%')");
	ml = (size_t)(arrow - text);
	if (ml >= sizeof(buf))
		return fail(msg, msglen, EMU_E_RANGE, "class: MATCH is too long");
	memcpy(buf, text, ml);
	buf[ml] = 0;
	rc = emu_class_match_parse(&c->m, buf, msg, msglen);
	if (rc)
		return rc;
	if (strstr(arrow + 2, "=>") != NULL)
		return fail(msg, msglen, EMU_E_DUPLICATE, "class: more than one \"=>\"");
	rc = emu_spec_parse(&c->spec, arrow + 2, buf, sizeof(buf));
	if (rc)
		return fail(msg, msglen, -rc, "class SPEC: %s", buf);
	extra = class_spec_extra(&c->spec);
	if (extra != NULL)
		return fail(msg, msglen, EMU_E_CONFLICT,
			    "class SPEC: %s belongs to the direction's SPEC (every class "
			    "shares its bottleneck and rules)",
			    extra);
	return 0;
}

static int
fmt_addr(const struct emu_class_addr *a, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(a->fam == 4 ? AF_INET : AF_INET6, a->a, s, sizeof(s));
	return snprintf(buf, len, "%s/%u", s, a->plen);
}

#define APPEND(...)                                                                                \
	do {                                                                                       \
		size_t at_ = (size_t)n < len ? (size_t)n : len;                                    \
		int m_ = snprintf(buf + at_, len - at_, __VA_ARGS__);                              \
		if (m_ < 0)                                                                        \
			return -EMU_E_NOSPACE;                                                     \
		n += m_;                                                                           \
	} while (0)

int
emu_class_format(const struct emu_class *c, char *buf, size_t len)
{
	const struct emu_class_match *m = &c->m;
	char a[64], spec[EMU_SPEC_MAX_LEN];
	int n = 0;

	if (m->keys & EMU_CK_SRC_IP) {
		fmt_addr(&m->src_ip, a, sizeof(a));
		APPEND("src_ip %s ", a);
	}
	if (m->keys & EMU_CK_DST_IP) {
		fmt_addr(&m->dst_ip, a, sizeof(a));
		APPEND("dst_ip %s ", a);
	}
	if (m->keys & EMU_CK_IP_PROTO) {
		const char *p = proto_name(m->ip_proto);

		if (p != NULL)
			APPEND("ip_proto %s ", p);
		else
			APPEND("ip_proto %u ", m->ip_proto);
	}
	if (m->keys & EMU_CK_SRC_PORT)
		APPEND("src_port %u-%u ", m->sport_lo, m->sport_hi);
	if (m->keys & EMU_CK_DST_PORT)
		APPEND("dst_port %u-%u ", m->dport_lo, m->dport_hi);
	if (m->keys & EMU_CK_IP_TOS)
		APPEND("ip_tos 0x%02x/0x%02x ", m->tos, m->tos_mask);
	if (m->keys & EMU_CK_VLAN_ID)
		APPEND("vlan_id %u ", m->vlan_id);
	if (m->keys & EMU_CK_VLAN_PRIO)
		APPEND("vlan_prio %u ", m->vlan_prio);
	if (m->keys & EMU_CK_ROCE_DQP)
		APPEND("roce_dqp 0x%" PRIx32 " ", m->roce_dqp);
	if (m->keys & EMU_CK_ROCE_OPCODE)
		APPEND("roce_opcode 0x%02x ", m->roce_opcode);
	if (emu_spec_format(&c->spec, spec, sizeof(spec)) < 0)
		return -EMU_E_NOSPACE;
	APPEND("=> %s", spec);
	return (size_t)n < len ? n : -EMU_E_NOSPACE;
}

static bool
addr_match(const struct emu_class_addr *a, const uint8_t *ip)
{
	unsigned full = a->plen / 8, rest = a->plen % 8;

	if (memcmp(a->a, ip, full) != 0)
		return false;
	if (rest != 0) {
		uint8_t mask = (uint8_t)(0xffu << (8 - rest));

		if ((ip[full] & mask) != a->a[full])
			return false;
	}
	return true;
}

bool
emu_class_match(const struct emu_class_match *m, const uint8_t *f, size_t len,
		const struct net_frame *fr)
{
	uint32_t k = m->keys;

	if (k & (EMU_CK_VLAN_ID | EMU_CK_VLAN_PRIO)) {
		if (fr->kind == NET_FRAME_BAD_L2 || fr->ntags == 0)
			return false;
		if ((k & EMU_CK_VLAN_ID) && (fr->tci[0] & 0x0fff) != m->vlan_id)
			return false;
		if ((k & EMU_CK_VLAN_PRIO) && (fr->tci[0] >> 13) != m->vlan_prio)
			return false;
	}
	if (k & EMU_CK_IP_TOS) {
		if (!fr->has_tclass || (fr->tclass & m->tos_mask) != m->tos)
			return false;
	}
	if (k &
	    (EMU_CK_SRC_IP | EMU_CK_DST_IP | EMU_CK_IP_PROTO | EMU_CK_SRC_PORT | EMU_CK_DST_PORT)) {
		bool v4 = fr->ethertype == 0x0800;
		const uint8_t *ip = f + fr->l3_off;

		if (!fr->ip || !fr->ip_version_ok)
			return false;
		if ((k & EMU_CK_IP_PROTO) && fr->proto != m->ip_proto)
			return false;
		if (k & EMU_CK_SRC_IP) {
			if (m->src_ip.fam != (v4 ? 4 : 6) ||
			    !addr_match(&m->src_ip, ip + (v4 ? 12 : 8)))
				return false;
		}
		if (k & EMU_CK_DST_IP) {
			if (m->dst_ip.fam != (v4 ? 4 : 6) ||
			    !addr_match(&m->dst_ip, ip + (v4 ? 16 : 24)))
				return false;
		}
		if (k & (EMU_CK_SRC_PORT | EMU_CK_DST_PORT)) {
			const uint8_t *l4;
			uint16_t sp, dp;

			/* ports are the first 4 bytes of TCP, UDP and SCTP alike */
			if (fr->l4_off == 0 || (size_t)fr->l4_off + 4 > len)
				return false;
			l4 = f + fr->l4_off;
			sp = (uint16_t)(l4[0] << 8 | l4[1]);
			dp = (uint16_t)(l4[2] << 8 | l4[3]);
			if ((k & EMU_CK_SRC_PORT) && (sp < m->sport_lo || sp > m->sport_hi))
				return false;
			if ((k & EMU_CK_DST_PORT) && (dp < m->dport_lo || dp > m->dport_hi))
				return false;
		}
	}
	if (k & (EMU_CK_ROCE_DQP | EMU_CK_ROCE_OPCODE)) {
		if (fr->kind != NET_FRAME_ROCE || !fr->has_bth)
			return false;
		if ((k & EMU_CK_ROCE_DQP) && fr->bth_dqpn != m->roce_dqp)
			return false;
		if ((k & EMU_CK_ROCE_OPCODE) && fr->bth_op != m->roce_opcode)
			return false;
	}
	return true;
}

int
emu_class_select(const struct emu_class *cs, unsigned n, const uint8_t *f, size_t len,
		 const struct net_frame *fr)
{
	for (unsigned i = 0; i < n && i < EMU_CLASS_MAX; i++)
		if (emu_class_match(&cs[i].m, f, len, fr))
			return (int)i;
	return -1;
}

uint64_t
emu_class_seed(uint64_t seed, unsigned idx)
{
	uint64_t x = seed ^ (UINT64_C(0xc2b2ae3d27d4eb4f) * (idx + 1));

	return emu_splitmix64(&x);
}
