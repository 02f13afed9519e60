/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * flashsim: a FUSE file system whose one file behaves like a flash device
 * with read/write interference (see README.md and --help).
 *
 * One thread does everything: it polls the non-blocking /dev/fuse fd, a
 * timerfd armed for the earliest due reply and a signalfd. Replies are kept
 * in a min-heap keyed by the due time the model computed from the arrival
 * time, so a late wake-up never shifts later requests. A thread per
 * sleeping request would cap concurrency, and a multi-threaded libfuse loop
 * was measured slower (testbed.md).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "flashsim.h"

/* Requests taken from /dev/fuse before the loop polls again. */
#define RECEIVE_BATCH 64

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

/* ---------------------------------------------------------------- replies */

static void send_reply(struct flashsim *fs, fuse_req_t req, enum model_op op,
		       uint64_t off, size_t len, uint64_t due)
{
	int r;

	stats_replied(&fs->stats, due, now_ns());
	switch (op) {
	case MODEL_READ:
		/* Data as of reply time: what a device returns at completion. */
		r = fuse_reply_buf(req, (const char *) fs->data + off, len);
		break;
	case MODEL_WRITE:
		r = fuse_reply_write(req, len);
		break;
	default:
		r = fuse_reply_err(req, 0);
		break;
	}
	/* -ENOENT: the kernel gave up on the request (interrupt, abort). */
	if (r < 0 && r != -ENOENT)
		log_error("Failed to reply to %s request: %s", model_op_to_string(op),
			  strerror(-r));
}

void flashsim_submit(struct flashsim *fs, fuse_req_t req, enum model_op op,
		     uint64_t off, size_t len)
{
	uint64_t now = now_ns(), due;
	struct pending *p;

	due = model_submit(&fs->model, op, off, len, now);
	stats_submitted(&fs->stats, op, len, due - now);

	if (due <= now) {
		send_reply(fs, req, op, off, len, due);
		return;
	}

	p = malloc(sizeof(*p));
	if (!p || heap_push(&fs->pending, due, p) < 0) {
		free(p);
		stats_error(&fs->stats, op);
		stats_replied(&fs->stats, due, due);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	*p = (struct pending) { .req = req, .op = op, .off = off, .len = len };
}

/* Sends every reply that is due; @all: also the ones that are not (exit). */
static void serve_due(struct flashsim *fs, bool all)
{
	while (!heap_empty(&fs->pending)) {
		struct heap_entry e;
		struct pending *p;

		if (!all && heap_min_key(&fs->pending) > now_ns())
			break;
		e = heap_pop(&fs->pending);
		p = e.data;
		send_reply(fs, p->req, p->op, p->off, p->len, e.key);
		free(p);
	}
}

/*
 * Waking up from poll() on a timerfd takes 30-40 us (p50) on these VMs, so
 * the timer is armed spin_ns early and the loop busy-polls the rest.
 */
static int arm_timer(struct flashsim *fs)
{
	struct itimerspec its = {};
	uint64_t due = 0;

	if (!heap_empty(&fs->pending)) {
		due = heap_min_key(&fs->pending);
		due = due > fs->cfg.spin_ns ? due - fs->cfg.spin_ns : 1;
	}

	if (due == fs->armed_ns)
		return 0;
	/* A zero it_value disarms, which is what an empty heap wants. */
	its.it_value.tv_sec = (time_t) (due / NSEC_PER_SEC);
	its.it_value.tv_nsec = (long) (due % NSEC_PER_SEC);
	if (timerfd_settime(fs->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		log_error("Failed to arm timer: %m");
		return -errno;
	}
	fs->armed_ns = due;
	return 0;
}

/* ---------------------------------------------------------------- main loop */

static void print_stats(struct flashsim *fs)
{
	stats_write_json(&fs->stats, &fs->model, now_ns(), stderr);
	fflush(stderr);
}

/* Returns 1 to go on, 0 on a request to exit. */
static int handle_signals(struct flashsim *fs)
{
	struct signalfd_siginfo si;

	while (read(fs->signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			print_stats(fs);
		} else if (si.ssi_signo == SIGUSR2) {
			model_set_storm(&fs->model, !fs->model.storm);
			fprintf(stderr, "flashsim: GC storm %s\n", fs->model.storm ? "on" : "off");
			fflush(stderr);
		} else {
			return 0;
		}
	}
	return 1;
}

/* Returns 1 to go on, 0 when the file system went away, -errno on failure. */
static int receive_requests(struct flashsim *fs, struct fuse_buf *fbuf)
{
	for (int i = 0; i < RECEIVE_BATCH; i++) {
		int r = fuse_session_receive_buf(fs->se, fbuf);

		if (r == -EAGAIN)
			return 1;
		if (r == -EINTR)
			continue;
		if (r == 0 || fuse_session_exited(fs->se))
			return 0;
		if (r < 0) {
			log_error("Failed to read from /dev/fuse: %s", strerror(-r));
			return r;
		}
		fuse_session_process_buf(fs->se, fbuf);
		/* Replies that fell due meanwhile go out before the next request. */
		serve_due(fs, false);
	}
	return 1;
}

static int run(struct flashsim *fs)
{
	struct fuse_buf fbuf = {};
	struct pollfd pfd[3];
	uint64_t expirations;
	int r = 0;

	pfd[0] = (struct pollfd) { .fd = fuse_session_fd(fs->se), .events = POLLIN };
	pfd[1] = (struct pollfd) { .fd = fs->timer_fd, .events = POLLIN };
	pfd[2] = (struct pollfd) { .fd = fs->signal_fd, .events = POLLIN };

	for (;;) {
		int timeout = -1;

		/* Close to a due reply: spin, but let any runnable task go first. */
		if (fs->cfg.spin_ns > 0 && !heap_empty(&fs->pending) &&
		    heap_min_key(&fs->pending) <= now_ns() + fs->cfg.spin_ns) {
			timeout = 0;
			sched_yield();
		}
		if (poll(pfd, 3, timeout) < 0) {
			if (errno == EINTR)
				continue;
			log_error("Failed to poll: %m");
			r = -errno;
			break;
		}
		if (pfd[2].revents && handle_signals(fs) == 0)
			break;
		if (pfd[1].revents) {
			/* Drain the expiration count; the heap says what is due. */
			(void) !read(fs->timer_fd, &expirations, sizeof(expirations));
			fs->armed_ns = 0;
		}
		serve_due(fs, false);
		if (pfd[0].revents & (POLLERR | POLLHUP | POLLNVAL))
			break;	/* unmounted or aborted */
		if (pfd[0].revents & POLLIN) {
			r = receive_requests(fs, &fbuf);
			if (r <= 0)
				break;
			r = 0;
		}
		serve_due(fs, false);
		r = arm_timer(fs);
		if (r < 0)
			break;
	}

	/* Nobody waits for the model any more: answer what is left at once. */
	serve_due(fs, true);
	free(fbuf.mem);
	return r;
}

static int setup(struct flashsim *fs)
{
	sigset_t mask;
	int r;

	r = model_init(&fs->model, &fs->cfg.model);
	if (r < 0) {
		log_error("Failed to set up the device model: %s", strerror(-r));
		return r;
	}
	heap_init(&fs->pending);

	/* Untouched pages read as zeroes without costing memory. */
	fs->data = mmap(NULL, fs->cfg.model.size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fs->data == MAP_FAILED) {
		fs->data = NULL;
		log_error("Failed to allocate %llu bytes for the disk: %m",
			  (unsigned long long) fs->cfg.model.size);
		return -errno;
	}

	/* timerfd ignores timer slack, but poll() timeouts would not. */
	(void) prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

	if (fs->cfg.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(fs->cfg.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			log_error("Failed to pin to CPU %d: %m", fs->cfg.cpu);
			return -errno;
		}
	}

	fs->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fs->timer_fd < 0) {
		log_error("Failed to create timerfd: %m");
		return -errno;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
		log_error("Failed to block signals: %m");
		return -errno;
	}
	fs->signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fs->signal_fd < 0) {
		log_error("Failed to create signalfd: %m");
		return -errno;
	}
	/* A reply to a dead connection must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int mount_fs(struct flashsim *fs, char *argv0)
{
	char *fuse_argv[] = { argv0, (char *) "-o",
			      (char *) "fsname=flashsim,subtype=flashsim",
			      (char *) "-d", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(fs->cfg.fuse_debug ? 4 : 3, fuse_argv);
	int fd, flags;

	fs->se = fuse_session_new(&args, &flashsim_ops, sizeof(flashsim_ops), fs);
	fuse_opt_free_args(&args);
	if (!fs->se) {
		log_error("Failed to create FUSE session.");
		return -EINVAL;
	}
	if (fuse_session_mount(fs->se, fs->cfg.mountpoint) != 0) {
		log_error("Failed to mount on %s.", fs->cfg.mountpoint);
		fuse_session_destroy(fs->se);
		fs->se = NULL;
		return -EIO;
	}

	/* The loop must never block in read(): timers are due meanwhile. */
	fd = fuse_session_fd(fs->se);
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		log_error("Failed to make /dev/fuse non-blocking: %m");
		return -errno;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	struct flashsim fs = { .timer_fd = -1, .signal_fd = -1 };
	int r;

	r = flashsim_parse_argv(argc, argv, &fs.cfg);
	if (r <= 0)
		return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

	fs.stats.started_ns = now_ns();
	fs.mounted_at = time(NULL);
	r = setup(&fs);
	if (r >= 0)
		r = mount_fs(&fs, argv[0]);
	if (r >= 0)
		r = run(&fs);

	if (fs.se) {
		fuse_session_unmount(fs.se);
		fuse_session_destroy(fs.se);
	}
	if (fs.signal_fd >= 0)
		close(fs.signal_fd);
	if (fs.timer_fd >= 0)
		close(fs.timer_fd);
	if (fs.data)
		munmap(fs.data, fs.cfg.model.size);
	heap_free(&fs.pending);
	model_free(&fs.model);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
