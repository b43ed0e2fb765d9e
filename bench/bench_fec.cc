// SPDX-License-Identifier: BSD-3-Clause
// lib/fec benchmarks: encode and decode throughput per core for XOR (LoWAR) and
// Reed-Solomon at K = 8/32 and R = 1/2/4 over 1024-byte-MTU RoCEv2 frames
// (what the rnic codes: header parse, fold, the repair frame built with its
// ICRC), next to ISA-L's raw routines over the same bytes in the same run
// (xor_gen, ec_encode_data; decode = ec_encode_data with the inverted rows).
// Bytes counted: the coded region of the data frames (IP header to ICRC).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include "fec.h"
#include "roce_pkt.h"
}

namespace {

constexpr uint32_t kPayload = 1024;
constexpr int kFrames = 2048; // a multiple of every K x D used below

struct Frames {
	std::vector<std::vector<uint8_t>> f;
	size_t coded_bytes = 0; // IP .. ICRC of all frames
};

const Frames &frames()
{
	static Frames fr;
	if (!fr.f.empty())
		return fr;
	for (int i = 0; i < kFrames; i++) {
		struct roce_pkt p;
		std::vector<uint8_t> buf(kPayload + 128), pl(kPayload);
		std::memset(&p, 0, sizeof(p));
		p.l3.version = 4;
		p.l3.ttl = 64;
		net_ip4_to_mapped(0x0a000001, p.l3.src);
		net_ip4_to_mapped(0x0a000002, p.l3.dst);
		p.l3.ip_id = (uint16_t)i;
		p.udp.sport = 0xc001;
		p.h.bth.opcode = 0x07; // RC_RDMA_WRITE_MIDDLE
		p.h.bth.pkey = 0xffff;
		p.h.bth.dqpn = 0x11;
		p.h.bth.psn = (uint32_t)i;
		for (uint32_t k = 0; k < kPayload; k++)
			pl[k] = (uint8_t)(k * 31 + i);
		int n = roce_build(buf.data(), buf.size(), &p, pl.data(), kPayload, 0);
		buf.resize(n > 0 ? (size_t)n : 0);
		fr.coded_bytes += p.frame_len - p.l3_off;
		fr.f.push_back(std::move(buf));
	}
	return fr;
}

struct Wire {
	std::vector<std::vector<uint8_t>> f;
};

void keep(void *arg, const uint8_t *b, size_t n)
{
	static_cast<Wire *>(arg)->f.emplace_back(b, b + n);
}

void nop(void *, const uint8_t *, size_t) {}

struct fec_params xor_p(int k, int d) { return {FEC_MODE_XOR, (uint8_t)k, (uint8_t)d, 1}; }
struct fec_params rs_p(int k, int r) { return {FEC_MODE_RS, (uint8_t)k, 1, (uint8_t)r}; }

void run_encode(benchmark::State &st, struct fec_params p)
{
	const Frames &fr = frames();
	uint64_t covered = 0, repairs = 0;
	for (auto _ : st) {
		// a fresh encoder per pass over the frames (their PSNs start again)
		struct fec_enc *e = fec_enc_create(&p);
		for (int i = 0; i < kFrames; i++)
			fec_enc_frame(e, fr.f[i].data(), fr.f[i].size(), nop, nop, nullptr);
		covered += fec_enc_stat(e, FEC_ES_COVERED);
		repairs += fec_enc_stat(e, FEC_ES_REPAIRS);
		fec_enc_free(e);
	}
	if (covered != (uint64_t)st.iterations() * kFrames)
		st.SkipWithError("not every frame was coded");
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)fr.coded_bytes);
	st.counters["repairs_per_pass"] = (double)repairs / (double)st.iterations();
}

// A wire of kFrames data frames with the repairs; @p lose frames dropped per block.
Wire make_wire(struct fec_params p, int lose, int *dropped)
{
	const Frames &fr = frames();
	Wire w;
	struct fec_enc *e = fec_enc_create(&p);
	for (int i = 0; i < kFrames; i++) {
		Wire post; // the COMMIT before frame 0, then the repairs a frame completes
		size_t s0 = 0;
		fec_enc_frame(e, fr.f[i].data(), fr.f[i].size(), keep, keep, &post);
		if (i == 0 && !post.f.empty()) {
			w.f.push_back(post.f[0]);
			s0 = 1;
		}
		int span = p.k * p.d, o = i % span;
		if ((o / p.d) < lose) // drop the first `lose` members of each block
			(*dropped)++;
		else
			w.f.push_back(fr.f[i]);
		for (size_t x = s0; x < post.f.size(); x++)
			w.f.push_back(post.f[x]);
	}
	fec_enc_free(e);
	return w;
}

void run_decode(benchmark::State &st, struct fec_params p, int lose)
{
	const Frames &fr = frames();
	int dropped = 0;
	Wire w = make_wire(p, lose, &dropped);
	uint64_t rebuilt = 0;
	for (auto _ : st) {
		struct fec_dec *d = fec_dec_create(0);
		for (auto &f : w.f)
			fec_dec_frame(d, f.data(), f.size(), nop, nullptr, nullptr);
		rebuilt += fec_dec_stat(d, FEC_DS_REBUILT);
		fec_dec_free(d);
	}
	if (rebuilt != (uint64_t)st.iterations() * (uint64_t)dropped)
		st.SkipWithError("not every lost frame was rebuilt");
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)fr.coded_bytes);
	st.counters["rebuilt_per_iter"] = (double)dropped;
}

void BM_fec_xor_encode(benchmark::State &st) { run_encode(st, xor_p((int)st.range(0), (int)st.range(1))); }
void BM_fec_rs_encode(benchmark::State &st) { run_encode(st, rs_p((int)st.range(0), (int)st.range(1))); }
void BM_fec_xor_decode(benchmark::State &st)
{
	run_decode(st, xor_p((int)st.range(0), (int)st.range(1)), (int)st.range(2));
}
void BM_fec_rs_decode(benchmark::State &st)
{
	run_decode(st, rs_p((int)st.range(0), (int)st.range(1)), (int)st.range(2));
}

// ISA-L's raw routines over K buffers of one frame's coded size.
constexpr int kLen = 1088; // 1024 + headers, a multiple of 32 as xor_gen wants

void BM_isal_xor_gen(benchmark::State &st)
{
	int k = (int)st.range(0);
	std::vector<uint8_t *> v(k + 1);
	for (auto &p : v) {
		p = (uint8_t *)aligned_alloc(64, kLen);
		std::memset(p, 0x5a, kLen);
	}
	for (auto _ : st) {
		xor_gen(k + 1, kLen, (void **)v.data());
		benchmark::ClobberMemory();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * k * kLen);
	for (auto p : v)
		free(p);
}

void BM_isal_ec_encode(benchmark::State &st)
{
	int k = (int)st.range(0), r = (int)st.range(1);
	std::vector<uint8_t> a((k + r) * k), g(32 * k * r);
	std::vector<uint8_t *> d(k), c(r);
	gf_gen_cauchy1_matrix(a.data(), k + r, k);
	ec_init_tables(k, r, a.data() + k * k, g.data());
	for (auto &p : d) {
		p = (uint8_t *)aligned_alloc(64, kLen);
		std::memset(p, 0x5a, kLen);
	}
	for (auto &p : c)
		p = (uint8_t *)aligned_alloc(64, kLen);
	for (auto _ : st) {
		ec_encode_data(kLen, k, r, g.data(), d.data(), c.data());
		benchmark::ClobberMemory();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * k * kLen);
	for (auto p : d)
		free(p);
	for (auto p : c)
		free(p);
}

// Raw decode: r lost of k, recovered from k survivors (rows of the inverted matrix).
void BM_isal_ec_decode(benchmark::State &st)
{
	int k = (int)st.range(0), r = (int)st.range(1);
	std::vector<uint8_t> a((k + r) * k), b(k * k), inv(k * k), dm(r * k), g(32 * k * r);
	std::vector<uint8_t *> src(k), out(r);
	gf_gen_cauchy1_matrix(a.data(), k + r, k);
	// lose data 0..r-1: survivors are data r..k-1 and the r parity rows
	for (int i = 0; i < k; i++)
		std::memcpy(b.data() + i * k, a.data() + (i + r) * k, k);
	gf_invert_matrix(b.data(), inv.data(), k);
	for (int x = 0; x < r; x++)
		std::memcpy(dm.data() + x * k, inv.data() + x * k, k);
	ec_init_tables(k, r, dm.data(), g.data());
	for (auto &p : src) {
		p = (uint8_t *)aligned_alloc(64, kLen);
		std::memset(p, 0x5a, kLen);
	}
	for (auto &p : out)
		p = (uint8_t *)aligned_alloc(64, kLen);
	for (auto _ : st) {
		ec_encode_data(kLen, k, r, g.data(), src.data(), out.data());
		benchmark::ClobberMemory();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * k * kLen);
	for (auto p : src)
		free(p);
	for (auto p : out)
		free(p);
}

} // namespace

// XOR: K x D, the default xor:32,4 included
BENCHMARK(BM_fec_xor_encode)->Args({8, 1})->Args({32, 1})->Args({8, 4})->Args({32, 4});
BENCHMARK(BM_isal_xor_gen)->Arg(8)->Arg(32);
BENCHMARK(BM_fec_rs_encode)
	->Args({8, 1})->Args({8, 2})->Args({8, 4})->Args({32, 1})->Args({32, 2})->Args({32, 4});
BENCHMARK(BM_isal_ec_encode)
	->Args({8, 1})->Args({8, 2})->Args({8, 4})->Args({32, 1})->Args({32, 2})->Args({32, 4});
// decode: K, D or R, frames lost per block (0 = the no-loss path; XOR 1; RS R)
BENCHMARK(BM_fec_xor_decode)
	->Args({8, 1, 0})->Args({8, 1, 1})->Args({32, 4, 0})->Args({32, 4, 1});
BENCHMARK(BM_fec_rs_decode)
	->Args({8, 1, 1})->Args({8, 2, 2})->Args({8, 4, 4})->Args({32, 1, 1})->Args({32, 2, 2})
	->Args({32, 4, 4});
BENCHMARK(BM_isal_ec_decode)
	->Args({8, 1})->Args({8, 2})->Args({8, 4})->Args({32, 1})->Args({32, 2})->Args({32, 4});

BENCHMARK_MAIN();
