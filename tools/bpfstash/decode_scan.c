// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding BPF frames and times in text: see decode.h.  Every index is
 * checked against the length: lines may hold anything, NULs included.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>

#include "decode.h"

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_sym(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
	       c == '.';
}

static unsigned int hexval(char c)
{
	if (is_digit(c))
		return c - '0';
	return (c | 0x20) - 'a' + 10;
}

/* A number at @p (0x hex, or decimal; @hex: hex without 0x too); bytes used, 0 if none. */
static size_t number(const char *p, size_t len, bool hex, uint64_t *v)
{
	size_t i = 0, start;

	*v = 0;
	if (len >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		hex = true;
		i = 2;
	}
	start = i;
	for (; i < len && (hex ? is_hex(p[i]) : is_digit(p[i])); i++) {
		if (i - start >= (hex ? 16 : 19))
			return 0;	/* does not fit */
		*v = *v * (hex ? 16 : 10) + (hex ? hexval(p[i]) : (unsigned int)(p[i] - '0'));
	}
	return i > start ? i : 0;
}

/* "bpf_prog_" 16 hex "_" name, then "+off[/size]". */
static bool scan_symbol(const char *line, size_t len, struct decode_frame *f)
{
	static const char pfx[] = "bpf_prog_";
	size_t i, j, n;

	for (i = 0; i + sizeof(pfx) - 1 + 17 <= len; i++) {
		if (memcmp(line + i, pfx, sizeof(pfx) - 1) || (i && is_sym(line[i - 1])))
			continue;
		j = i + sizeof(pfx) - 1;
		for (n = 0; n < 16 && is_hex(line[j + n]); n++)
			;
		if (n != 16 || line[j + 16] != '_')
			continue;
		j += 17;
		while (j < len && is_sym(line[j]))
			j++;
		if (j - i >= DECODE_SYM_MAX || j >= len || line[j] != '+')
			continue;
		n = number(line + j + 1, len - j - 1, false, &f->off);
		if (!n)
			continue;
		memcpy(f->symbol, line + i, j - i);
		f->symbol[j - i] = '\0';
		j += 1 + n;
		f->size = 0;
		if (j < len && line[j] == '/' &&
		    !number(line + j + 1, len - j - 1, false, &f->size))
			f->size = 0;
		f->has_symbol = true;
		return true;
	}
	return false;
}

/*
 * Any "sym+off", off decimal or 0x hex, ending the word (a "/size" may
 * follow): what bpftrace's kstack prints (decimal), and oops and dmesg
 * ("sym+0x1f/0x30").
 */
static bool scan_ksym(const char *line, size_t len, struct decode_frame *f)
{
	size_t i, j, n;

	for (i = 0; i < len; i = j + 1) {
		for (; i < len && (!is_sym(line[i]) || is_digit(line[i]) ||
				   (i && is_sym(line[i - 1]))); i++)
			;
		for (j = i; j < len && is_sym(line[j]); j++)
			;
		if (j == i || j >= len || line[j] != '+' || j - i >= DECODE_SYM_MAX)
			continue;
		n = number(line + j + 1, len - j - 1, false, &f->ksym_off);
		if (!n || (j + 1 + n < len && (is_sym(line[j + 1 + n]) || line[j + 1 + n] == '+')))
			continue;
		memcpy(f->ksym, line + i, j - i);
		f->ksym[j - i] = '\0';
		f->has_ksym = true;
		return true;
	}
	return false;
}

/* A kernel address: 16 hex digits "ffff...", 0x optional, alone as a word. */
static bool scan_addr(const char *line, size_t len, struct decode_frame *f)
{
	size_t i, n;

	for (i = 0; i + 16 <= len; i++) {
		if (i && (is_sym(line[i - 1])))
			continue;
		if (i + 18 <= len && line[i] == '0' && line[i + 1] == 'x')
			i += 2;
		for (n = 0; n < 16 && i + n < len && is_hex(line[i + n]); n++)
			;
		if (n == 16 && (i + 16 == len || !is_sym(line[i + 16])) &&
		    !strncasecmp(line + i, "ffff", 4)) {
			number(line + i, 16, true, &f->addr);
			f->has_addr = true;
			return true;
		}
		i += n;
	}
	return false;
}

int decode_parse_time(const char *s, size_t len, struct bpfstash_resolve_opts *o)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000ull;
	size_t i = 0, n, digits = 0;
	bool real = false, iso = false;

	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	if (len && s[0] == '@') {
		real = true;
		i = 1;
	} else if (len >= 10 && s[4] == '-' && s[7] == '-') {
		struct tm tm = {};
		char buf[32];
		const char *end;
		time_t t;

		n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (n > 10 && buf[10] == ' ')
			buf[10] = 'T';
		end = strptime(buf, n > 10 ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d", &tm);
		if (!end)
			return -EINVAL;
		t = timegm(&tm);
		if (t < 0)
			return -EINVAL;
		sec = t;
		i = end - buf;
		real = iso = true;
	}
	if (!iso) {
		n = number(s + i, len - i, false, &sec);
		if (!n || (s[i] == '0' && i + 1 < len && s[i + 1] == 'x'))
			return -EINVAL;
		i += n;
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && is_digit(s[i]); i++) {
			if (digits < 9) {
				scale /= 10;
				frac += (s[i] - '0') * scale;
			}
			digits++;
		}
	}
	if (iso && i < len && s[i] == 'Z')
		i++;
	if (i != len)
		return -EINVAL;
	if (sec > UINT64_MAX / 1000000000ull - 1)
		return -EINVAL;
	o->clock = real ? BPFSTASH_CLOCK_REALTIME : BPFSTASH_CLOCK_BOOTTIME;
	o->time_ns = sec * 1000000000ull + frac;
	o->span_ns = digits >= 9 ? 0 : scale - 1;
	return 0;
}

/* "[  123.456789]" at the start, after an optional "<N>" syslog level. */
static void scan_time(const char *line, size_t len, struct decode_frame *f)
{
	size_t i = 0, start;

	if (len && line[0] == '<') {
		while (i < len && i < 8 && line[i] != '>')
			i++;
		i++;
	}
	if (i >= len || line[i] != '[')
		return;
	for (i++; i < len && line[i] == ' '; i++)
		;
	start = i;
	while (i < len && (is_digit(line[i]) || line[i] == '.'))
		i++;
	if (i >= len || line[i] != ']' || i == start)
		return;
	f->has_time = !decode_parse_time(line + start, i - start, &f->when);
}

/*
 * An entry's hash after "bpfstash/", as perf script prints the DSO of a
 * sample in a stashed program: (/sys/fs/bpfstash/HASH).
 */
static void scan_hash(const char *line, size_t len, struct decode_frame *f)
{
	static const char pfx[] = "bpfstash/";
	size_t i, j, n;

	for (i = 0; i + sizeof(pfx) - 1 + BPFSTASH_HEX_LEN <= len; i++) {
		if (memcmp(line + i, pfx, sizeof(pfx) - 1))
			continue;
		j = i + sizeof(pfx) - 1;
		for (n = 0; n < BPFSTASH_HEX_LEN && (is_digit(line[j + n]) ||
						      (line[j + n] >= 'a' && line[j + n] <= 'f')); n++)
			;
		if (n != BPFSTASH_HEX_LEN || (j + n < len && is_hex(line[j + n])))
			continue;
		memcpy(f->hash, line + j, BPFSTASH_HEX_LEN);
		f->hash[BPFSTASH_HEX_LEN] = '\0';
		f->has_hash = true;
		return;
	}
}

bool decode_scan(const char *line, size_t len, struct decode_frame *f)
{
	memset(f, 0, sizeof(*f));
	if (len > DECODE_LINE_MAX)
		return false;
	scan_time(line, len, f);
	scan_symbol(line, len, f);
	scan_addr(line, len, f);
	scan_hash(line, len, f);
	if (!f->has_symbol && !f->has_addr)
		scan_ksym(line, len, f);
	return f->has_symbol || f->has_addr || f->has_ksym;
}
