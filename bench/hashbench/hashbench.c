// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which hash for bpfstash's content hash?  Times, natively on the host,
 * the kernel's own generic C code of the two library hashes 6.12 offers
 * without the crypto API (lib/crypto/sha256.c and lib/crypto/blake2s*.c,
 * compiled here from the prepared tree with a small shim), and OpenSSL's
 * SHA-256 (SHA-NI where the CPU has it) and BLAKE2s as the arch-accelerated
 * reference, over the sizes that matter: a 16-byte image, a typical 4 KB
 * program, a 90 KB unrolled one.  Prints ns/byte, ns per hash, and ratios.
 *
 *   make -C bench hashbench && build/bench/hashbench
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/evp.h>

#include <crypto/sha2.h>
#include <crypto/blake2s.h>

bool hashbench_no_selftest(void) { return true; }

void sha256(const u8 *data, unsigned int len, u8 *out);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static u8 sink[64];

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

int main(void)
{
	static const struct algo algos[] = {
		{ "kernel sha256() (generic C)", k_sha256 },
		{ "kernel blake2s() (generic C)", k_blake2s },
		{ "OpenSSL SHA-256 (SHA-NI/AVX)", o_sha256 },
		{ "OpenSSL BLAKE2s", o_blake2s },
	};
	static const size_t sizes[] = { 16, 256, 4096, 92160 };
	double t[4][4];
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
	}
	printf("%-32s", "ns per hash (best of 7)");
	for (s = 0; s < 4; s++)
		printf(" %10zu B", sizes[s]);
	printf("   ns/B @4K\n");
	for (a = 0; a < 4; a++) {
		printf("%-32s", algos[a].name);
		for (s = 0; s < 4; s++) {
			t[a][s] = time_one(&algos[a], buf, sizes[s]);
			printf(" %12.0f", t[a][s]);
		}
		printf("   %8.2f\n", t[a][2] / 4096);
	}
	printf("\nkernel generic C, sha256/blake2s time ratio:");
	for (s = 0; s < 4; s++)
		printf("  %zu B: %.2fx", sizes[s], t[0][s] / t[1][s]);
	printf("\n");
	free(buf);
	return 0;
}
