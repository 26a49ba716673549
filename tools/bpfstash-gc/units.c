// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash-gc: durations and sizes as people write them.
 *
 * Durations follow systemd.time(7): a sum of "<number><unit>" terms
 * ("7d", "12h", "1h 30min", "1.5h"), where a bare number is seconds and
 * "m" is a minute, "M" a month.  Sizes follow journald.conf(5): a number
 * with an optional K, M, G, T, P or E suffix, powers of 1024 ("512M",
 * "1.5G", "4096").  Either may be 0, which disables the limit.  Every
 * overflow is an error, never a wrap.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gc.h"

struct unit {
	const char *name;
	uint64_t mult;
};

/* Longest spelling first where one is a prefix of another. */
static const struct unit duration_units[] = {
	{ "nsec", 1ULL },
	{ "ns", 1ULL },
	{ "usec", 1000ULL },
	{ "us", 1000ULL },
	{ "msec", 1000000ULL },
	{ "ms", 1000000ULL },
	{ "seconds", NSEC_PER_SEC },
	{ "second", NSEC_PER_SEC },
	{ "sec", NSEC_PER_SEC },
	{ "s", NSEC_PER_SEC },
	{ "minutes", 60 * NSEC_PER_SEC },
	{ "minute", 60 * NSEC_PER_SEC },
	{ "min", 60 * NSEC_PER_SEC },
	{ "months", 2629800 * NSEC_PER_SEC },	/* 30.44 days, as systemd */
	{ "month", 2629800 * NSEC_PER_SEC },
	{ "m", 60 * NSEC_PER_SEC },
	{ "M", 2629800 * NSEC_PER_SEC },
	{ "hours", 3600 * NSEC_PER_SEC },
	{ "hour", 3600 * NSEC_PER_SEC },
	{ "hr", 3600 * NSEC_PER_SEC },
	{ "h", 3600 * NSEC_PER_SEC },
	{ "days", 86400 * NSEC_PER_SEC },
	{ "day", 86400 * NSEC_PER_SEC },
	{ "d", 86400 * NSEC_PER_SEC },
	{ "weeks", 604800 * NSEC_PER_SEC },
	{ "week", 604800 * NSEC_PER_SEC },
	{ "w", 604800 * NSEC_PER_SEC },
	{ "years", 31557600 * NSEC_PER_SEC },	/* 365.25 days */
	{ "year", 31557600 * NSEC_PER_SEC },
	{ "y", 31557600 * NSEC_PER_SEC },
	{}
};

static const struct unit size_units[] = {
	{ "KiB", 1ULL << 10 }, { "KB", 1ULL << 10 }, { "K", 1ULL << 10 }, { "k", 1ULL << 10 },
	{ "MiB", 1ULL << 20 }, { "MB", 1ULL << 20 }, { "M", 1ULL << 20 }, { "m", 1ULL << 20 },
	{ "GiB", 1ULL << 30 }, { "GB", 1ULL << 30 }, { "G", 1ULL << 30 }, { "g", 1ULL << 30 },
	{ "TiB", 1ULL << 40 }, { "TB", 1ULL << 40 }, { "T", 1ULL << 40 }, { "t", 1ULL << 40 },
	{ "PiB", 1ULL << 50 }, { "PB", 1ULL << 50 }, { "P", 1ULL << 50 }, { "p", 1ULL << 50 },
	{ "EiB", 1ULL << 60 }, { "EB", 1ULL << 60 }, { "E", 1ULL << 60 }, { "e", 1ULL << 60 },
	{ "B", 1ULL }, { "b", 1ULL },
	{}
};

static const struct unit unit_second = { "s", NSEC_PER_SEC };
static const struct unit unit_byte = { "B", 1 };

/*
 * "<digits>[.<digits>]" at *p, times @mult, added to *sum; the fraction
 * is exact to 1e-9 of the unit and truncated below that.
 */
struct number {
	uint64_t whole;
	uint64_t frac;		/* the fraction's digits, up to 9 */
	uint64_t frac_div;	/* 10^(digits kept) */
};

static int parse_number(const char **p, struct number *n)
{
	const char *s = *p;
	bool digits = false;

	*n = (struct number){ .frac_div = 1 };
	while (isdigit((unsigned char)*s)) {
		if (__builtin_mul_overflow(n->whole, 10, &n->whole) ||
		    __builtin_add_overflow(n->whole, (uint64_t)(*s - '0'), &n->whole))
			return -ERANGE;
		s++;
		digits = true;
	}
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		while (isdigit((unsigned char)*s)) {
			if (n->frac_div < NSEC_PER_SEC) {
				n->frac = n->frac * 10 + (uint64_t)(*s - '0');
				n->frac_div *= 10;
			}
			s++;
			digits = true;
		}
	}
	if (!digits)
		return -EINVAL;
	*p = s;
	return 0;
}

static int number_times(const struct number *n, uint64_t mult, uint64_t *out)
{
	uint64_t v, f;

	if (__builtin_mul_overflow(n->whole, mult, &v))
		return -ERANGE;
	/* frac < frac_div <= 1e9 and mult < 2^64: split to stay in range. */
	f = mult / n->frac_div * n->frac + mult % n->frac_div * n->frac / n->frac_div;
	if (__builtin_add_overflow(v, f, out))
		return -ERANGE;
	return 0;
}

static const struct unit *match_unit(const struct unit *units, const char **p)
{
	const struct unit *u;

	for (u = units; u->name; u++) {
		size_t len = strlen(u->name);

		if (!strncmp(*p, u->name, len) && !isalpha((unsigned char)(*p)[len])) {
			*p += len;
			return u;
		}
	}
	return NULL;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int gc_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t sum = 0, term;
	const char *p = skip_space(s);
	bool first = true;
	int err;

	if (!*p)
		return -EINVAL;
	while (*p) {
		const struct unit *u;
		struct number n;

		err = parse_number(&p, &n);
		if (err)
			return err;
		p = skip_space(p);
		u = match_unit(duration_units, &p);
		if (!u) {
			/* A bare number is seconds, alone only ("90", not "1h 30"). */
			if (*p || !first)
				return -EINVAL;
			u = &unit_second;
		}
		err = number_times(&n, u->mult, &term);
		if (err)
			return err;
		if (__builtin_add_overflow(sum, term, &sum))
			return -ERANGE;
		p = skip_space(p);
		first = false;
	}
	*ns = sum;
	return 0;
}

/* "N%" (a percentage of the mount's limit, 0..100), or -ENOENT if no '%'. */
static int parse_percent(const char *s, struct gc_limit *lim)
{
	const char *p = s;
	struct number n;
	int err;

	if (!strchr(s, '%'))
		return -ENOENT;
	err = parse_number(&p, &n);
	if (err)
		return err;
	if (strcmp(p, "%") || n.frac)
		return -EINVAL;
	if (n.whole > 100)
		return -ERANGE;
	*lim = (struct gc_limit){ .value = n.whole, .percent = n.whole != 0 };
	return 0;
}

int gc_parse_size(const char *s, struct gc_limit *lim)
{
	const struct unit *u;
	struct number n;
	const char *p = skip_space(s);
	uint64_t v;
	int err;

	err = parse_percent(p, lim);
	if (err != -ENOENT)
		return err;
	err = parse_number(&p, &n);
	if (err)
		return err;
	p = skip_space(p);
	u = *p ? match_unit(size_units, &p) : &unit_byte;
	if (!u || *skip_space(p))
		return -EINVAL;
	err = number_times(&n, u->mult, &v);
	if (err)
		return err;
	*lim = (struct gc_limit){ .value = v };
	return 0;
}

int gc_parse_count(const char *s, struct gc_limit *lim)
{
	const char *p = s;
	struct number n;
	int err;

	err = parse_percent(p, lim);
	if (err != -ENOENT)
		return err;
	err = parse_number(&p, &n);
	if (err)
		return err;
	if (*p || n.frac_div != 1)
		return -EINVAL;
	*lim = (struct gc_limit){ .value = n.whole };
	return 0;
}

int gc_parse_epoch(const char *s, uint64_t *ns)
{
	const char *p = s;
	struct number n;
	int err;

	if (*p == '@')
		p++;
	err = parse_number(&p, &n);
	if (err)
		return err;
	if (*p)
		return -EINVAL;
	return number_times(&n, NSEC_PER_SEC, ns);
}

const char *gc_format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char sfx[] = "KMGTPE";
	double v = bytes;
	int i = -1;

	if (bytes < 1024) {
		snprintf(buf, size, "%lluB", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	snprintf(buf, size, v < 10 ? "%.1f%c" : "%.0f%c", v, sfx[i]);
	return buf;
}

const char *gc_format_duration(uint64_t ns, char *buf, size_t size)
{
	static const struct unit units[] = {
		{ "y", 31557600 * NSEC_PER_SEC }, { "w", 604800 * NSEC_PER_SEC },
		{ "d", 86400 * NSEC_PER_SEC }, { "h", 3600 * NSEC_PER_SEC },
		{ "min", 60 * NSEC_PER_SEC }, { "s", NSEC_PER_SEC },
		{ "ms", 1000000 }, { "us", 1000 }, { "ns", 1 }, {}
	};
	const struct unit *u;

	for (u = units; u->mult > 1 && ns < u->mult; u++)
		;
	if (ns % u->mult == 0 || u->mult == 1)
		snprintf(buf, size, "%llu%s", (unsigned long long)(ns / u->mult), u->name);
	else
		snprintf(buf, size, "%.1f%s", (double)ns / u->mult, u->name);
	return buf;
}
