/* SPDX-License-Identifier: BSD-2-Clause
 * The coordinator of one fabric: a poll() loop over the listening socket,
 * the connections, and a pidfd per member (a member's process ending is
 * seen even when a child it forked still holds its connection).
 *
 * It runs in a process fork()ed from the first attaching program (client.c
 * prepares it) and keeps only its own state, in one anonymous mapping: it
 * never touches the parent program's globals, and leaves with _exit(). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "fabsimd_int.h"

/* Connections beyond the members: status, stop, attaches in progress. */
#define CONN_MAX (FABSIMD_MEMBERS_MAX + 32)

enum conn_role { CONN_FREE, CONN_NEW, CONN_MEMBER, CONN_STOPPER };

struct conn {
	enum conn_role role;
	int fd;
	int pidfd; /* members: -1 without pidfd_open() */
	uint32_t node;
	pid_t pid;
	uid_t uid;
	uint64_t since_ms;
	/* A member that attached before this coordinator started (fd -1):
	 * known from another member, watched through its pidfd only. */
	bool adopted;
	char prog[FABSIMD_PROG_MAX];
};

struct daemon {
	struct fabsimd_daemon_config cfg;
	int listen_fd;
	int log_fd;
	bool stopping;
	bool ever_attached;
	uint64_t started_ms;
	size_t members;
	size_t conns;
	struct conn conn[CONN_MAX];
	struct pollfd pfd[1 + 2 * CONN_MAX];
	int pfd_conn[1 + 2 * CONN_MAX]; /* index into conn, per pfd */
	struct fabsimd_status_msg reply;
};

static int send_msg(int fd, const void *m, size_t len)
{
	ssize_t n;

	do
		n = send(fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n >= 0 && n != (ssize_t)len)
		errno = EMSGSIZE; /* a short send says nothing in errno */
	return n == (ssize_t)len ? 0 : -1;
}

/* One message from a connection: its length, 0 at its end, -1 (errno).
 * A peer that closes with notices of ours unread leaves ECONNRESET on our
 * end, and a SOCK_SEQPACKET receive reports that before the messages
 * queued ahead of it — a member's BYE among them. The error is reported
 * once: what was queued comes after it. */
static ssize_t recv_msg(int fd, struct fabsimd_msg *m)
{
	bool reset = false;
	ssize_t n;

	for (;;) {
		n = recv(fd, m, sizeof(*m), MSG_DONTWAIT);
		if (n >= 0 || errno == EAGAIN)
			return n;
		if (errno == ECONNRESET && !reset)
			reset = true;
		else if (errno != EINTR)
			return n;
	}
}

static void close_conn(struct daemon *d, struct conn *c)
{
	if (c->role == CONN_MEMBER)
		d->members--;
	if (c->fd >= 0)
		close(c->fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	memset(c, 0, sizeof(*c));
	c->role = CONN_FREE;
	c->fd = c->pidfd = -1;
	d->conns--;
}

/* Tells every member but `except` about `about`. */
static void notify(struct daemon *d, int type, const struct conn *about,
		   const struct conn *except)
{
	struct fabsimd_msg m;

	fabsimd_msg_init(&m, type);
	if (about) {
		m.node = about->node;
		m.pid = about->pid;
		memcpy(m.prog, about->prog, sizeof(m.prog));
	}
	for (size_t i = 0; i < CONN_MAX; i++) {
		struct conn *c = &d->conn[i];

		if (c->role != CONN_MEMBER || c == except || c->fd < 0)
			continue;
		/* A member that has closed its end (leaving, as the ranks of
		 * an MPI job do together) hears nothing more: its own going
		 * is logged when its connection is read. */
		if (send_msg(c->fd, &m, sizeof(m)) && errno != ECONNRESET &&
		    errno != EPIPE)
			fabsimd_log_fd(d->log_fd, "could not tell node %u (pid "
				       "%d) of an event: %s", c->node, c->pid,
				       strerror(errno));
	}
}

static void member_gone(struct daemon *d, struct conn *c, bool clean)
{
	uint64_t held = fabsimd_now_ms() - c->since_ms;

	if (c->adopted)
		fabsimd_log_fd(d->log_fd, "node %u (pid %d, %s) ended; it had "
			       "attached before this coordinator started",
			       c->node, c->pid, c->prog);
	else if (clean)
		fabsimd_log_fd(d->log_fd, "node %u (pid %d, %s) left after "
			       "%llu.%03llu s", c->node, c->pid, c->prog,
			       (unsigned long long)(held / 1000),
			       (unsigned long long)(held % 1000));
	else
		fabsimd_log_fd(d->log_fd, "node %u (pid %d, %s) died without "
			       "detaching", c->node, c->pid, c->prog);
	notify(d, clean ? FABSIMD_MSG_LEFT : FABSIMD_MSG_DIED, c, c);
	close_conn(d, c);
}

/* A program name fit for one line of the log. */
static void set_prog(struct conn *c, const char *prog)
{
	snprintf(c->prog, sizeof(c->prog), "%s", prog);
	for (char *s = c->prog; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* The name the kernel gives a process (its comm), or "?". */
static void kernel_name(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* A member tells of a process that attached before this coordinator
 * started (the one before was killed) and still runs node `in->node`: it
 * is listed, and kept until it ends, as a member, though it has no
 * connection here to say goodbye on. */
static void adopt(struct daemon *d, const struct conn *from,
		  const struct fabsimd_msg *in)
{
	char path[64], name[FABSIMD_PROG_MAX];
	struct conn *c = NULL;
	struct stat st;
	int pidfd;

	for (size_t i = 0; i < CONN_MAX; i++) {
		const struct conn *o = &d->conn[i];

		/* Known. A node taken since is no reason to drop it: the
		 * newcomer that took it is refused by the fabric itself,
		 * and leaves; this one runs on. */
		if (o->role == CONN_MEMBER && o->pid == in->pid)
			return;
		if (o->role == CONN_FREE && !c)
			c = &d->conn[i];
	}
	/* On this fabric: a process it names that ended (and its pid
	 * reused) maps no segment of it. */
	snprintf(path, sizeof(path), "/proc/%d", (int)in->pid);
	if (!c || d->stopping || d->members >= FABSIMD_MEMBERS_MAX ||
	    in->pid <= 0 || stat(path, &st) || st.st_uid != from->uid ||
	    fabsimd_segment_mapped_by(&d->cfg.paths, in->pid) != 1)
		return;
	pidfd = (int)syscall(SYS_pidfd_open, in->pid, 0);
	if (pidfd < 0)
		return; /* ended already, or nothing could tell when it ends */
	kernel_name(in->pid, name, sizeof(name));
	c->role = CONN_MEMBER;
	c->fd = -1;
	c->pidfd = pidfd;
	c->node = in->node;
	c->pid = in->pid;
	c->uid = from->uid;
	c->since_ms = fabsimd_now_ms();
	c->adopted = true;
	set_prog(c, name);
	d->conns++;
	d->members++;
	d->ever_attached = true;
	fabsimd_log_fd(d->log_fd, "node %u (pid %d, %s) attached before this "
		       "coordinator started (pid %d says); %zu member%s",
		       c->node, c->pid, c->prog, from->pid, d->members,
		       d->members == 1 ? "" : "s");
}

/* A process this coordinator adopted leaves (its own coordinator was
 * killed, so it says so on a connection of its own): known by its pid. */
static void adopted_bye(struct daemon *d, struct conn *c)
{
	for (size_t i = 0; i < CONN_MAX; i++) {
		struct conn *o = &d->conn[i];

		if (o->role == CONN_MEMBER && o->adopted && o->pid == c->pid) {
			fabsimd_log_fd(d->log_fd, "node %u (pid %d, %s) left; it "
				       "had attached before this coordinator "
				       "started", o->node, o->pid, o->prog);
			notify(d, FABSIMD_MSG_LEFT, o, o);
			close_conn(d, o);
			break;
		}
	}
	close_conn(d, c);
}

static void hello(struct daemon *d, struct conn *c, const struct fabsimd_msg *in)
{
	struct conn *itself = NULL; /* its entry as an adopted member */
	struct fabsimd_msg out;

	for (size_t i = 0; i < CONN_MAX && !itself; i++)
		if (d->conn[i].role == CONN_MEMBER && d->conn[i].adopted &&
		    d->conn[i].pid == c->pid)
			itself = &d->conn[i];
	fabsimd_msg_init(&out, FABSIMD_MSG_WELCOME);
	out.pid = getpid();
	if (d->stopping) {
		out.status = -ESHUTDOWN;
		snprintf(out.text, sizeof(out.text), "fabric %s is stopping",
			 d->cfg.paths.fabric);
	} else if (d->members - (itself != NULL) >= FABSIMD_MEMBERS_MAX) {
		out.status = -EUSERS;
		snprintf(out.text, sizeof(out.text), "fabric %s has %d members "
			 "already, the most it takes", d->cfg.paths.fabric,
			 FABSIMD_MEMBERS_MAX);
	}
	for (size_t i = 0; i < CONN_MAX && !out.status; i++) {
		const struct conn *o = &d->conn[i];

		if (o->role == CONN_MEMBER && o != itself &&
		    o->node == in->node) {
			out.status = -EADDRINUSE;
			snprintf(out.text, sizeof(out.text),
				 "node %u is already attached by pid %d (%s) on "
				 "fabric %s", in->node, o->pid, o->prog,
				 d->cfg.paths.fabric);
		}
	}
	if (out.status) {
		fabsimd_log_fd(d->log_fd, "refused pid %d as node %u: %s",
			       c->pid, in->node, out.text);
		send_msg(c->fd, &out, sizeof(out));
		close_conn(d, c);
		return;
	}
	/* Known from another member, it attaches itself again. */
	if (itself)
		close_conn(d, itself);
	c->role = CONN_MEMBER;
	c->node = in->node;
	c->since_ms = fabsimd_now_ms();
	char prog[FABSIMD_PROG_MAX];
	memcpy(prog, in->prog, sizeof(prog));
	prog[sizeof(prog) - 1] = '\0';
	set_prog(c, prog);
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	d->members++;
	d->ever_attached = true;
	if (send_msg(c->fd, &out, sizeof(out))) {
		/* It gave up waiting: as if it had never come. */
		d->members--;
		c->role = CONN_NEW;
		close_conn(d, c);
		return;
	}
	fabsimd_log_fd(d->log_fd, "node %u (pid %d, %s) joined; %zu member%s",
		       c->node, c->pid, c->prog, d->members,
		       d->members == 1 ? "" : "s");
	notify(d, FABSIMD_MSG_JOINED, c, c);
}

static void status(struct daemon *d, struct conn *c)
{
	struct fabsimd_msg *h = &d->reply.head;
	uint64_t now = fabsimd_now_ms();
	size_t n = 0;

	fabsimd_msg_init(h, FABSIMD_MSG_STATUS_REPLY);
	h->pid = getpid();
	h->flags = d->cfg.persistent ? 1 : 0;
	h->value = now - d->started_ms;
	for (size_t i = 0; i < CONN_MAX && n < FABSIMD_MEMBERS_MAX; i++) {
		const struct conn *o = &d->conn[i];
		struct fabsimd_wire_member *w = &d->reply.members[n];

		if (o->role != CONN_MEMBER)
			continue;
		w->node = o->node;
		w->pid = o->pid;
		w->attached_ms = now - o->since_ms;
		memcpy(w->prog, o->prog, sizeof(w->prog));
		n++;
	}
	h->count = (uint32_t)n;
	send_msg(c->fd, &d->reply,
		 sizeof(d->reply.head) + n * sizeof(d->reply.members[0]));
}

static void stop(struct daemon *d, struct conn *c)
{
	struct fabsimd_msg out;

	fabsimd_msg_init(&out, FABSIMD_MSG_STOP_REPLY);
	out.pid = getpid();
	out.value = d->members;
	if (!d->stopping)
		fabsimd_log_fd(d->log_fd, "stop asked by pid %d; telling %zu "
			       "member%s", c->pid, d->members,
			       d->members == 1 ? "" : "s");
	d->stopping = true;
	notify(d, FABSIMD_MSG_STOPPING, NULL, NULL);
	send_msg(c->fd, &out, sizeof(out));
	/* It waits for this connection to close: the coordinator is gone. */
	c->role = CONN_STOPPER;
}

static void persist(struct daemon *d, struct conn *c)
{
	struct fabsimd_msg out;

	fabsimd_msg_init(&out, FABSIMD_MSG_PERSIST_REPLY);
	out.pid = getpid();
	out.flags = d->cfg.persistent ? 1 : 0;
	if (d->stopping) {
		out.status = -ESHUTDOWN;
		snprintf(out.text, sizeof(out.text), "fabric %s is stopping",
			 d->cfg.paths.fabric);
	} else if (!d->cfg.persistent) {
		d->cfg.persistent = true;
		fabsimd_log_fd(d->log_fd, "made persistent by pid %d", c->pid);
	}
	send_msg(c->fd, &out, sizeof(out));
}

/* A message or the end of a connection. */
static void readable(struct daemon *d, struct conn *c)
{
	struct fabsimd_msg m;
	ssize_t n;

	n = recv_msg(c->fd, &m);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		if (c->role == CONN_MEMBER)
			member_gone(d, c, false);
		else
			close_conn(d, c);
		return;
	}
	if (!fabsimd_msg_valid(&m, n)) {
		fabsimd_log_fd(d->log_fd, "pid %d sent a malformed message "
			       "(%zd bytes); closing its connection", c->pid,
			       n);
		if (c->role == CONN_MEMBER)
			member_gone(d, c, false);
		else
			close_conn(d, c);
		return;
	}
	switch (c->role == CONN_MEMBER ? -(int)m.type : (int)m.type) {
	case FABSIMD_MSG_HELLO:
		hello(d, c, &m);
		break;
	case FABSIMD_MSG_BYE:
		adopted_bye(d, c);
		break;
	case -FABSIMD_MSG_BYE:
		member_gone(d, c, true);
		break;
	case -FABSIMD_MSG_ADOPT:
		adopt(d, c, &m);
		break;
	case FABSIMD_MSG_STATUS:
	case -FABSIMD_MSG_STATUS:
		status(d, c);
		break;
	case FABSIMD_MSG_STOP:
		stop(d, c);
		break;
	case FABSIMD_MSG_PERSIST:
		persist(d, c);
		break;
	default:
		fabsimd_log_fd(d->log_fd, "pid %d sent message type %u out of "
			       "place; ignored", c->pid, m.type);
		break;
	}
}

/* The member's process ended. A BYE it sent first is still queued. */
static void process_ended(struct daemon *d, struct conn *c)
{
	struct fabsimd_msg m;
	ssize_t n;

	while (c->fd >= 0 && (n = recv_msg(c->fd, &m)) > 0)
		if (fabsimd_msg_valid(&m, n) && m.type == FABSIMD_MSG_BYE) {
			member_gone(d, c, true);
			return;
		}
	member_gone(d, c, false);
}

static void accept_new(struct daemon *d)
{
	for (;;) {
		int fd = accept4(d->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct conn *c = NULL;

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
		    cred.uid != geteuid()) {
			close(fd); /* only ours (the directory is 0700) */
			continue;
		}
		for (size_t i = 0; i < CONN_MAX && !c; i++)
			if (d->conn[i].role == CONN_FREE)
				c = &d->conn[i];
		if (!c) {
			fabsimd_log_fd(d->log_fd, "too many connections; "
				       "refusing pid %d", cred.pid);
			close(fd);
			continue;
		}
		c->role = CONN_NEW;
		c->fd = fd;
		c->pidfd = -1;
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->since_ms = fabsimd_now_ms();
		d->conns++;
	}
}

/* Ends the coordinator if nobody can reach it any more: under the lock, so
 * that no attach is half-way; false when it must go on. */
static bool try_exit(struct daemon *d)
{
	int lock = fabsimd_lock(&d->cfg.paths, 0, false, NULL, 0);
	int removed;

	if (lock < 0)
		return false; /* someone is attaching: see them first */
	accept_new(d);
	if (!d->stopping && d->conns) {
		close(lock);
		return false;
	}
	unlink(d->cfg.paths.sock);
	close(d->listen_fd);
	/* Its last members may still map them on their way out: every
	 * process on the fabric is a member (adopted, if it came before). */
	removed = fabsimd_remove_segments(&d->cfg.paths);
	unlink(d->cfg.paths.lock);
	close(lock);
	for (size_t i = 0; i < CONN_MAX; i++)
		if (d->conn[i].role != CONN_FREE)
			close_conn(d, &d->conn[i]);
	fabsimd_log_fd(d->log_fd, "exit: %s; socket%s removed",
		       d->stopping ? "stopped" :
		       d->ever_attached ? "the last member left" :
					  "nobody attached",
		       removed ? " and shared memory" : "");
	return true;
}

static void reset_process(int keep)
{
	struct sigaction dfl;
	sigset_t none;
	int null;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		sigaction(s, &dfl, NULL); /* SIGKILL, SIGSTOP: EINVAL */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (chdir("/"))
		return;
	null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		if (fd != null)
			dup2(null, fd);
	if (null > 2)
		close(null);
	/* Every inherited descriptor but the listening socket. */
	if (keep > 3)
		syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u);
	if (syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u)) {
		for (int fd = 3; fd < 65536; fd++)
			if (fd != keep)
				close(fd);
	}
}

void fabsimd_daemon_main(const struct fabsimd_daemon_config *cfg,
			 int listen_fd)
{
	struct daemon *d;
	int keep;

	/* Away from 0-2, which become /dev/null. */
	keep = listen_fd > 2 ? listen_fd : fcntl(listen_fd, F_DUPFD, 3);
	reset_process(keep);
	/* Forked from the program that started it: under the program's name,
	 * `pkill PROGRAM` would kill the fabric's coordinator too. */
	prctl(PR_SET_NAME, "fabsimd", 0, 0, 0);
	d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (keep < 0 || d == MAP_FAILED)
		_exit(1);
	memcpy(&d->cfg, cfg, sizeof(d->cfg));
	d->listen_fd = keep;
	fcntl(keep, F_SETFL, fcntl(keep, F_GETFL) | O_NONBLOCK);
	fcntl(keep, F_SETFD, FD_CLOEXEC);
	for (size_t i = 0; i < CONN_MAX; i++)
		d->conn[i].fd = d->conn[i].pidfd = -1;
	d->started_ms = fabsimd_now_ms();
	d->log_fd = open(d->cfg.paths.log, O_WRONLY | O_APPEND | O_CREAT |
				 O_CLOEXEC | O_NOFOLLOW, 0600);
	fabsimd_log_fd(d->log_fd, "start: fabric %s, %s, socket %s",
		       d->cfg.paths.fabric,
		       d->cfg.persistent ? "persistent" : "on demand",
		       d->cfg.paths.sock);

	for (;;) {
		size_t n = 0;
		int timeout = -1;
		uint64_t now = fabsimd_now_ms();
		uint64_t limit = (uint64_t)d->cfg.idle_timeout_ms;
		uint64_t wake = UINT64_MAX; /* when something is due */
		bool unused;

		/* Silent that long: a connection must not keep us alive. */
		for (size_t i = 0; i < CONN_MAX; i++) {
			struct conn *c = &d->conn[i];

			if (c->role != CONN_NEW)
				continue;
			if (now >= c->since_ms + limit) {
				fabsimd_log_fd(d->log_fd, "pid %d connected "
					       "but said nothing for %d ms; "
					       "closed", c->pid,
					       d->cfg.idle_timeout_ms);
				close_conn(d, c);
			} else if (c->since_ms + limit < wake) {
				wake = c->since_ms + limit;
			}
		}
		unused = !d->cfg.persistent && !d->members;
		if (d->stopping ||
		    (unused && !d->conns &&
		     (d->ever_attached || now >= d->started_ms + limit))) {
			if (try_exit(d))
				break;
			wake = now + 5; /* the lock was busy: soon again */
		} else if (unused && !d->ever_attached &&
			   d->started_ms + limit < wake) {
			wake = d->started_ms + limit;
		}
		if (wake != UINT64_MAX)
			timeout = wake > now ? (int)(wake - now) : 0;
		d->pfd[n] = (struct pollfd){ .fd = d->listen_fd,
					     .events = POLLIN };
		d->pfd_conn[n++] = -1;
		for (size_t i = 0; i < CONN_MAX; i++) {
			const struct conn *c = &d->conn[i];

			if (c->role == CONN_FREE)
				continue;
			d->pfd[n] = (struct pollfd){ .fd = c->fd,
						     .events = POLLIN };
			d->pfd_conn[n++] = (int)i;
			if (c->pidfd >= 0) {
				d->pfd[n] = (struct pollfd){ .fd = c->pidfd,
							     .events = POLLIN };
				d->pfd_conn[n++] = (int)(i | 0x10000);
			}
		}
		if (poll(d->pfd, n, timeout) < 0 && errno != EINTR)
			break;
		for (size_t k = 1; k < n; k++) {
			struct conn *c = &d->conn[d->pfd_conn[k] & 0xffff];
			bool pidfd = d->pfd_conn[k] & 0x10000;

			if (!d->pfd[k].revents || c->role == CONN_FREE ||
			    d->pfd[k].fd != (pidfd ? c->pidfd : c->fd))
				continue; /* closed meanwhile */
			if (pidfd)
				process_ended(d, c);
			else
				readable(d, c);
		}
		if (d->pfd[0].revents)
			accept_new(d);
	}
	if (d->log_fd >= 0)
		close(d->log_fd);
	_exit(0);
}
