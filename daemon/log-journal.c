/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The journal as the log sink: under systemd, stderr is a stream to
 * journald (JOURNAL_STREAM names it); messages then go over the native
 * protocol instead, with their priority, code location, errno and the
 * device and event they are about as fields:
 *   journalctl -u kyber-tuned KYBER_DEVICE=nvme0n1
 *   journalctl MESSAGE_ID=091c90aed03643d7b2931618a9dcd061   (targets changed)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* The location sent is the caller's (struct log_meta), not this file's. */
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>

#include "log-journal.h"

static const char *identifier = "kyber-tuned";

#define FIELD_MAX 32

static void add(struct iovec *iov, size_t *n, char *buf, size_t size, const char *fmt, ...)
	_printf_(5, 6);
static void add(struct iovec *iov, size_t *n, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (len < 0 || *n >= FIELD_MAX)
		return;
	iov[*n].iov_base = buf;
	iov[*n].iov_len = (size_t)len < size ? (size_t)len : size - 1;
	(*n)++;
}

static void journal_sink(int level, int error, const struct log_meta *meta, const char *message)
{
	char msg[2200], prio[16], ident[64], file[256], line[32], func[128], err[32], dev[96], id[64];
	struct iovec iov[FIELD_MAX];
	size_t n = 0;

	if (meta && meta->device)
		add(iov, &n, msg, sizeof(msg), "MESSAGE=%s: %s", meta->device, message);
	else
		add(iov, &n, msg, sizeof(msg), "MESSAGE=%s", message);
	add(iov, &n, prio, sizeof(prio), "PRIORITY=%d", level);
	add(iov, &n, ident, sizeof(ident), "SYSLOG_IDENTIFIER=%s", identifier);
	if (meta && meta->file) {
		add(iov, &n, file, sizeof(file), "CODE_FILE=%s", meta->file);
		add(iov, &n, line, sizeof(line), "CODE_LINE=%d", meta->line);
		add(iov, &n, func, sizeof(func), "CODE_FUNC=%s", meta->func);
	}
	if (error)
		add(iov, &n, err, sizeof(err), "ERRNO=%d", error);
	if (meta && meta->device)
		add(iov, &n, dev, sizeof(dev), "KYBER_DEVICE=%s", meta->device);
	if (meta && meta->message_id)
		add(iov, &n, id, sizeof(id), "MESSAGE_ID=%s", meta->message_id);
	for (const char *const *f = meta ? meta->fields : NULL; f && *f && n < FIELD_MAX; f++) {
		iov[n].iov_base = (void *)*f;
		iov[n].iov_len = strlen(*f);
		n++;
	}
	if (sd_journal_sendv(iov, (int)n) < 0)
		/* journald gone: the stream may still take it */
		fprintf(stderr, "%s\n", msg + strlen("MESSAGE="));
}

int log_open_journal(const char *ident)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* Only when stderr still is the stream systemd connected: a shell
	 * started from the unit inherits the variable but not the stream. */
	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) < 0 || st.st_dev != (dev_t)dev || st.st_ino != (ino_t)ino)
		return 0;
	identifier = ident;
	log_set_sink(journal_sink);
	return 1;
}
