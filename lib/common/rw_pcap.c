/* SPDX-License-Identifier: BSD-3-Clause */
#include "rw_pcap.h"

#include <errno.h>
#include <string.h>

#define MAGIC_US 0xa1b2c3d4u
#define MAGIC_NS 0xa1b23c4du
#define LINKTYPE_ETHERNET 1

static uint32_t
sw32(const struct rw_pcap *p, uint32_t v)
{
	return p->swapped ? __builtin_bswap32(v) : v;
}

int
rw_pcap_open_read(struct rw_pcap *p, const char *path)
{
	uint32_t gh[6];

	memset(p, 0, sizeof(*p));
	p->f = fopen(path, "rb");
	if (!p->f)
		return -errno;
	if (fread(gh, sizeof(gh), 1, p->f) != 1)
		goto bad;
	if (gh[0] == MAGIC_US || gh[0] == MAGIC_NS) {
		p->nsec = gh[0] == MAGIC_NS;
	} else if (__builtin_bswap32(gh[0]) == MAGIC_US || __builtin_bswap32(gh[0]) == MAGIC_NS) {
		p->swapped = 1;
		p->nsec = __builtin_bswap32(gh[0]) == MAGIC_NS;
	} else {
		goto bad;
	}
	p->linktype = sw32(p, gh[5]);
	if (p->linktype != LINKTYPE_ETHERNET) {
		fclose(p->f);
		p->f = NULL;
		return -EPROTONOSUPPORT;
	}
	return 0;
bad:
	fclose(p->f);
	p->f = NULL;
	return -EPROTO;
}

int
rw_pcap_next(struct rw_pcap *p, uint8_t *buf, uint32_t cap, uint32_t *caplen, uint64_t *ts_ns,
	     uint32_t *orig_len)
{
	uint32_t rh[4], incl, take;

	if (fread(rh, sizeof(rh), 1, p->f) != 1)
		return feof(p->f) ? 0 : -EIO;
	incl = sw32(p, rh[2]);
	if (incl > 256 * 1024)
		return -EPROTO;
	if (ts_ns)
		*ts_ns = (uint64_t)sw32(p, rh[0]) * 1000000000ull +
			 (uint64_t)sw32(p, rh[1]) * (p->nsec ? 1 : 1000);
	if (orig_len)
		*orig_len = sw32(p, rh[3]);
	take = incl < cap ? incl : cap;
	if (take && fread(buf, take, 1, p->f) != 1)
		return -EIO;
	if (incl > take && fseek(p->f, (long)(incl - take), SEEK_CUR) != 0)
		return -EIO;
	*caplen = take;
	return 1;
}

int
rw_pcap_open_write(struct rw_pcap *p, const char *path)
{
	uint32_t gh[6] = {MAGIC_US, 0x00040002u, 0, 0, RW_PCAP_SNAPLEN, LINKTYPE_ETHERNET};

	memset(p, 0, sizeof(*p));
	p->f = fopen(path, "wb");
	if (!p->f)
		return -errno;
	if (fwrite(gh, sizeof(gh), 1, p->f) != 1) {
		fclose(p->f);
		p->f = NULL;
		return -EIO;
	}
	return 0;
}

int
rw_pcap_write(struct rw_pcap *p, const uint8_t *buf, uint32_t len, uint64_t ts_ns)
{
	uint32_t rh[4] = {(uint32_t)(ts_ns / 1000000000ull),
			  (uint32_t)(ts_ns % 1000000000ull / 1000), len, len};

	if (fwrite(rh, sizeof(rh), 1, p->f) != 1 || fwrite(buf, len, 1, p->f) != 1)
		return -EIO;
	return 0;
}

int
rw_pcap_close(struct rw_pcap *p)
{
	int rc = 0;

	if (p->f && fclose(p->f) != 0)
		rc = -errno;
	p->f = NULL;
	return rc;
}
