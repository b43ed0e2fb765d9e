/* SPDX-License-Identifier: BSD-3-Clause */
#include "net_hdr.h"

#include <string.h>

#include "net_bytes.h"

static const char *const err_names[] = {
#define NET_ERR_NAME(name, text) #name,
    NET_ERR_LIST(NET_ERR_NAME)
#undef NET_ERR_NAME
};

static const char *const err_texts[] = {
#define NET_ERR_TEXT(name, text) text,
    NET_ERR_LIST(NET_ERR_TEXT)
#undef NET_ERR_TEXT
};

const char *
net_err_name(int e)
{
	if (e < 0)
		e = -e;
	return e < NET_E__COUNT ? err_names[e] : "UNKNOWN";
}

const char *
net_err_str(int e)
{
	if (e < 0)
		e = -e;
	return e < NET_E__COUNT ? err_texts[e] : "unknown error";
}

int
net_l2_parse(const uint8_t *buf, size_t len, struct net_l2 *l2)
{
	if (len < NET_ETH_HLEN)
		return -NET_E_TRUNC_ETH;
	memcpy(l2->dst, buf, NET_ETH_ALEN);
	memcpy(l2->src, buf + 6, NET_ETH_ALEN);
	l2->ethertype = net_get_be16(buf + 12);
	l2->hlen = NET_ETH_HLEN;
	l2->has_vlan = false;
	l2->vlan_tci = 0;
	if (l2->ethertype == NET_ETHERTYPE_VLAN) {
		if (len < NET_ETH_HLEN + NET_VLAN_HLEN)
			return -NET_E_TRUNC_VLAN;
		l2->has_vlan = true;
		l2->vlan_tci = net_get_be16(buf + 14);
		l2->ethertype = net_get_be16(buf + 16);
		l2->hlen += NET_VLAN_HLEN;
	}
	return 0;
}

int
net_l2_build(uint8_t *buf, size_t cap, const struct net_l2 *l2)
{
	size_t need = NET_ETH_HLEN + (l2->has_vlan ? NET_VLAN_HLEN : 0);

	if (cap < need)
		return -NET_E_NOSPACE;
	memcpy(buf, l2->dst, NET_ETH_ALEN);
	memcpy(buf + 6, l2->src, NET_ETH_ALEN);
	if (l2->has_vlan) {
		net_put_be16(buf + 12, NET_ETHERTYPE_VLAN);
		net_put_be16(buf + 14, l2->vlan_tci);
		net_put_be16(buf + 16, l2->ethertype);
	} else {
		net_put_be16(buf + 12, l2->ethertype);
	}
	return (int)need;
}

void
net_ip4_to_mapped(uint32_t ip4, uint8_t out[16])
{
	memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	net_put_be32(out + 12, ip4);
}

bool
net_mapped_to_ip4(const uint8_t addr[16], uint32_t *ip4)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (memcmp(addr, prefix, sizeof(prefix)) != 0)
		return false;
	*ip4 = net_get_be32(addr + 12);
	return true;
}

uint32_t
net_csum_partial(const uint8_t *buf, size_t len, uint32_t sum)
{
	uint64_t acc = sum;
	size_t i = 0;

	for (; i + 4 <= len; i += 4)
		acc += net_get_be32(buf + i);
	for (; i + 2 <= len; i += 2)
		acc += net_get_be16(buf + i);
	if (i < len)
		acc += (uint32_t)buf[i] << 8;
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t
net_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void
net_ip4_fix_csum(uint8_t *hdr)
{
	size_t hlen = (size_t)(hdr[0] & 0x0f) * 4;

	net_put_be16(hdr + 10, 0);
	net_put_be16(hdr + 10, net_csum_fold(net_csum_partial(hdr, hlen, 0)));
}

int
net_l3_parse(const uint8_t *buf, size_t len, uint16_t ethertype, struct net_l3 *l3)
{
	if (ethertype == NET_ETHERTYPE_IPV4) {
		size_t hlen, tot;

		if (len < NET_IPV4_HLEN)
			return -NET_E_TRUNC_IP;
		if (buf[0] >> 4 != 4)
			return -NET_E_BAD_IP_VERSION;
		hlen = (size_t)(buf[0] & 0x0f) * 4;
		if (hlen < NET_IPV4_HLEN || hlen > len)
			return -NET_E_BAD_IP_HLEN;
		tot = net_get_be16(buf + 2);
		if (tot < hlen || tot > len)
			return -NET_E_BAD_IP_LEN;
		if (net_get_be16(buf + 6) & 0x3fff) /* MF or fragment offset */
			return -NET_E_IP_FRAGMENT;
		l3->version = 4;
		l3->tos = buf[1];
		l3->ip_id = net_get_be16(buf + 4);
		l3->ttl = buf[8];
		l3->proto = buf[9];
		l3->flow_label = 0;
		net_ip4_to_mapped(net_get_be32(buf + 12), l3->src);
		net_ip4_to_mapped(net_get_be32(buf + 16), l3->dst);
		l3->hlen = (uint16_t)hlen;
		l3->payload_len = (uint16_t)(tot - hlen);
		/* checked last so that callers who tolerate it still get every field */
		if (net_csum_fold(net_csum_partial(buf, hlen, 0)) != 0)
			return -NET_E_BAD_IP_CSUM;
		return 0;
	}
	if (ethertype == NET_ETHERTYPE_IPV6) {
		uint32_t w0;
		size_t plen;

		if (len < NET_IPV6_HLEN)
			return -NET_E_TRUNC_IP;
		w0 = net_get_be32(buf);
		if (w0 >> 28 != 6)
			return -NET_E_BAD_IP_VERSION;
		plen = net_get_be16(buf + 4);
		if (plen > len - NET_IPV6_HLEN)
			return -NET_E_BAD_IP_LEN;
		l3->version = 6;
		l3->tos = (uint8_t)(w0 >> 20);
		l3->flow_label = w0 & 0xfffff;
		l3->ip_id = 0;
		l3->proto = buf[6];
		l3->ttl = buf[7];
		memcpy(l3->src, buf + 8, 16);
		memcpy(l3->dst, buf + 24, 16);
		l3->hlen = NET_IPV6_HLEN;
		l3->payload_len = (uint16_t)plen;
		return 0;
	}
	return -NET_E_BAD_ETHERTYPE;
}

int
net_l3_build(uint8_t *buf, size_t cap, const struct net_l3 *l3)
{
	if (l3->version == 4) {
		uint32_t a;

		if (cap < NET_IPV4_HLEN)
			return -NET_E_NOSPACE;
		if (l3->payload_len > 0xffff - NET_IPV4_HLEN)
			return -NET_E_INVAL;
		buf[0] = 0x45;
		buf[1] = l3->tos;
		net_put_be16(buf + 2, (uint16_t)(NET_IPV4_HLEN + l3->payload_len));
		net_put_be16(buf + 4, l3->ip_id);
		net_put_be16(buf + 6, 0x4000); /* DF */
		buf[8] = l3->ttl;
		buf[9] = l3->proto;
		if (!net_mapped_to_ip4(l3->src, &a))
			return -NET_E_INVAL;
		net_put_be32(buf + 12, a);
		if (!net_mapped_to_ip4(l3->dst, &a))
			return -NET_E_INVAL;
		net_put_be32(buf + 16, a);
		net_ip4_fix_csum(buf);
		return NET_IPV4_HLEN;
	}
	if (l3->version == 6) {
		if (cap < NET_IPV6_HLEN)
			return -NET_E_NOSPACE;
		net_put_be32(buf, 6u << 28 | (uint32_t)l3->tos << 20 | (l3->flow_label & 0xfffff));
		net_put_be16(buf + 4, l3->payload_len);
		buf[6] = l3->proto;
		buf[7] = l3->ttl;
		memcpy(buf + 8, l3->src, 16);
		memcpy(buf + 24, l3->dst, 16);
		return NET_IPV6_HLEN;
	}
	return -NET_E_INVAL;
}

uint8_t
net_ip_set_ecn(uint8_t *hdr, uint8_t ecn)
{
	uint8_t old;

	if (hdr[0] >> 4 == 4) {
		uint16_t old_word = net_get_be16(hdr), new_word;
		uint32_t sum;

		old = hdr[1] & 3;
		hdr[1] = (uint8_t)((hdr[1] & ~3u) | (ecn & 3));
		new_word = net_get_be16(hdr);
		/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') */
		sum = (uint16_t)~net_get_be16(hdr + 10);
		sum += (uint16_t)~old_word;
		sum += new_word;
		net_put_be16(hdr + 10, net_csum_fold(sum));
	} else {
		old = (hdr[1] >> 4) & 3;
		hdr[1] = (uint8_t)((hdr[1] & ~0x30u) | (uint8_t)((ecn & 3) << 4));
	}
	return old;
}

void
net_ip_set_dscp(uint8_t *hdr, uint8_t dscp)
{
	if (hdr[0] >> 4 == 4) {
		hdr[1] = (uint8_t)((dscp & 0x3f) << 2 | (hdr[1] & 3));
		net_ip4_fix_csum(hdr);
	} else {
		uint32_t w0 = net_get_be32(hdr);
		uint32_t tc = (w0 >> 20) & 0xff;

		tc = (uint32_t)(dscp & 0x3f) << 2 | (tc & 3);
		net_put_be32(hdr, (w0 & 0xf00fffffu) | tc << 20);
	}
}

int
net_udp_parse(const uint8_t *buf, size_t len, struct net_udp *udp)
{
	if (len < NET_UDP_HLEN)
		return -NET_E_TRUNC_UDP;
	udp->sport = net_get_be16(buf);
	udp->dport = net_get_be16(buf + 2);
	udp->len = net_get_be16(buf + 4);
	udp->csum = net_get_be16(buf + 6);
	if (udp->len < NET_UDP_HLEN || udp->len > len)
		return -NET_E_BAD_UDP_LEN;
	return 0;
}

int
net_udp_build(uint8_t *buf, size_t cap, const struct net_udp *udp)
{
	if (cap < NET_UDP_HLEN)
		return -NET_E_NOSPACE;
	net_put_be16(buf, udp->sport);
	net_put_be16(buf + 2, udp->dport);
	net_put_be16(buf + 4, udp->len);
	net_put_be16(buf + 6, udp->csum);
	return NET_UDP_HLEN;
}

uint16_t
net_udp_csum(const struct net_l3 *l3, const uint8_t *udp, size_t udp_len)
{
	uint8_t ph[40];
	size_t phl;
	uint32_t sum;
	uint16_t c;

	if (l3->version == 4) {
		memcpy(ph, l3->src + 12, 4);
		memcpy(ph + 4, l3->dst + 12, 4);
		ph[8] = 0;
		ph[9] = NET_IPPROTO_UDP;
		net_put_be16(ph + 10, (uint16_t)udp_len);
		phl = 12;
	} else {
		memcpy(ph, l3->src, 16);
		memcpy(ph + 16, l3->dst, 16);
		net_put_be32(ph + 32, (uint32_t)udp_len);
		ph[36] = ph[37] = ph[38] = 0;
		ph[39] = NET_IPPROTO_UDP;
		phl = 40;
	}
	sum = net_csum_partial(ph, phl, 0);
	sum = net_csum_partial(udp, 6, sum); /* skip the checksum field itself */
	sum = net_csum_partial(udp + 8, udp_len - 8, sum);
	c = net_csum_fold(sum);
	return c ? c : 0xffff;
}
