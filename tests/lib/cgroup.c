// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

int cg_enter(const char *cg)
{
	char path[256], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_file(path, pid);
}

long long cg_value(const char *cg, const char *file, const char *key)
{
	char path[256], line[256];
	size_t n = key ? strlen(key) : 0;
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!key)
			v = atoll(line);
		else if (!strncmp(line, key, n) && line[n] == ' ')
			v = atoll(line + n + 1);
	if (f)
		fclose(f);
	return v;
}

long long cg_kmem(const char *cg)
{
	return cg_value(cg, "memory.stat", "slab_unreclaimable") +
	       cg_value(cg, "memory.stat", "slab_reclaimable") +
	       cg_value(cg, "memory.stat", "vmalloc");
}
