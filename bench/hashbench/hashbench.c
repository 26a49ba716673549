// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which hash for bpfstash's content hash?  Times, natively on the host,
 * the kernel's own generic C code of the two library hashes 6.12 offers
 * without the crypto API (lib/crypto/sha256.c and lib/crypto/blake2s*.c,
 * compiled here from the prepared tree with a small shim), and OpenSSL's
 * SHA-256 (SHA-NI where the CPU has it) and BLAKE2s as the arch-accelerated
 * reference, and the kernel's x86 BLAKE2s (arch/x86/crypto/blake2s-core.S,
 * SSSE3 and AVX-512, what the stash runs with CRYPTO_BLAKE2S_X86), over the
 * sizes that matter: a 16-byte image, a typical 4 KB program, a 90 KB
 * unrolled one.  It also times the crypto API's x86 SHA-256 block functions
 * (arch/x86/crypto/sha256_ni_asm.S and sha256-avx2-asm.S, driven by
 * crypto/sha256_base.h as sha256_ssse3_glue.c drives them).  Prints ns/byte,
 * ns per hash, and ratios.
 *
 *   make -C bench hashbench && build/bench/hashbench
 *   build/bench/hashbench --calls large:20252,49328,24664,32,2541,424
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/evp.h>

#include <crypto/sha2.h>
#include <crypto/sha256_base.h>
#include <crypto/blake2s.h>

bool hashbench_no_selftest(void) { return true; }

void sha256(const u8 *data, unsigned int len, u8 *out);

/* CPUID leaf 7, EBX bit 29 (gcc 12 has no __builtin_cpu_supports("sha")). */
static int have_sha_ni(void)
{
	unsigned int a = 7, b, c = 0, d;

	__asm__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	return (b >> 29) & 1;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * The arch compression functions of arch/x86/crypto/blake2s-core.S, driven
 * by a second copy of lib/crypto/blake2s.c (hb_arch_*), as the kernel's
 * blake2s-glue.c drives them when CRYPTO_BLAKE2S_X86 is on.
 */
void blake2s_compress_ssse3(struct blake2s_state *state, const u8 *block,
			    size_t nblocks, u32 inc);
void blake2s_compress_avx512(struct blake2s_state *state, const u8 *block,
			     size_t nblocks, u32 inc);
void hb_arch_update(struct blake2s_state *state, const u8 *in, size_t inlen);
void hb_arch_final(struct blake2s_state *state, u8 *out);
static int use_avx512;

void hb_arch_compress(struct blake2s_state *state, const u8 *block,
		      size_t nblocks, u32 inc)
{
	if (use_avx512)
		blake2s_compress_avx512(state, block, nblocks, inc);
	else
		blake2s_compress_ssse3(state, block, nblocks, inc);
}

static u8 sink[64];

/*
 * The x86 SHA-256 block functions of the crypto API (arch/x86/crypto/
 * sha256_ni_asm.S, sha256-avx2-asm.S), driven by sha256_base.h as
 * sha256_ssse3_glue.c drives them: what crypto_alloc_shash("sha256")
 * gives the stash on a CPU with SHA-NI, and on one with AVX2 only.
 */
void sha256_ni_transform(struct sha256_state *digest, const u8 *data, int rounds);
void sha256_transform_rorx(struct sha256_state *state, const u8 *data, int blocks);

static void arch_sha256(const u8 *d, size_t n, sha256_block_fn *fn)
{
	struct shash_desc desc;

	sha256_base_init(&desc);
	sha256_base_do_update(&desc, d, n, fn);
	sha256_base_do_finalize(&desc, fn);
	sha256_base_finish(&desc, sink);
}
static void k_sha256_ni(const u8 *d, size_t n) { arch_sha256(d, n, sha256_ni_transform); }
static void k_sha256_avx2(const u8 *d, size_t n) { arch_sha256(d, n, sha256_transform_rorx); }

static void arch_blake2s(const u8 *d, size_t n)
{
	struct blake2s_state st;

	blake2s_init(&st, 32);
	hb_arch_update(&st, d, n);
	hb_arch_final(&st, sink);
}
static void k_blake2s_ssse3(const u8 *d, size_t n) { use_avx512 = 0; arch_blake2s(d, n); }
static void k_blake2s_avx512(const u8 *d, size_t n) { use_avx512 = 1; arch_blake2s(d, n); }

static void k_sha256(const u8 *d, size_t n) { sha256(d, n, sink); }
static void k_blake2s(const u8 *d, size_t n) { blake2s(sink, d, NULL, 32, n, 0); }
static void o_sha256(const u8 *d, size_t n)
{
	unsigned int l = 32;

	EVP_Digest(d, n, sink, &l, EVP_sha256(), NULL);
}
static void o_blake2s(const u8 *d, size_t n)
{
	unsigned int l = 32;

	EVP_Digest(d, n, sink, &l, EVP_blake2s256(), NULL);
}

struct algo {
	const char *name;
	void (*fn)(const u8 *, size_t);
};

/* "A / B time ratio" per size, when the CPU ran both. */
static void ratio(const char *what, double t[][4], const int *ok, int a, int b,
		  const size_t *sizes)
{
	int s;

	if (!ok[a] || !ok[b])
		return;
	printf("%s time ratio:", what);
	for (s = 0; s < 4; s++)
		printf("  %zu B: %.2fx", sizes[s], t[a][s] / t[b][s]);
	printf("\n");
}

static double time_one(const struct algo *a, const u8 *buf, size_t n)
{
	double best = 1e30;
	int rep, iters = n < 256 ? 20000 : n < 8192 ? 2000 : 200, i;

	for (rep = 0; rep < 7; rep++) {
		double t0 = now_ns();

		for (i = 0; i < iters; i++)
			a->fn(buf, n);
		t0 = (now_ns() - t0) / iters;
		if (t0 < best)
			best = t0;
	}
	return best;
}

/*
 * --calls LABEL:N,N,...: the hashes one load hook computes (one per
 * blob, then the entry's name), as KUnit's benchmark of the hook prints
 * their sizes.  Prints "calls,LABEL,BYTES,SHA_NI_NS,AVX2_NS,GENERIC_NS",
 * each the best of 7 of the sum over the hashes, "-" for code this CPU
 * cannot run.
 */
static int time_calls(char **spec, int n, int have_ni, int have_avx2)
{
	static const struct algo rows[] = {
		{ "sha-ni", k_sha256_ni }, { "avx2", k_sha256_avx2 }, { "generic", k_sha256 },
	};
	size_t sizes[64], nr, max = 0, total, i;
	int k, r, rep, it;

	for (k = 0; k < n; k++) {
		char *label = spec[k], *p = strchr(label, ':'), *end;
		u8 *buf;

		if (!p) {
			fprintf(stderr, "hashbench: --calls LABEL:N,N,... (got %s)\n", label);
			return 64;
		}
		*p++ = 0;
		for (nr = 0, total = 0; *p && nr < 64; nr++, p = *end ? end + 1 : end) {
			sizes[nr] = strtoul(p, &end, 10);
			if (end == p || (*end && *end != ',')) {
				fprintf(stderr, "hashbench: bad size list for %s\n", label);
				return 64;
			}
			total += sizes[nr];
			if (sizes[nr] > max)
				max = sizes[nr];
		}
		buf = malloc(max + 1);
		for (i = 0; i <= max; i++)
			buf[i] = i * 131 + 7;
		printf("calls,%s,%zu", label, total);
		for (r = 0; r < 3; r++) {
			double best = 1e30;
			int iters = total < 4096 ? 2000 : 200;

			if ((r == 0 && !have_ni) || (r == 1 && !have_avx2)) {
				printf(",-");
				continue;
			}
			for (rep = 0; rep < 7; rep++) {
				double t0 = now_ns();

				for (it = 0; it < iters; it++)
					for (i = 0; i < nr; i++)
						rows[r].fn(buf, sizes[i]);
				t0 = (now_ns() - t0) / iters;
				if (t0 < best)
					best = t0;
			}
			printf(",%.0f", best);
		}
		printf("\n");
		free(buf);
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { SHA_C, B2S_C, SHA_SSL, B2S_SSL, SHA_AVX2, SHA_NI, B2S_SSSE3, B2S_AVX512, NR };
	static const struct algo algos[NR] = {
		[SHA_C]		= { "kernel sha256() (generic C)", k_sha256 },
		[B2S_C]		= { "kernel blake2s() (generic C)", k_blake2s },
		[SHA_SSL]	= { "OpenSSL SHA-256 (SHA-NI/AVX)", o_sha256 },
		[B2S_SSL]	= { "OpenSSL BLAKE2s", o_blake2s },
		[SHA_AVX2]	= { "kernel sha256 AVX2 (x86 asm)", k_sha256_avx2 },
		[SHA_NI]	= { "kernel sha256 SHA-NI (x86 asm)", k_sha256_ni },
		[B2S_SSSE3]	= { "kernel blake2s() SSSE3 (x86 asm)", k_blake2s_ssse3 },
		[B2S_AVX512]	= { "kernel blake2s() AVX-512 (x86 asm)", k_blake2s_avx512 },
	};
	static const size_t sizes[] = { 16, 256, 4096, 92160 };
	double t[NR][4];
	int ok[NR] = { [SHA_C] = 1, [B2S_C] = 1, [SHA_SSL] = 1, [B2S_SSL] = 1, [B2S_SSSE3] = 1 };
	u8 *buf = malloc(92160);
	size_t a, s;

	for (s = 0; s < 92160; s++)
		buf[s] = s * 131 + 7;
	/* The shimmed kernel code must compute the real thing. */
	{
		u8 k[32], o[32];
		unsigned int l = 32;

		sha256(buf, 4096, k);
		EVP_Digest(buf, 4096, o, &l, EVP_sha256(), NULL);
		if (memcmp(k, o, 32)) {
			fprintf(stderr, "hashbench: kernel sha256 disagrees with OpenSSL\n");
			return 1;
		}
		blake2s(k, buf, NULL, 32, 4096, 0);
		EVP_Digest(buf, 4096, o, &l, EVP_blake2s256(), NULL);
		if (memcmp(k, o, 32)) {
			fprintf(stderr, "hashbench: kernel blake2s disagrees with OpenSSL\n");
			return 1;
		}
		k_blake2s_ssse3(buf, 4097);
		blake2s(k, buf, NULL, 32, 4097, 0);
		if (memcmp(k, sink, 32)) {
			fprintf(stderr, "hashbench: SSSE3 blake2s disagrees with the generic one\n");
			return 1;
		}
		/* Rows the CPU cannot run are left out; so does the kernel. */
		ok[SHA_AVX2] = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
		ok[SHA_NI] = have_sha_ni();
		ok[B2S_AVX512] = __builtin_cpu_supports("avx512vl");
		sha256(buf, 4097, k);
		if (ok[SHA_AVX2] && (k_sha256_avx2(buf, 4097), memcmp(k, sink, 32))) {
			fprintf(stderr, "hashbench: AVX2 sha256 disagrees with the generic one\n");
			return 1;
		}
		if (ok[SHA_NI] && (k_sha256_ni(buf, 4097), memcmp(k, sink, 32))) {
			fprintf(stderr, "hashbench: SHA-NI sha256 disagrees with the generic one\n");
			return 1;
		}
		blake2s(k, buf, NULL, 32, 4097, 0);
		if (ok[B2S_AVX512] && (k_blake2s_avx512(buf, 4097), memcmp(k, sink, 32))) {
			fprintf(stderr, "hashbench: AVX-512 blake2s disagrees with the generic one\n");
			return 1;
		}
	}
	if (argc > 1 && !strcmp(argv[1], "--calls"))
		return time_calls(argv + 2, argc - 2, ok[SHA_NI], ok[SHA_AVX2]);
	printf("%-34s", "ns per hash (best of 7)");
	for (s = 0; s < 4; s++)
		printf(" %10zu B", sizes[s]);
	printf("   ns/B @4K\n");
	for (a = 0; a < NR; a++) {
		printf("%-34s", algos[a].name);
		if (!ok[a]) {
			printf(" (this CPU lacks the instructions)\n");
			continue;
		}
		for (s = 0; s < 4; s++) {
			t[a][s] = time_one(&algos[a], buf, sizes[s]);
			printf(" %12.0f", t[a][s]);
		}
		printf("   %8.2f\n", t[a][2] / 4096);
	}
	printf("\n");
	ratio("kernel generic C, sha256/blake2s", t, ok, SHA_C, B2S_C, sizes);
	ratio("kernel x86 asm, blake2s AVX-512 / sha256 SHA-NI", t, ok, B2S_AVX512, SHA_NI, sizes);
	ratio("kernel x86 asm, blake2s SSSE3 / sha256 SHA-NI", t, ok, B2S_SSSE3, SHA_NI, sizes);
	ratio("kernel x86 asm, sha256 AVX2 / blake2s SSSE3", t, ok, SHA_AVX2, B2S_SSSE3, sizes);
	ratio("kernel blake2s, generic C / SSSE3", t, ok, B2S_C, B2S_SSSE3, sizes);
	ratio("kernel blake2s, generic C / AVX-512", t, ok, B2S_C, B2S_AVX512, sizes);
	free(buf);
	return 0;
}
