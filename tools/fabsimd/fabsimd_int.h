/* SPDX-License-Identifier: BSD-2-Clause
 * fabsimd internals shared by the client side (client.c), the coordinator
 * (daemon.c) and the file helpers (files.c). Not installed. */
#ifndef FABSIMD_FABSIMD_INT_H
#define FABSIMD_FABSIMD_INT_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "fabsimd.h"

#define FABSIMD_HIDDEN __attribute__((visibility("hidden")))

/* Wire protocol: one SOCK_SEQPACKET message per record. */
#define FABSIMD_MAGIC 0x46534d44u /* "FSMD" */
#define FABSIMD_VERSION 1
#define FABSIMD_TEXT_MAX 192

enum fabsimd_msg_type {
	FABSIMD_MSG_HELLO = 1,   /* member -> coord: attach (node, prog) */
	FABSIMD_MSG_WELCOME,     /* coord -> member: status, pid, text */
	FABSIMD_MSG_BYE,         /* member -> coord: clean detach */
	FABSIMD_MSG_JOINED,      /* coord -> members: node, pid, prog */
	FABSIMD_MSG_LEFT,        /* coord -> members: node, pid, prog */
	FABSIMD_MSG_DIED,        /* coord -> members: node, pid, prog */
	FABSIMD_MSG_STOPPING,    /* coord -> members */
	FABSIMD_MSG_STATUS,      /* client -> coord: request */
	FABSIMD_MSG_STATUS_REPLY,/* coord -> client: header + members */
	FABSIMD_MSG_STOP,        /* client -> coord */
	FABSIMD_MSG_STOP_REPLY,  /* coord -> client: pid, value = members */
	FABSIMD_MSG_PERSIST,     /* client -> coord: stay until stopped */
	FABSIMD_MSG_PERSIST_REPLY, /* coord -> client: pid, flags = was */
	FABSIMD_MSG_ADOPT,       /* member -> coord: node, pid of a process
				  * that attached before the coordinator
				  * started */
};

struct fabsimd_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	int32_t status; /* replies: 0 or a negative errno */
	uint32_t node;
	int32_t pid;
	uint32_t flags; /* STATUS_REPLY: 1 = persistent */
	uint64_t value; /* STATUS_REPLY: uptime ms; STOP_REPLY: members */
	uint32_t count; /* STATUS_REPLY: members that follow */
	uint32_t reserved;
	char prog[FABSIMD_PROG_MAX];
	char text[FABSIMD_TEXT_MAX]; /* replies with an error: the message */
};

struct fabsimd_wire_member {
	uint32_t node;
	int32_t pid;
	uint64_t attached_ms;
	char prog[FABSIMD_PROG_MAX];
};

struct fabsimd_status_msg {
	struct fabsimd_msg head;
	struct fabsimd_wire_member members[FABSIMD_MEMBERS_MAX];
};

/* The files of one fabric. */
struct fabsimd_paths {
	char fabric[FABSIMD_FABRIC_MAX + 1];
	char dir[PATH_MAX];
	char sock[PATH_MAX];
	char lock[PATH_MAX];
	char log[PATH_MAX];
	char segment[FABSIMD_FABRIC_MAX + 40];
};

/* What the coordinator is started with (copied into its own state). */
struct fabsimd_daemon_config {
	struct fabsimd_paths paths;
	bool persistent;
	int idle_timeout_ms; /* on demand and nobody attached: exit after */
};

FABSIMD_HIDDEN void fabsimd_seterr(char *err, size_t errlen, const char *fmt,
				   ...) __attribute__((format(printf, 3, 4)));
FABSIMD_HIDDEN int fabsimd_paths_init(struct fabsimd_paths *p,
				      const char *fabric, char *err,
				      size_t errlen);
FABSIMD_HIDDEN void fabsimd_msg_init(struct fabsimd_msg *m, int type);
FABSIMD_HIDDEN bool fabsimd_msg_valid(const struct fabsimd_msg *m, ssize_t n);
FABSIMD_HIDDEN uint64_t fabsimd_now_ms(void);

/* A sockaddr_un for `path`; a path too long for sun_path is reached
 * through /proc/self/fd/<dirfd>/ (*dirfd is then opened; close it after). */
FABSIMD_HIDDEN int fabsimd_sockaddr(const char *path, struct sockaddr_un *sa,
				    socklen_t *salen, int *dirfd);

/* Takes the fabric's lock file (flock LOCK_EX), waiting at most
 * `timeout_ms`; returns its fd. The file may be removed by its holder: the
 * lock is retaken when the path names another file than the one locked. */
FABSIMD_HIDDEN int fabsimd_lock(const struct fabsimd_paths *p, int timeout_ms,
				bool wait, char *err, size_t errlen);

/* shm_unlink()s the fabric's segment; returns how many were removed (0
 * or 1). */
FABSIMD_HIDDEN int fabsimd_remove_segments(const struct fabsimd_paths *p);
/* A process other than `except` that has the fabric's segment mapped, from
 * /proc/<pid>/maps of the processes this user may read; 0 when none does,
 * -1 when some map could not be read (out of descriptors, say): it may. */
FABSIMD_HIDDEN pid_t fabsimd_segment_user(const struct fabsimd_paths *p,
					  pid_t except);
/* Whether process `pid` has the fabric's segment mapped: 1, or 0 (also
 * when it is gone or another user's), or -errno when its map cannot be
 * read. */
FABSIMD_HIDDEN int fabsimd_segment_mapped_by(const struct fabsimd_paths *p,
					     pid_t pid);
/* Removes the fabric's segment unless a process other than `except` may
 * map it (*user: that process, -1 when that cannot be told, else 0);
 * returns how many it removed. */
FABSIMD_HIDDEN int fabsimd_remove_unused_segments(const struct fabsimd_paths *p,
						  pid_t except, pid_t *user);
/* Calls fn for each fabric of this runtime directory that has memory in
 * /dev/shm; how many. */
FABSIMD_HIDDEN size_t fabsimd_fabrics_in_memory(
	void (*fn)(const char *fabric, void *arg), void *arg);

/* Calls fn for each segment in /dev/shm of this user's fabrics of another
 * runtime directory whose creator named that directory in it (its arena
 * label, which its name's hash confirms); how many. */
FABSIMD_HIDDEN size_t fabsimd_memory_of_other_dirs(
	void (*fn)(const char *segment, const char *dir, void *arg), void *arg);

/* One line "date time [pid] text" appended to the fabric's log. */
FABSIMD_HIDDEN void fabsimd_log_fd(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
FABSIMD_HIDDEN void fabsimd_log_path(const struct fabsimd_paths *p,
				     const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The coordinator's loop (daemon.c): runs in the process fork() made for
 * it, over the listening socket `listen_fd`, and ends the process. */
FABSIMD_HIDDEN void fabsimd_daemon_main(const struct fabsimd_daemon_config *c,
					int listen_fd)
	__attribute__((noreturn));

#endif
