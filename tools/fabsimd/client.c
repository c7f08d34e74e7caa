/* SPDX-License-Identifier: BSD-2-Clause
 * fabsimd's client side: attach (starting the coordinator on demand),
 * notices, detach, status, stop, start.
 *
 * Starting is serialised by the fabric's lock file: whoever holds it and
 * finds no coordinator answering removes the stale socket and segments,
 * binds the new listening socket itself (so that connect() works as soon
 * as the lock is released), and fork()s the coordinator off: the child
 * calls setsid() and forks again, the grandchild runs the coordinator's
 * loop (daemon.c), the child exits at once and is reaped here. No exec:
 * a library does not know where a binary would be. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabsimd_int.h"

#define LOCK_TIMEOUT_MS 10000
#define REPLY_TIMEOUT_MS 5000
#define IDLE_TIMEOUT_MS 10000

struct fabsimd_session {
	int fd;
	uint32_t node;
	pid_t coordinator;
	bool started; /* this process started its coordinator */
	bool lost;
	char fabric[FABSIMD_FABRIC_MAX + 1];
};

static void unlock(int lock)
{
	if (lock >= 0) {
		flock(lock, LOCK_UN);
		close(lock);
	}
}

/* A connection to the coordinator, or -errno (-ENOENT, -ECONNREFUSED:
 * none runs). */
static int connect_to(const struct fabsimd_paths *p)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int dirfd, fd, rc;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = fabsimd_sockaddr(p->sock, &sa, &salen, &dirfd);
	if (rc) {
		close(fd);
		return rc;
	}
	rc = connect(fd, (struct sockaddr *)&sa, salen) ? -errno : 0;
	if (dirfd >= 0)
		close(dirfd);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

static int send_request(int fd, const struct fabsimd_msg *m)
{
	ssize_t n;

	do
		n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*m) ? 0 : n < 0 ? -errno : -EIO;
}

/* Waits for one reply of `type` into buf (at most len bytes): its length,
 * -ETIMEDOUT, -ECONNRESET when the coordinator closed the connection,
 * -EPROTO for a malformed reply. */
static ssize_t await_reply(int fd, int type, void *buf, size_t len)
{
	uint64_t deadline = fabsimd_now_ms() + REPLY_TIMEOUT_MS;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = fabsimd_now_ms();
		ssize_t n;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(deadline - now)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!pfd.revents)
			continue;
		n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return errno == ECONNRESET ? -ECONNRESET : -errno;
		if (n == 0)
			return -ECONNRESET;
		if (!fabsimd_msg_valid(buf, n))
			return -EPROTO;
		if (((struct fabsimd_msg *)buf)->type == type)
			return n;
		/* A notice sent before the reply: not for this caller. */
	}
}

static int idle_timeout_ms(void)
{
	const char *v = getenv("FABSIM_IDLE_TIMEOUT_MS");
	char *end;
	long ms;

	if (!v || !*v)
		return IDLE_TIMEOUT_MS;
	ms = strtol(v, &end, 10);
	return *end || ms <= 0 || ms > 3600000 ? IDLE_TIMEOUT_MS : (int)ms;
}

/* Fabric `other`'s memory, if a crashed run of it left it: under its lock
 * (not waited for: one who holds it is starting or ending it), with no
 * coordinator answering and no process mapping it (nor any whose map
 * cannot be read). Its socket and lock file go with it; its log stays. */
static void remove_if_left(const char *other, void *arg)
{
	const struct fabsimd_paths *self = arg;
	struct fabsimd_paths q;
	struct stat st;
	bool keep_lock_file;
	pid_t user;
	int lock, fd;

	if (!strcmp(other, self->fabric) ||
	    fabsimd_paths_init(&q, other, NULL, 0))
		return;
	keep_lock_file = !lstat(q.lock, &st); /* taking it makes one */
	lock = fabsimd_lock(&q, 0, false, NULL, 0);
	if (lock < 0)
		return;
	fd = connect_to(&q);
	if (fd >= 0)
		close(fd);
	/* No coordinator at all: not one that answers, nor a failure that
	 * tells nothing (out of descriptors). */
	if (fd == -ENOENT || fd == -ECONNREFUSED) {
		if (fabsimd_remove_unused_segments(&q, 0, &user) > 0)
			fabsimd_log_path(self, "removed the shared memory %s "
					 "of fabric %s: its coordinator is "
					 "gone and no process runs on it (a "
					 "crashed run)", q.segment, other);
		if (!user) {
			unlink(q.sock);
			keep_lock_file = false;
		}
	}
	if (!keep_lock_file)
		unlink(q.lock);
	unlock(lock);
}

/* Memory of a fabric whose runtime directory is gone (a test's temporary
 * one, deleted after its run crashed): nothing can start or join that
 * fabric again, since its lock and socket went with the directory (one
 * made again at the same path is a new directory, whose first fabric
 * would otherwise attach this stale memory). Kept while a process this
 * one can see maps it: it still runs there, and the last to leave removes
 * it. */
static void remove_if_dir_gone(const char *segment, const char *dir,
			       void *arg)
{
	const struct fabsimd_paths *self = arg;
	struct fabsimd_paths q;
	struct stat st;
	pid_t user;

	if (!lstat(dir, &st) || (errno != ENOENT && errno != ENOTDIR))
		return;
	memset(&q, 0, sizeof(q));
	snprintf(q.segment, sizeof(q.segment), "%s", segment);
	if (fabsimd_remove_unused_segments(&q, 0, &user) > 0)
		fabsimd_log_path(self, "removed the shared memory %s of a "
				 "crashed run in %s, a directory that no "
				 "longer exists", segment, dir);
}

/* What crashed runs of the directory's other fabrics left in /dev/shm:
 * only the next start of the same fabric here would remove it, and a
 * test's or a temporary fabric never starts again; nor would anything of
 * a directory that is gone. Done by one who has just started a
 * coordinator, once it holds no lock: the look reads every process's map
 * for each fabric left without a coordinator. */
static void remove_other_fabrics_left(const struct fabsimd_paths *p)
{
	fabsimd_fabrics_in_memory(remove_if_left, (void *)p);
	fabsimd_memory_of_other_dirs(remove_if_dir_gone, (void *)p);
}

/* With the lock held and no coordinator answering: cleans up what a dead
 * one left and starts a new one. */
static int spawn(const struct fabsimd_paths *p, bool persistent,
		 pid_t *pid_out, char *err, size_t errlen)
{
	struct fabsimd_daemon_config cfg;
	struct sockaddr_un sa;
	socklen_t salen;
	struct stat st;
	int fd, dirfd, rc, pipefd[2], wstatus;
	pid_t child, daemon = -1;
	ssize_t n;

	if (!lstat(p->sock, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			fabsimd_seterr(err, errlen, "%s exists and is not a "
				       "socket; remove it", p->sock);
			return -EEXIST;
		}
		if (unlink(p->sock) && errno != ENOENT) {
			rc = -errno;
			fabsimd_seterr(err, errlen, "cannot remove the stale "
				       "socket %s: %s", p->sock, strerror(-rc));
			return rc;
		}
		fabsimd_log_path(p, "removed the stale socket %s (its "
				 "coordinator is gone)", p->sock);
	}
	/* Processes may still run on the fabric's memory: its coordinator
	 * was killed, they were not. The new one serves that fabric, which
	 * newcomers join; removing it would split the fabric in two. */
	pid_t user;

	rc = fabsimd_remove_unused_segments(p, 0, &user);
	if (user > 0)
		fabsimd_log_path(p, "kept the shared memory %s: process %d "
				 "still runs on it (its coordinator ended "
				 "without cleaning up)", p->segment, (int)user);
	else if (user < 0)
		fabsimd_log_path(p, "kept the shared memory %s: some process's "
				 "memory map could not be read, and it may run "
				 "on it", p->segment);
	else if (rc > 0)
		fabsimd_log_path(p, "removed %d stale shared-memory segment%s "
				 "%s", rc, rc == 1 ? "" : "s", p->segment);

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		fabsimd_seterr(err, errlen, "socket(AF_UNIX): %s",
			       strerror(-rc));
		return rc;
	}
	rc = fabsimd_sockaddr(p->sock, &sa, &salen, &dirfd);
	if (!rc) {
		if (bind(fd, (struct sockaddr *)&sa, salen) ||
		    listen(fd, 128))
			rc = -errno;
		if (dirfd >= 0)
			close(dirfd);
	}
	if (rc) {
		fabsimd_seterr(err, errlen, "cannot listen on %s: %s", p->sock,
			       strerror(-rc));
		close(fd);
		unlink(p->sock);
		return rc;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.paths = *p;
	cfg.persistent = persistent;
	cfg.idle_timeout_ms = idle_timeout_ms();
	if (pipe2(pipefd, O_CLOEXEC)) {
		rc = -errno;
		goto failed;
	}
	child = fork();
	if (child == 0) {
		pid_t grandchild;

		close(pipefd[0]);
		setsid();
		grandchild = fork();
		if (grandchild == 0) {
			close(pipefd[1]);
			fabsimd_daemon_main(&cfg, fd);
		}
		n = write(pipefd[1], &grandchild, sizeof(grandchild));
		_exit(n == sizeof(grandchild) && grandchild > 0 ? 0 : 1);
	}
	rc = child < 0 ? -errno : 0;
	close(pipefd[1]);
	close(fd);
	if (child > 0) {
		while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR)
			;
		do
			n = read(pipefd[0], &daemon, sizeof(daemon));
		while (n < 0 && errno == EINTR);
		if (n != sizeof(daemon) || daemon <= 0)
			rc = -ECHILD;
	}
	close(pipefd[0]);
	if (rc) {
		fabsimd_seterr(err, errlen, "cannot start the coordinator of "
			       "fabric %s: fork: %s", p->fabric, strerror(-rc));
		unlink(p->sock);
		return rc;
	}
	if (pid_out)
		*pid_out = daemon;
	return 0;

failed:
	fabsimd_seterr(err, errlen, "cannot start the coordinator of fabric "
		       "%s: %s", p->fabric, strerror(-rc));
	close(fd);
	unlink(p->sock);
	return rc;
}

static void not_running(const struct fabsimd_paths *p, char *err,
			size_t errlen)
{
	struct stat st;

	/* A socket nobody answers on: its coordinator died (killed), and
	 * processes that had joined may still run. */
	if (!lstat(p->sock, &st) && S_ISSOCK(st.st_mode))
		fabsimd_seterr(err, errlen, "no coordinator answers for fabric "
			       "%s: it ended without cleaning up (killed?); "
			       "processes that had joined may still run, and "
			       "the next one to join starts a new coordinator "
			       "(%s is left)", p->fabric, p->sock);
	else
		fabsimd_seterr(err, errlen, "no fabric %s is running (no "
			       "coordinator at %s)", p->fabric, p->sock);
}

static void reply_error(const struct fabsimd_paths *p, int rc, char *err,
			size_t errlen)
{
	if (rc == -ETIMEDOUT)
		fabsimd_seterr(err, errlen, "the coordinator of fabric %s did "
			       "not answer within %d ms", p->fabric,
			       REPLY_TIMEOUT_MS);
	else if (rc == -ECONNRESET)
		fabsimd_seterr(err, errlen, "the coordinator of fabric %s "
			       "closed the connection", p->fabric);
	else if (rc == -EPROTO)
		fabsimd_seterr(err, errlen, "the coordinator of fabric %s sent "
			       "a malformed reply (another fabsimd version?)",
			       p->fabric);
	else
		fabsimd_seterr(err, errlen, "talking to the coordinator of "
			       "fabric %s: %s", p->fabric, strerror(-rc));
}

/* Connects under the lock, starting a coordinator if none answers. */
static int connect_or_start(const struct fabsimd_paths *p, bool persistent,
			    bool *started, pid_t *pid, char *err,
			    size_t errlen)
{
	int fd = connect_to(p), rc;

	*started = false;
	if (fd >= 0)
		return fd;
	if (fd != -ENOENT && fd != -ECONNREFUSED) {
		fabsimd_seterr(err, errlen, "cannot connect to %s: %s", p->sock,
			       strerror(-fd));
		return fd;
	}
	rc = spawn(p, persistent, pid, err, errlen);
	if (rc)
		return rc;
	*started = true;
	fd = connect_to(p);
	if (fd < 0)
		fabsimd_seterr(err, errlen, "the new coordinator of fabric %s "
			       "does not answer at %s: %s", p->fabric, p->sock,
			       strerror(-fd));
	return fd;
}

static void own_name(char *prog, size_t len, const char *given)
{
	const char *name = given && *given ? given :
			   program_invocation_short_name;

	snprintf(prog, len, "%s", name && *name ? name : "?");
}

int fabsimd_attach(const char *fabric, const struct fabsimd_member_info *me,
		   struct fabsimd_session **out, char *err, size_t errlen)
{
	struct fabsimd_paths p;
	struct fabsimd_session *s;
	struct fabsimd_msg m;
	bool started;
	pid_t pid = -1;
	int lock, fd, rc;
	ssize_t n;

	if (!me || !out) {
		fabsimd_seterr(err, errlen, "fabsimd_attach: %s is NULL",
			       !me ? "the member info" : "the session pointer");
		return -EINVAL;
	}
	*out = NULL;
	rc = fabsimd_paths_init(&p, fabric, err, errlen);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s) {
		fabsimd_seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	lock = fabsimd_lock(&p, LOCK_TIMEOUT_MS, true, err, errlen);
	if (lock < 0) {
		free(s);
		return lock;
	}
	fd = connect_or_start(&p, false, &started, &pid, err, errlen);
	if (fd < 0) {
		unlock(lock);
		free(s);
		return fd;
	}
	fabsimd_msg_init(&m, FABSIMD_MSG_HELLO);
	m.node = me->node;
	m.pid = getpid();
	own_name(m.prog, sizeof(m.prog), me->prog);
	rc = send_request(fd, &m);
	n = rc ? rc : await_reply(fd, FABSIMD_MSG_WELCOME, &m, sizeof(m));
	unlock(lock);
	if (n < 0) {
		reply_error(&p, (int)n, err, errlen);
		rc = (int)n;
	} else if (m.status < 0) {
		m.text[sizeof(m.text) - 1] = '\0';
		fabsimd_seterr(err, errlen, "%s", m.text);
		rc = m.status;
	}
	if (rc) {
		close(fd);
		free(s);
		return rc;
	}
	s->fd = fd;
	s->node = me->node;
	s->coordinator = m.pid;
	s->started = started;
	snprintf(s->fabric, sizeof(s->fabric), "%s", p.fabric);
	*out = s;
	if (started)
		remove_other_fabrics_left(&p);
	return 0;
}

int fabsimd_session_fd(const struct fabsimd_session *s)
{
	return s ? s->fd : -EINVAL;
}

pid_t fabsimd_session_coordinator(const struct fabsimd_session *s)
{
	return s ? s->coordinator : -EINVAL;
}

bool fabsimd_session_started(const struct fabsimd_session *s)
{
	return s && s->started;
}

bool fabsimd_session_lost(const struct fabsimd_session *s)
{
	struct pollfd pfd = { .fd = s ? s->fd : -1, .events = POLLRDHUP };

	if (!s)
		return false;
	return s->lost ||
	       (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP)));
}

int fabsimd_next_notice(struct fabsimd_session *s, struct fabsimd_notice *out)
{
	struct fabsimd_msg m;

	if (!s || !out)
		return -EINVAL;
	if (s->lost)
		return -ENOTCONN;
	for (;;) {
		ssize_t n = recv(s->fd, &m, sizeof(m), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return -EAGAIN;
		memset(out, 0, sizeof(*out));
		if (n <= 0) {
			s->lost = true;
			out->kind = FABSIMD_NOTICE_LOST;
			out->pid = s->coordinator;
			return 0;
		}
		if (!fabsimd_msg_valid(&m, n))
			continue;
		switch (m.type) {
		case FABSIMD_MSG_JOINED:
			out->kind = FABSIMD_NOTICE_JOINED;
			break;
		case FABSIMD_MSG_LEFT:
			out->kind = FABSIMD_NOTICE_LEFT;
			break;
		case FABSIMD_MSG_DIED:
			out->kind = FABSIMD_NOTICE_DIED;
			break;
		case FABSIMD_MSG_STOPPING:
			out->kind = FABSIMD_NOTICE_STOPPING;
			out->pid = s->coordinator;
			return 0;
		default:
			continue;
		}
		out->node = m.node;
		out->pid = m.pid;
		memcpy(out->prog, m.prog, sizeof(out->prog));
		out->prog[sizeof(out->prog) - 1] = '\0';
		return 0;
	}
}

/* Its coordinator gone, a process that leaves tells the one that replaced
 * it, which may list it (adopted): on a connection of its own, which the
 * coordinator knows it by. */
static void bye_to_successor(const struct fabsimd_session *s,
			     const struct fabsimd_msg *bye)
{
	struct fabsimd_paths p;
	int fd;

	if (fabsimd_paths_init(&p, s->fabric, NULL, 0))
		return;
	fd = connect_to(&p);
	if (fd < 0)
		return;
	send_request(fd, bye);
	close(fd);
}

void fabsimd_detach(struct fabsimd_session *s)
{
	struct fabsimd_msg m;

	if (!s)
		return;
	fabsimd_msg_init(&m, FABSIMD_MSG_BYE);
	m.node = s->node;
	m.pid = getpid();
	if (fabsimd_session_lost(s) || send_request(s->fd, &m))
		bye_to_successor(s, &m);
	close(s->fd);
	free(s);
}

int fabsimd_adopt(struct fabsimd_session *s, uint32_t node, pid_t pid)
{
	struct fabsimd_msg m;

	if (!s || pid <= 0)
		return -EINVAL;
	if (s->lost)
		return -ENOTCONN;
	fabsimd_msg_init(&m, FABSIMD_MSG_ADOPT);
	m.node = node;
	m.pid = pid;
	return send_request(s->fd, &m);
}

int fabsimd_last_one_out(const char *fabric)
{
	struct fabsimd_paths p;
	int lock, fd, removed = 0;

	if (fabsimd_paths_init(&p, fabric, NULL, 0))
		return 0;
	lock = fabsimd_lock(&p, LOCK_TIMEOUT_MS, true, NULL, 0);
	if (lock < 0)
		return 0;
	fd = connect_to(&p);
	if (fd >= 0) {
		close(fd); /* a coordinator runs: the cleaning is its */
	} else if (fd == -ENOENT || fd == -ECONNREFUSED) {
		pid_t user;

		removed = fabsimd_remove_unused_segments(&p, getpid(), &user);
		if (!user) {
			unlink(p.sock);
			unlink(p.lock);
			fabsimd_log_path(&p, "pid %d, the last process on the "
					 "fabric, left it with no coordinator "
					 "(killed?): removed %d shared-memory "
					 "segment%s", (int)getpid(), removed,
					 removed == 1 ? "" : "s");
		}
	}
	unlock(lock);
	return removed;
}

/* A connection to a running coordinator, or -ENOENT with its message. */
static int connect_running(const struct fabsimd_paths *p, char *err,
			   size_t errlen)
{
	int fd = connect_to(p);

	if (fd == -ENOENT || fd == -ECONNREFUSED) {
		not_running(p, err, errlen);
		return -ENOENT;
	}
	if (fd < 0)
		fabsimd_seterr(err, errlen, "cannot connect to %s: %s", p->sock,
			       strerror(-fd));
	return fd;
}

int fabsimd_status(const char *fabric, struct fabsimd_status *out, char *err,
		   size_t errlen)
{
	struct fabsimd_status_msg *r;
	struct fabsimd_paths p;
	struct fabsimd_msg m;
	int fd, rc;
	ssize_t n;

	if (!out) {
		fabsimd_seterr(err, errlen, "fabsimd_status: out is NULL");
		return -EINVAL;
	}
	rc = fabsimd_paths_init(&p, fabric, err, errlen);
	if (rc)
		return rc;
	fd = connect_running(&p, err, errlen);
	if (fd < 0)
		return fd;
	r = malloc(sizeof(*r));
	if (!r) {
		close(fd);
		fabsimd_seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fabsimd_msg_init(&m, FABSIMD_MSG_STATUS);
	rc = send_request(fd, &m);
	n = rc ? rc : await_reply(fd, FABSIMD_MSG_STATUS_REPLY, r, sizeof(*r));
	close(fd);
	if (n == -ECONNRESET || n == -EPIPE) {
		/* It was ending as we asked. */
		not_running(&p, err, errlen);
		n = -ENOENT;
	} else if (n < 0) {
		reply_error(&p, (int)n, err, errlen);
	} else if (r->head.count > FABSIMD_MEMBERS_MAX ||
		   (size_t)n < sizeof(r->head) +
				       r->head.count * sizeof(r->members[0])) {
		reply_error(&p, -EPROTO, err, errlen);
		n = -EPROTO;
	}
	if (n < 0) {
		free(r);
		return (int)n;
	}
	memset(out, 0, sizeof(*out));
	out->pid = r->head.pid;
	out->persistent = r->head.flags & 1;
	out->uptime_ms = r->head.value;
	out->count = r->head.count;
	for (size_t i = 0; i < out->count; i++) {
		out->members[i].node = r->members[i].node;
		out->members[i].pid = r->members[i].pid;
		out->members[i].attached_ms = r->members[i].attached_ms;
		memcpy(out->members[i].prog, r->members[i].prog,
		       sizeof(out->members[i].prog));
		out->members[i].prog[FABSIMD_PROG_MAX - 1] = '\0';
	}
	free(r);
	return 0;
}

int fabsimd_stop(const char *fabric, pid_t *pid_out, char *err, size_t errlen)
{
	struct fabsimd_paths p;
	struct fabsimd_msg m, scratch;
	int fd, rc;
	ssize_t n;

	rc = fabsimd_paths_init(&p, fabric, err, errlen);
	if (rc)
		return rc;
	fd = connect_running(&p, err, errlen);
	if (fd < 0)
		return fd;
	fabsimd_msg_init(&m, FABSIMD_MSG_STOP);
	rc = send_request(fd, &m);
	n = rc ? rc : await_reply(fd, FABSIMD_MSG_STOP_REPLY, &m, sizeof(m));
	if (n == -ECONNRESET || n == -EPIPE) {
		close(fd);
		not_running(&p, err, errlen);
		return -ENOENT;
	}
	if (n < 0) {
		close(fd);
		reply_error(&p, (int)n, err, errlen);
		return (int)n;
	}
	if (pid_out)
		*pid_out = m.pid;
	/* The coordinator closes the connection as it ends. */
	rc = (int)await_reply(fd, -1, &scratch, sizeof(scratch));
	close(fd);
	if (rc == -ETIMEDOUT) {
		fabsimd_seterr(err, errlen, "the coordinator of fabric %s (pid "
			       "%d) was told to stop but is still running "
			       "after %d ms", p.fabric, (int)m.pid,
			       REPLY_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	return (int)m.value;
}

int fabsimd_start(const char *fabric, bool persistent, pid_t *pid_out,
		  char *err, size_t errlen)
{
	struct fabsimd_paths p;
	struct fabsimd_msg m;
	bool started;
	pid_t pid = -1;
	int lock, fd, rc;
	ssize_t n;

	rc = fabsimd_paths_init(&p, fabric, err, errlen);
	if (rc)
		return rc;
	lock = fabsimd_lock(&p, LOCK_TIMEOUT_MS, true, err, errlen);
	if (lock < 0)
		return lock;
	fd = connect_or_start(&p, persistent, &started, &pid, err, errlen);
	if (fd < 0 || started) {
		unlock(lock);
		if (fd >= 0)
			close(fd);
		if (fd >= 0 && pid_out)
			*pid_out = pid;
		if (fd >= 0)
			remove_other_fabrics_left(&p);
		return fd < 0 ? fd : 0;
	}
	/* One runs: with `persistent`, it stays from now on. */
	fabsimd_msg_init(&m, persistent ? FABSIMD_MSG_PERSIST :
					  FABSIMD_MSG_STATUS);
	rc = send_request(fd, &m);
	if (rc)
		n = rc;
	else if (persistent)
		n = await_reply(fd, FABSIMD_MSG_PERSIST_REPLY, &m, sizeof(m));
	else
		n = await_reply(fd, FABSIMD_MSG_STATUS_REPLY, &m, sizeof(m));
	unlock(lock);
	close(fd);
	if (n < 0) {
		reply_error(&p, (int)n, err, errlen);
		return (int)n;
	}
	if (m.status < 0) {
		m.text[sizeof(m.text) - 1] = '\0';
		fabsimd_seterr(err, errlen, "%s", m.text);
		return m.status;
	}
	if (pid_out)
		*pid_out = m.pid;
	return 1;
}
