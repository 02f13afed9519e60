/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An experiment, not part of any build or test: how far loading the
 * kernel's BTF with the system's libbpf raises a process's peak memory
 * (VmHWM), the part of kyber-tuned's peak RSS that the observer's load
 * sets (docs/observer.md).
 *
 *   cc -O2 -Wall -o /tmp/btf-peak tools/experiments/btf-peak.c -lbpf && /tmp/btf-peak
 */
#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* VmHWM in KiB, or -1. */
static long peak_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

int main(void)
{
	long before = peak_kib();
	struct btf *btf = btf__load_vmlinux_btf();

	if (!btf) {
		fprintf(stderr, "Failed to load the kernel's BTF: %s\n", strerror(errno));
		return 1;
	}
	btf__free(btf);
	printf("VmHWM %ld KiB before, %ld KiB after loading and freeing the kernel's BTF\n",
	       before, peak_kib());
	return 0;
}
