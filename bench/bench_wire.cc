// SPDX-License-Identifier: BSD-3-Clause
// Wire-layer benchmarks: ICRC (ISA-L) against zlib and a table-driven CRC in the
// same run, full header parse, parse + ICRC verify, and header build.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstring>
#include <vector>

extern "C" {
#include "net_frame.h"
#include "roce_icrc.h"
#include "roce_pkt.h"
}

namespace {

std::vector<uint8_t> make_frame(uint32_t payload, struct roce_pkt *p)
{
	std::vector<uint8_t> buf(payload + 128);
	std::memset(p, 0, sizeof(*p));
	p->l3.version = 4;
	p->l3.ttl = 64;
	net_ip4_to_mapped(0x0a000001, p->l3.src);
	net_ip4_to_mapped(0x0a000002, p->l3.dst);
	p->udp.sport = 0xc001;
	p->h.bth.opcode = 0x0a; /* RC_RDMA_WRITE_ONLY */
	p->h.bth.pkey = 0xffff;
	p->h.bth.dqpn = 0x11;
	p->h.reth = {0x1000, 0x42, payload};
	std::vector<uint8_t> pl(payload, 0xa5);
	int len = roce_build(buf.data(), buf.size(), p, pl.data(), payload, 0);
	buf.resize(len > 0 ? len : 0);
	return buf;
}

uint32_t table[256];
void init_table()
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
}
uint32_t crc_table(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;
	while (n--)
		c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

// Packet sizes are the RoCE payload; the CRC covers IP..payload (frame - 18 B).
void BM_icrc_isal(benchmark::State &st)
{
	struct roce_pkt p;
	auto f = make_frame(st.range(0), &p);
	size_t n = p.frame_len - 4 - p.l3_off;
	for (auto _ : st)
		benchmark::DoNotOptimize(roce_icrc_calc(f.data() + p.l3_off, n, 4));
	st.SetBytesProcessed(int64_t(st.iterations()) * n);
}

void BM_crc_zlib(benchmark::State &st)
{
	struct roce_pkt p;
	auto f = make_frame(st.range(0), &p);
	size_t n = p.frame_len - 4 - p.l3_off;
	for (auto _ : st)
		benchmark::DoNotOptimize(crc32(0, f.data() + p.l3_off, n));
	st.SetBytesProcessed(int64_t(st.iterations()) * n);
}

void BM_crc_table(benchmark::State &st)
{
	struct roce_pkt p;
	auto f = make_frame(st.range(0), &p);
	size_t n = p.frame_len - 4 - p.l3_off;
	init_table();
	for (auto _ : st)
		benchmark::DoNotOptimize(crc_table(f.data() + p.l3_off, n));
	st.SetBytesProcessed(int64_t(st.iterations()) * n);
}

void BM_parse_headers(benchmark::State &st)
{
	struct roce_pkt p, q;
	auto f = make_frame(st.range(0), &p);
	for (auto _ : st) {
		int rc = roce_parse(f.data(), f.size(), &q, ROCE_PARSE_NO_ICRC);
		benchmark::DoNotOptimize(rc);
		benchmark::DoNotOptimize(q.h.bth.psn);
	}
	st.SetItemsProcessed(st.iterations());
}

void BM_parse_verify(benchmark::State &st)
{
	struct roce_pkt p, q;
	auto f = make_frame(st.range(0), &p);
	for (auto _ : st) {
		int rc = roce_parse(f.data(), f.size(), &q, 0);
		benchmark::DoNotOptimize(rc);
	}
	st.SetItemsProcessed(st.iterations());
	st.SetBytesProcessed(int64_t(st.iterations()) * f.size());
}

// The rnic's receive path per RoCE frame: net_frame_classify() for dispatch, then
// the engine's parse. full: roce_parse() walks the headers again (the path before
// the classification travelled with the frame); classified: roce_parse_frame().
void BM_rx_classify_parse_full(benchmark::State &st)
{
	struct roce_pkt p, q;
	struct net_frame fr;
	auto f = make_frame(st.range(0), &p);
	for (auto _ : st) {
		benchmark::DoNotOptimize(net_frame_classify(f.data(), f.size(), &fr));
		int rc = roce_parse(f.data(), f.size(), &q, 0);
		benchmark::DoNotOptimize(rc);
	}
	st.SetItemsProcessed(st.iterations());
}

void BM_rx_classify_parse_classified(benchmark::State &st)
{
	struct roce_pkt p, q;
	struct net_frame fr;
	auto f = make_frame(st.range(0), &p);
	for (auto _ : st) {
		benchmark::DoNotOptimize(net_frame_classify(f.data(), f.size(), &fr));
		int rc = roce_parse_frame(f.data(), f.size(), &fr, &q, 0);
		benchmark::DoNotOptimize(rc);
	}
	st.SetItemsProcessed(st.iterations());
}

void BM_build(benchmark::State &st)
{
	struct roce_pkt p;
	auto f = make_frame(st.range(0), &p);
	size_t h = roce_hdr_len(&p);
	for (auto _ : st) {
		p.h.bth.psn = (p.h.bth.psn + 1) & 0xffffff;
		int len = roce_build(f.data(), f.size(), &p, f.data() + h, st.range(0), 0);
		benchmark::DoNotOptimize(len);
	}
	st.SetItemsProcessed(st.iterations());
}

} // namespace

BENCHMARK(BM_icrc_isal)->Arg(64)->Arg(1024)->Arg(4096);
BENCHMARK(BM_crc_zlib)->Arg(64)->Arg(1024)->Arg(4096);
BENCHMARK(BM_crc_table)->Arg(64)->Arg(1024)->Arg(4096);
BENCHMARK(BM_parse_headers)->Arg(1024);
BENCHMARK(BM_parse_verify)->Arg(64)->Arg(1024)->Arg(4096);
BENCHMARK(BM_rx_classify_parse_full)->Arg(64)->Arg(4096);
BENCHMARK(BM_rx_classify_parse_classified)->Arg(64)->Arg(4096);
BENCHMARK(BM_build)->Arg(64)->Arg(1024)->Arg(4096);
BENCHMARK_MAIN();
