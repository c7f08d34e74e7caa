/* SPDX-License-Identifier: BSD-2-Clause
 * fabsimd's names and files: fabric names, the runtime directory and its
 * safety checks, the per-fabric paths, the lock, the log, the shared-memory
 * segment names, and the node identity from the environment. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <arena/arena.h>

#include "fabsimd_int.h"

void fabsimd_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The kernel's clocks, not libc's: under `fabsim run --virtual-clock` the
 * program's (and the coordinator it forks) read virtual time, which stands
 * still while processes wait — the coordinator's timeouts, its log and
 * `fabsim fabric status` are about real time. */
static void real_clock(clockid_t id, struct timespec *ts)
{
	syscall(SYS_clock_gettime, id, ts);
}

uint64_t fabsimd_now_ms(void)
{
	struct timespec ts;

	real_clock(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void fabsimd_msg_init(struct fabsimd_msg *m, int type)
{
	memset(m, 0, sizeof(*m));
	m->magic = FABSIMD_MAGIC;
	m->version = FABSIMD_VERSION;
	m->type = (uint16_t)type;
}

bool fabsimd_msg_valid(const struct fabsimd_msg *m, ssize_t n)
{
	return n >= (ssize_t)sizeof(*m) && m->magic == FABSIMD_MAGIC &&
	       m->version == FABSIMD_VERSION;
}

const char *fabsimd_default_fabric(void)
{
	const char *f = getenv("FI_SIM_FABRIC");

	return f && *f ? f : FABSIMD_DEFAULT_FABRIC;
}

int fabsimd_check_name(const char *fabric, char *err, size_t errlen)
{
	size_t n;

	if (!fabric) {
		fabsimd_seterr(err, errlen, "no fabric name given");
		return -EINVAL;
	}
	n = strlen(fabric);
	if (n == 0 || n > FABSIMD_FABRIC_MAX) {
		fabsimd_seterr(err, errlen,
			       "fabric name \"%.80s%s\" is %zu characters long; "
			       "it must have 1 to %d", fabric,
			       n > 80 ? "..." : "", n, FABSIMD_FABRIC_MAX);
		return -EINVAL;
	}
	/* Its files are NAME.sock, NAME.lock, NAME.log: a leading '.' would
	 * hide them ("..sock"), a leading '-' reads as an option. */
	if (fabric[0] == '.' || fabric[0] == '-') {
		fabsimd_seterr(err, errlen,
			       "fabric name \"%s\" starts with '%c'; it must "
			       "start with a letter, a digit or '_'", fabric,
			       fabric[0]);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)fabric[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
			continue;
		fabsimd_seterr(err, errlen,
			       "fabric name \"%s\": character %zu (0x%02x) is "
			       "not allowed; use letters, digits, '.', '_' and "
			       "'-'", fabric, i + 1, c);
		return -EINVAL;
	}
	return 0;
}


/* Creates `dir` 0700 if missing, then checks it is safe to use. */
static int prepare_dir(const char *dir, const char *origin, char *err,
		       size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) == 0) {
		if (chmod(dir, 0700)) /* whatever the umask removed */
			goto stat_failed;
	} else if (errno != EEXIST) {
		int e = errno;

		fabsimd_seterr(err, errlen,
			       "cannot create the runtime directory %s (%s): %s",
			       dir, origin, strerror(e));
		return -e;
	}
	if (lstat(dir, &st))
		goto stat_failed;
	if (S_ISLNK(st.st_mode)) {
		fabsimd_seterr(err, errlen,
			       "runtime directory %s (%s) is a symbolic link; "
			       "refusing to use it", dir, origin);
		return -ELOOP;
	}
	if (!S_ISDIR(st.st_mode)) {
		fabsimd_seterr(err, errlen,
			       "runtime directory %s (%s) is not a directory",
			       dir, origin);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		fabsimd_seterr(err, errlen,
			       "runtime directory %s (%s) belongs to uid %u, "
			       "not to us (uid %u); refusing to use it", dir,
			       origin, (unsigned)st.st_uid,
			       (unsigned)geteuid());
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0700) {
		fabsimd_seterr(err, errlen,
			       "runtime directory %s (%s) has mode %04o; it "
			       "must be 0700 (chmod 700 it or remove it)", dir,
			       origin, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;

stat_failed: {
	int e = errno;

	fabsimd_seterr(err, errlen, "runtime directory %s (%s): %s", dir,
		       origin, strerror(e));
	return -e;
}
}

/* $XDG_RUNTIME_DIR is usable: an absolute path to a directory of ours we
 * can write in. */
static bool xdg_usable(const char *xdg)
{
	struct stat st;

	return xdg && xdg[0] == '/' && !stat(xdg, &st) && S_ISDIR(st.st_mode) &&
	       st.st_uid == geteuid() && !access(xdg, W_OK | X_OK);
}

/* The runtime directory's path, and which setting gave it; its length, or
 * -1 when it does not fit, or -2 when the current directory (a relative
 * one's base) cannot be told (errno says why). */
static int runtime_dir_path(char *buf, size_t len, const char **origin)
{
	const char *own = getenv("FABSIM_RUNTIME_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (own && *own) {
		char cwd[PATH_MAX] = "";

		/* A relative one is taken from the current directory: the
		 * coordinator runs from / and must find the same one. */
		*origin = "$FABSIM_RUNTIME_DIR";
		if (*own != '/' && !getcwd(cwd, sizeof(cwd)))
			return -2;
		n = snprintf(buf, len, "%s%s%s", cwd,
			     *own != '/' && strcmp(cwd, "/") ? "/" : "", own);
		/* A trailing slash would make lstat() follow a symlink. */
		while (n > 1 && (size_t)n < len && buf[n - 1] == '/')
			buf[--n] = '\0';
	} else if (xdg_usable(xdg)) {
		*origin = "$XDG_RUNTIME_DIR/fabsim";
		n = snprintf(buf, len, "%s/fabsim", xdg);
	} else {
		*origin = "/tmp/fabsim-<uid>";
		n = snprintf(buf, len, "/tmp/fabsim-%u", (unsigned)geteuid());
	}
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int fabsimd_runtime_dir(char *buf, size_t len, char *err, size_t errlen)
{
	const char *origin;
	int n = runtime_dir_path(buf, len, &origin);

	if (n == -2) {
		int why = errno;

		fabsimd_seterr(err, errlen, "runtime directory (%s) is relative "
			       "and the current directory cannot be told: %s",
			       origin, strerror(why));
		return -why;
	}
	if (n < 0) {
		fabsimd_seterr(err, errlen, "runtime directory (%s) is longer "
			       "than %zu characters", origin, len - 1);
		return -ENAMETOOLONG;
	}
	return prepare_dir(buf, origin, err, errlen);
}

/* FNV-1a, 32 bits. */
static uint32_t hash_text(const char *text)
{
	uint32_t h = 2166136261u;

	for (; *text; text++)
		h = (h ^ (uint8_t)*text) * 16777619u;
	return h;
}

int fabsimd_segment_name(const char *fabric, char *buf, size_t len)
{
	char dir[PATH_MAX];
	const char *origin;
	int n;

	if (fabsimd_check_name(fabric, NULL, 0))
		return -EINVAL;
	/* Fabrics are named within a runtime directory (its coordinators
	 * live there), but shared memory has one namespace for the whole
	 * machine: the directory is part of the name, so that runs with
	 * their own directories (tests side by side) never meet. */
	if (runtime_dir_path(dir, sizeof(dir), &origin) < 0)
		return -ENAMETOOLONG;
	n = snprintf(buf, len, "/fabsim-%u-%08x-%s", (unsigned)geteuid(),
		     hash_text(dir), fabric);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

int fabsimd_segment_origin(char *buf, size_t len)
{
	const char *origin;
	int n = runtime_dir_path(buf, len, &origin);

	return n < 0 ? -ENAMETOOLONG : n;
}

int fabsimd_paths_init(struct fabsimd_paths *p, const char *fabric, char *err,
		       size_t errlen)
{
	int rc;

	memset(p, 0, sizeof(*p));
	if (!fabric)
		fabric = fabsimd_default_fabric();
	rc = fabsimd_check_name(fabric, err, errlen);
	if (rc)
		return rc;
	snprintf(p->fabric, sizeof(p->fabric), "%s", fabric);
	rc = fabsimd_runtime_dir(p->dir, sizeof(p->dir), err, errlen);
	if (rc)
		return rc;
	if (strlen(p->dir) + 1 + strlen(fabric) + 6 >= sizeof(p->sock)) {
		fabsimd_seterr(err, errlen, "runtime directory %s is too long",
			       p->dir);
		return -ENAMETOOLONG;
	}
	snprintf(p->sock, sizeof(p->sock), "%s/%s.sock", p->dir, fabric);
	snprintf(p->lock, sizeof(p->lock), "%s/%s.lock", p->dir, fabric);
	snprintf(p->log, sizeof(p->log), "%s/%s.log", p->dir, fabric);
	rc = fabsimd_segment_name(fabric, p->segment, sizeof(p->segment));
	return rc < 0 ? rc : 0;
}

int fabsimd_sockaddr(const char *path, struct sockaddr_un *sa,
		     socklen_t *salen, int *dirfd)
{
	const char *slash;
	char dir[PATH_MAX];
	int n;

	*dirfd = -1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) < sizeof(sa->sun_path)) {
		snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
		*salen = (socklen_t)sizeof(*sa);
		return 0;
	}
	/* Too long for sun_path: through the directory's descriptor. */
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	*dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0)
		return -errno;
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s",
		     *dirfd, slash + 1);
	if (n < 0 || (size_t)n >= sizeof(sa->sun_path)) {
		close(*dirfd);
		*dirfd = -1;
		return -ENAMETOOLONG;
	}
	*salen = (socklen_t)sizeof(*sa);
	return 0;
}

int fabsimd_lock(const struct fabsimd_paths *p, int timeout_ms, bool wait,
		 char *err, size_t errlen)
{
	uint64_t deadline = fabsimd_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		struct stat held, named;
		int fd = open(p->lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			      0600);

		if (fd < 0) {
			int e = errno;

			fabsimd_seterr(err, errlen, "cannot open the lock file "
				       "%s: %s", p->lock, strerror(e));
			return -e;
		}
		while (flock(fd, LOCK_EX | LOCK_NB)) {
			int e = errno;

			if (e == EINTR)
				continue;
			if (e != EWOULDBLOCK) {
				close(fd);
				fabsimd_seterr(err, errlen, "cannot lock %s: "
					       "%s", p->lock, strerror(e));
				return -e;
			}
			if (!wait || fabsimd_now_ms() >= deadline) {
				close(fd);
				fabsimd_seterr(err, errlen, "the lock file %s "
					       "stayed locked for %d ms",
					       p->lock, timeout_ms);
				return -ETIMEDOUT;
			}
			/* Real time, as fabsimd_now_ms (a preloaded
			 * virtual clock takes the program's sleeps). */
			syscall(SYS_nanosleep,
				&(struct timespec){ 0, 1000000 }, NULL);
		}
		/* Its holder may have removed it before we got it. */
		if (!fstat(fd, &held) && !lstat(p->lock, &named) &&
		    held.st_dev == named.st_dev && held.st_ino == named.st_ino)
			return fd;
		close(fd);
		if (fabsimd_now_ms() >= deadline) {
			fabsimd_seterr(err, errlen, "the lock file %s kept "
				       "changing for %d ms", p->lock,
				       timeout_ms);
			return -ETIMEDOUT;
		}
	}
}

/* Whether a maps line names /dev/shm/<base> (" (deleted)" once removed). */
static bool maps_segment(const char *line, const char *base, size_t baselen)
{
	const char *at = strstr(line, "/dev/shm/");

	if (!at)
		return false;
	at += strlen("/dev/shm/");
	return !strncmp(at, base, baselen) &&
	       (at[baselen] == '\n' || at[baselen] == ' ' ||
		at[baselen] == '\0');
}

int fabsimd_segment_mapped_by(const struct fabsimd_paths *p, pid_t pid)
{
	const char *base = p->segment + 1; /* without the leading '/' */
	size_t baselen = strlen(base);
	char path[64], line[1024];
	bool found = false;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	if (!maps)
		/* Gone, or another user's (whose processes cannot map our
		 * 0600 segment): not mapped. Out of descriptors or memory:
		 * nothing can be told. */
		return errno == ENOENT || errno == ESRCH || errno == EACCES ||
				       errno == EPERM
			       ? 0
			       : -errno;
	while (!found && fgets(line, sizeof(line), maps))
		found = maps_segment(line, base, baselen);
	fclose(maps);
	return found;
}

pid_t fabsimd_segment_user(const struct fabsimd_paths *p, pid_t except)
{
	pid_t user = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	if (!d)
		return -1;
	while (!user && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		int mapped;

		if (*end || pid <= 0 || pid == except)
			continue;
		mapped = fabsimd_segment_mapped_by(p, (pid_t)pid);
		if (mapped)
			user = mapped > 0 ? (pid_t)pid : -1;
	}
	closedir(d);
	return user;
}

int fabsimd_remove_unused_segments(const struct fabsimd_paths *p,
				   pid_t except, pid_t *user)
{
	*user = fabsimd_segment_user(p, except);
	return *user ? 0 : fabsimd_remove_segments(p);
}

int fabsimd_remove_segments(const struct fabsimd_paths *p)
{
	return shm_unlink(p->segment) ? 0 : 1;
}

size_t fabsimd_fabrics_in_memory(void (*fn)(const char *fabric, void *arg),
				 void *arg)
{
	char prefix[NAME_MAX + 2];
	size_t prefixlen, found = 0;
	struct dirent *e;
	DIR *d;
	int n = fabsimd_segment_name("x", prefix, sizeof(prefix));

	if (n < 2)
		return 0;
	prefixlen = (size_t)n - 2; /* without the leading '/' and the "x" */
	d = opendir("/dev/shm");
	if (!d)
		return 0;
	/* fn may remove the entry it is given: readdir goes on all the
	 * same. */
	while ((e = readdir(d))) {
		const char *fabric = e->d_name + prefixlen;

		if (strncmp(e->d_name, prefix + 1, prefixlen) ||
		    fabsimd_check_name(fabric, NULL, 0))
			continue;
		fn(fabric, arg);
		found++;
	}
	closedir(d);
	return found;
}

/* "fabsim-<uid>-": where every segment of this user's fabrics starts. */
static int user_prefix(char *buf, size_t len)
{
	int n = snprintf(buf, len, "fabsim-%u-", (unsigned)geteuid());

	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* The 8 hex digits after the user's prefix, and a fabric name after
 * them: one of our fabrics' segments (not another program's name that
 * starts alike). */
static bool parse_segment(const char *rest, uint32_t *hash)
{
	char *end;
	unsigned long h;

	for (int i = 0; i < 8; i++)
		if (!isxdigit((unsigned char)rest[i]))
			return false;
	if (rest[8] != '-' || fabsimd_check_name(rest + 9, NULL, 0))
		return false;
	h = strtoul(rest, &end, 16);
	if (end != rest + 8)
		return false;
	*hash = (uint32_t)h;
	return true;
}

size_t fabsimd_memory_of_other_dirs(void (*fn)(const char *segment,
					       const char *dir, void *arg),
				    void *arg)
{
	char prefix[32], own[PATH_MAX], dir[PATH_MAX];
	char segment[NAME_MAX + 2];
	const char *origin;
	uint32_t own_hash, hash;
	size_t found = 0;
	struct dirent *e;
	int prefixlen = user_prefix(prefix, sizeof(prefix));
	DIR *d;

	if (prefixlen < 0 || runtime_dir_path(own, sizeof(own), &origin) < 0)
		return 0;
	own_hash = hash_text(own);
	d = opendir("/dev/shm");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, (size_t)prefixlen) ||
		    !parse_segment(e->d_name + prefixlen, &hash) ||
		    hash == own_hash)
			continue;
		snprintf(segment, sizeof(segment), "/%s", e->d_name);
		/* Its creator's runtime directory, if it said (and the
		 * name agrees: a label is a claim). */
		if (fs_arena_label(segment, dir, sizeof(dir)) <= 0 ||
		    dir[0] != '/' || hash_text(dir) != hash)
			continue;
		fn(segment, dir, arg);
		found++;
	}
	closedir(d);
	return found;
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian). */
static void civil_date(int64_t days, int *y, unsigned *m, unsigned *d)
{
	int64_t era, z = days + 719468;
	unsigned doe, yoe, doy, mp;

	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

static void log_vline(int fd, const char *fmt, va_list ap)
{
	char line[512];
	struct timespec ts;
	unsigned mo, day;
	int y, n, m;
	int64_t s;

	if (fd < 0)
		return;
	real_clock(CLOCK_REALTIME, &ts);
	s = ts.tv_sec;
	civil_date(s / 86400, &y, &mo, &day);
	n = snprintf(line, sizeof(line),
		     "%04d-%02u-%02u %02d:%02d:%02d.%03ld UTC [%d] ", y, mo, day,
		     (int)(s % 86400 / 3600), (int)(s % 3600 / 60),
		     (int)(s % 60), ts.tv_nsec / 1000000, (int)getpid());
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* O_APPEND: one write() is one whole line. */
	if (write(fd, line, (size_t)n) < 0)
		return;
}

void fabsimd_log_fd(int fd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(fd, fmt, ap);
	va_end(ap);
}

void fabsimd_log_path(const struct fabsimd_paths *p, const char *fmt, ...)
{
	int fd = open(p->log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
			      O_NOFOLLOW, 0600);
	va_list ap;

	va_start(ap, fmt);
	log_vline(fd, fmt, ap);
	va_end(ap);
	if (fd >= 0)
		close(fd);
}

static const char *const identity_vars[] = {
	"FI_SIM_NODE", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
	"SLURM_PROCID",
};

int fabsimd_node_identity(uint32_t *node_out, const char **source_out,
			  char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(identity_vars) / sizeof(*identity_vars);
	     i++) {
		const char *v = getenv(identity_vars[i]);
		uint64_t value = 0;
		size_t k;

		if (!v || !*v)
			continue;
		for (k = 0; v[k] >= '0' && v[k] <= '9' && k < 12; k++)
			value = value * 10 + (uint64_t)(v[k] - '0');
		if (v[k] != '\0' || value >= UINT32_MAX) {
			fabsimd_seterr(err, errlen,
				       "%s=\"%.40s%s\" is not a node number: "
				       "use a decimal number from 0 to %u",
				       identity_vars[i], v,
				       strlen(v) > 40 ? "..." : "",
				       UINT32_MAX - 1);
			return -EINVAL;
		}
		if (node_out)
			*node_out = (uint32_t)value;
		if (source_out)
			*source_out = identity_vars[i];
		return 0;
	}
	fabsimd_seterr(err, errlen,
		       "no node identity in the environment (FI_SIM_NODE, "
		       "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID "
		       "are unset)");
	return -ENOENT;
}
