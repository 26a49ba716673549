// SPDX-License-Identifier: GPL-2.0-only
/* The runner behind tests/lib/test.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "test.h"

const char *test__suite;
const char *test__name;
int test__failed;
char test__skip_reason[256];
static char first_failure[512];

void test__fail(const char *file, int line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "  %s.%s: %s:%d: %s\n", test__suite, test__name,
		file, line, msg);
	if (!test__failed)
		snprintf(first_failure, sizeof(first_failure), "%s:%d: %s",
			 file, line, msg);
	test__failed++;
}

void test__skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(test__skip_reason, sizeof(test__skip_reason), fmt, ap);
	va_end(ap);
}

void test__note(const char *fmt, ...)
{
	va_list ap;

	printf("  %s.%s: ", test__suite, test__name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Run every test of the table, or those named on the command line.
 * Exit status: 0 when nothing failed.
 */
int test_main(const char *suite, const struct test *tests, int argc, char **argv)
{
	int failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	test__suite = suite;
	for (const struct test *t = tests; t->name; t++) {
		double start;
		bool wanted = argc < 2;

		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], t->name))
				wanted = true;
		if (!wanted)
			continue;

		test__name = t->name;
		test__failed = 0;
		test__skip_reason[0] = 0;
		first_failure[0] = 0;
		start = now();
		t->fn();
		fflush(stderr);
		if (test__failed) {
			printf("FAIL %s.%s: %s\n", suite, t->name, first_failure);
			failed++;
		} else if (test__skip_reason[0]) {
			printf("SKIP %s.%s: %s\n", suite, t->name, test__skip_reason);
		} else {
			printf("PASS %s.%s (%.2fs)\n", suite, t->name, now() - start);
		}
	}
	return failed ? 1 : 0;
}
