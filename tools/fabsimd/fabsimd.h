/* SPDX-License-Identifier: BSD-2-Clause
 * fabsimd: the lifecycle keeper of a shared simulated fabric (README.md).
 *
 * Processes of one user on one machine attach to a fabric by name. The
 * fabric's coordinator is started on demand by the first process that
 * attaches (or by `fabsim fabric start NAME`), knows who is attached with
 * which node identity, tells the members when one joins, leaves or dies,
 * and when the last member leaves it removes the fabric's files and shared
 * memory and exits. It is not on the data path.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; when `err` is not NULL it then receives a one-line message that
 * names the object and the value that was wrong. */
#ifndef FABSIMD_FABSIMD_H
#define FABSIMD_FABSIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FABSIMD_FABRIC_MAX 64   /* longest fabric name */
#define FABSIMD_PROG_MAX 32     /* program name, with its NUL */
#define FABSIMD_MEMBERS_MAX 256 /* members of one fabric */
#define FABSIMD_DEFAULT_FABRIC "default"

/* Who attaches. The pid is not given: the coordinator reads it from the
 * connection (SO_PEERCRED). */
struct fabsimd_member_info {
	uint32_t node;    /* node identity, e.g. from fabsimd_node_identity() */
	const char *prog; /* short program name; NULL: this process's name */
};

enum fabsimd_notice_kind {
	FABSIMD_NOTICE_JOINED = 1, /* another member attached */
	FABSIMD_NOTICE_LEFT,       /* another member detached cleanly */
	FABSIMD_NOTICE_DIED,       /* another member ended without detaching */
	FABSIMD_NOTICE_STOPPING,   /* `fabsim fabric stop`: the fabric ends */
	FABSIMD_NOTICE_LOST,       /* the coordinator is gone (reported once) */
};

struct fabsimd_notice {
	enum fabsimd_notice_kind kind;
	uint32_t node;               /* JOINED, LEFT, DIED: the member's */
	pid_t pid;                   /* JOINED, LEFT, DIED: the member's */
	char prog[FABSIMD_PROG_MAX]; /* JOINED, LEFT, DIED: the member's */
};

struct fabsimd_member_status {
	uint32_t node;
	pid_t pid;
	char prog[FABSIMD_PROG_MAX];
	uint64_t attached_ms; /* how long it has been attached */
};

struct fabsimd_status {
	pid_t pid;          /* the coordinator's */
	bool persistent;    /* started by `fabsim fabric start`: stays */
	uint64_t uptime_ms; /* since the coordinator started */
	size_t count;       /* members[0 .. count-1] */
	struct fabsimd_member_status members[FABSIMD_MEMBERS_MAX];
};

struct fabsimd_session;

/* Attaches this process to `fabric` (NULL: $FI_SIM_FABRIC, else
 * "default") as node me->node, starting the coordinator if none runs.
 * Membership lasts as long as the session: fabsimd_detach() leaves
 * cleanly, the process ending without it is reported as a death.
 * -EADDRINUSE when the node is attached already, -EINVAL for a bad name,
 * -EPERM/-ELOOP/-ENOTDIR for an unsafe runtime directory. */
int fabsimd_attach(const char *fabric, const struct fabsimd_member_info *me,
		   struct fabsimd_session **out, char *err, size_t errlen);

/* A file descriptor that polls readable when a notice may be waiting. */
int fabsimd_session_fd(const struct fabsimd_session *session);

/* The coordinator's pid. */
pid_t fabsimd_session_coordinator(const struct fabsimd_session *session);

/* The next notice, without blocking: 0 and *out filled, -EAGAIN when none
 * is waiting, -ENOTCONN after FABSIMD_NOTICE_LOST was reported. */
int fabsimd_next_notice(struct fabsimd_session *session,
			struct fabsimd_notice *out);

/* Leaves cleanly (the others get FABSIMD_NOTICE_LEFT) and frees the
 * session. NULL is ignored. */
void fabsimd_detach(struct fabsimd_session *session);

/* Tells the coordinator of a process that runs node `node` of the fabric
 * but attached before this coordinator started (its predecessor was
 * killed): the coordinator lists it and watches its process as a member's
 * (it stays while that process runs). One it knows already, one of
 * another user or one that has ended is ignored. 0 or -errno (the
 * message could not be sent). */
int fabsimd_adopt(struct fabsimd_session *session, uint32_t node, pid_t pid);

/* This process started the session's coordinator (none answered). */
bool fabsimd_session_started(const struct fabsimd_session *session);
/* The session's coordinator has gone (its connection closed). */
bool fabsimd_session_lost(const struct fabsimd_session *session);

/* For the last process to leave `fabric` (after fabsimd_detach): when no
 * coordinator runs (it was killed and none replaced it) and no other
 * process maps the fabric's shared memory, removes it and the stale
 * socket, as the coordinator would have. Returns the segments removed. */
int fabsimd_last_one_out(const char *fabric);

/* What the coordinator of `fabric` knows. -ENOENT (and "no fabric NAME is
 * running") when none runs. */
int fabsimd_status(const char *fabric, struct fabsimd_status *out, char *err,
		   size_t errlen);

/* Tells the members "fabric stopping", then ends the coordinator and waits
 * (a few seconds at most) until it is gone. Returns the number of members
 * notified, -ENOENT when none runs. *pid_out (if not NULL): the
 * coordinator's pid. */
int fabsimd_stop(const char *fabric, pid_t *pid_out, char *err, size_t errlen);

/* Starts the coordinator without attaching. persistent: it stays when
 * members leave, until fabsimd_stop(); otherwise it ends with its last
 * member, or after an idle timeout if nobody ever attaches. Returns 0 when
 * it started one, 1 when one was running already (made persistent if
 * asked); *pid_out (if not NULL): the coordinator's pid. */
int fabsimd_start(const char *fabric, bool persistent, pid_t *pid_out,
		  char *err, size_t errlen);

/* The node identity the environment gives: FI_SIM_NODE, else the
 * launcher's rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID,
 * in that order). An empty variable counts as unset. *source_out (if not
 * NULL) names the variable used. -ENOENT when none is set (the provider
 * then names the node after the address the program binds), -EINVAL for a
 * value that is not a decimal number below 2^32-1. */
int fabsimd_node_identity(uint32_t *node_out, const char **source_out,
			  char *err, size_t errlen);

/* The name of the fabric's shared-memory segment,
 * "/fabsim-<uid>-<hash of the runtime directory>-<fabric>" (one per fabric:
 * fabric names may contain '-', so no suffix could tell a further segment
 * of fabric "a" from fabric "a-1"'s). Returns its length, -EINVAL for a bad
 * fabric name, -ENAMETOOLONG when `len` is too small. */
int fabsimd_segment_name(const char *fabric, char *buf, size_t len);

/* What a fabric's creator writes into its segment (fs_arena_set_label): the
 * runtime directory its name was made from, so that the memory a crashed run
 * left can be found and removed once that directory is gone. Its length,
 * or -ENAMETOOLONG. */
int fabsimd_segment_origin(char *buf, size_t len);

/* The runtime directory ($FABSIM_RUNTIME_DIR, else $XDG_RUNTIME_DIR/fabsim,
 * else /tmp/fabsim-<uid>), created 0700 if missing and checked: a directory,
 * not a symlink, ours, mode 0700. */
int fabsimd_runtime_dir(char *buf, size_t len, char *err, size_t errlen);

/* 0 when `fabric` is a valid fabric name ([A-Za-z0-9._-]{1,64}). */
int fabsimd_check_name(const char *fabric, char *err, size_t errlen);

/* The fabric a NULL name means: $FI_SIM_FABRIC, else "default". */
const char *fabsimd_default_fabric(void);

#ifdef __cplusplus
}
#endif

#endif
