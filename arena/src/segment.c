/* SPDX-License-Identifier: BSD-2-Clause
 * The segment: creating, attaching, detaching and removing a named arena, the choice of its
 * address, and private arenas.
 *
 * Address rule: the creator derives candidates from a hash of the name, 1 GiB-aligned
 * slots in [ARENA_REGION_LO, ARENA_REGION_HI), and maps the segment at the first candidate
 * that is free in its own address space (MAP_FIXED_NOREPLACE), trying up to
 * ARENA_ADDRESS_TRIES candidates. The address goes into the header; an attacher reads it
 * from there and maps at exactly that address, or fails with -EADDRINUSE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arena_internal.h"

/* How long an attacher waits for a creator that has made the name but not yet written the
 * header. */
#define ATTACH_WAIT_NS 1000000000LL
#define ATTACH_POLL_NS 1000000L

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int check_name(const char *name, char *err, size_t errlen)
{
	size_t len;

	if (!name) {
		set_err(err, errlen, "arena name is NULL");
		return -EINVAL;
	}
	len = strlen(name);
	if (len < 2 || name[0] != '/' || strchr(name + 1, '/') || len > NAME_MAX) {
		set_err(err, errlen,
			"arena name \"%s\" must be \"/\" then 1 to %d characters without \"/\"",
			name, NAME_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The try-th candidate address for a segment of cap bytes named name. */
static uint64_t candidate_address(const char *name, unsigned try, uint64_t cap)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	uint64_t span = (cap + ARENA_SLOT - 1) & ~(ARENA_SLOT - 1);
	uint64_t slots = (ARENA_REGION_HI - ARENA_REGION_LO - span) / ARENA_SLOT + 1;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return ARENA_REGION_LO + (mix64(h + try) % slots) * ARENA_SLOT;
}

/* Maps exactly at addr without replacing anything: 0, -EEXIST if the range is taken, or
 * -errno. */
static int map_exact(uint64_t addr, uint64_t len, int flags, int fd)
{
	void *p = mmap((void *)(uintptr_t)addr, len, PROT_READ | PROT_WRITE,
		       flags | MAP_FIXED_NOREPLACE, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	if ((uintptr_t)p != addr) { /* a kernel before 4.17 took the flag as a hint */
		munmap(p, len);
		return -EEXIST;
	}
	return 0;
}

/* Describes the first mapping of this process that overlaps [lo, hi), for messages. */
static void describe_occupant(uint64_t lo, uint64_t hi, char *out, size_t outlen)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	snprintf(out, outlen, "unknown mapping");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		int path_at = 0;

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &start, &end, &path_at) < 2)
			continue;
		if (start < hi && end > lo) {
			char *path = path_at ? line + path_at : "";

			path[strcspn(path, "\n")] = '\0';
			snprintf(out, outlen, "0x%llx-0x%llx %s", start, end,
				 *path ? path : "(anonymous)");
			break;
		}
	}
	fclose(f);
}

/* Reserves the header's pages and fills in the header of a fresh mapping at a. */
static int header_init(fs_arena *a, uint64_t cap, bool shared)
{
	size_t hdr = (ARENA_HEAP_START + page_size() - 1) & ~(page_size() - 1);
	int rc;

	if (madvise(a, hdr, MADV_POPULATE_WRITE) != 0 && errno != EINVAL)
		return -ENOMEM;
	memset(a, 0, ARENA_HEAP_START);
	a->version = ARENA_VERSION;
	a->header_size = (uint32_t)sizeof(*a);
	a->base = (uint64_t)(uintptr_t)a;
	a->capacity = cap;
	a->shared = shared;
	rc = arena_mutex_init(&a->alloc_lock, shared);
	if (!rc)
		rc = arena_mutex_init(&a->user_lock, shared);
	if (rc)
		return rc;
	arena_alloc_init(a);
	__atomic_store_n(&a->magic, ARENA_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

static int check_capacity(size_t capacity, uint64_t *cap, const char *what, char *err,
			  size_t errlen)
{
	size_t page = page_size();

	if (capacity < ARENA_HEAP_START + CHUNK_MIN || capacity > ARENA_MAX_CAPACITY) {
		set_err(err, errlen, "%s: capacity %zu bytes is outside [%zu, %llu]", what,
			capacity, (size_t)(ARENA_HEAP_START + CHUNK_MIN),
			(unsigned long long)ARENA_MAX_CAPACITY);
		return -EINVAL;
	}
	*cap = ((uint64_t)capacity + page - 1) & ~(uint64_t)(page - 1);
	return 0;
}

int fs_arena_create(const char *name, size_t capacity, fs_arena **out, char *err,
		    size_t errlen)
{
	uint64_t cap, addr = 0;
	int fd, rc;

	if (out)
		*out = NULL;
	rc = check_name(name, err, errlen);
	if (rc)
		return rc;
	if (!out) {
		set_err(err, errlen, "arena %s: out is NULL", name);
		return -EINVAL;
	}
	rc = check_capacity(capacity, &cap, name, err, errlen);
	if (rc)
		return rc;

	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		if (rc == -EEXIST)
			set_err(err, errlen,
				"arena %s exists already (another run, or a stale one to unlink)",
				name);
		else
			set_err(err, errlen, "arena %s: shm_open: %s", name, strerror(-rc));
		return rc;
	}
	if (ftruncate(fd, (off_t)cap) != 0) {
		rc = -errno;
		set_err(err, errlen, "arena %s: ftruncate to %llu bytes: %s", name,
			(unsigned long long)cap, strerror(-rc));
		goto fail;
	}
	rc = -EEXIST;
	for (unsigned t = 0; t < ARENA_ADDRESS_TRIES && rc == -EEXIST; t++) {
		addr = candidate_address(name, t, cap);
		rc = map_exact(addr, cap, MAP_SHARED, fd);
	}
	if (rc == -EEXIST) {
		rc = -EADDRINUSE;
		set_err(err, errlen, "arena %s: %d candidate ranges of %llu bytes are all taken "
			"in this process (last 0x%llx)", name, ARENA_ADDRESS_TRIES,
			(unsigned long long)cap, (unsigned long long)addr);
		goto fail;
	}
	if (rc) {
		set_err(err, errlen, "arena %s: mmap of %llu bytes at 0x%llx: %s", name,
			(unsigned long long)cap, (unsigned long long)addr, strerror(-rc));
		goto fail;
	}
	rc = header_init((fs_arena *)(uintptr_t)addr, cap, true);
	if (rc) {
		set_err(err, errlen, "arena %s: cannot set up the header: %s (is /dev/shm full?)",
			name, strerror(-rc));
		munmap((void *)(uintptr_t)addr, cap);
		goto fail;
	}
	close(fd);
	*out = (fs_arena *)(uintptr_t)addr;
	return 0;
fail:
	close(fd);
	shm_unlink(name);
	return rc;
}

/* Reads the header of the segment open on fd into *hdr, waiting a little for a creator
 * that has not finished. 0 or -EPROTO. */
static int read_header(const char *name, int fd, fs_arena *hdr, char *err, size_t errlen)
{
	struct timespec nap = {0, ATTACH_POLL_NS};
	long long waited = 0;
	struct stat st;

	for (;;) {
		uint64_t magic = 0;

		if (fstat(fd, &st) != 0) {
			set_err(err, errlen, "arena %s: fstat: %s", name, strerror(errno));
			return -errno;
		}
		if ((uint64_t)st.st_size >= sizeof(*hdr)) {
			const fs_arena *peek =
				mmap(NULL, sizeof(*hdr), PROT_READ, MAP_SHARED, fd, 0);

			if (peek == MAP_FAILED) {
				set_err(err, errlen, "arena %s: mmap of the header: %s", name,
					strerror(errno));
				return -errno;
			}
			magic = __atomic_load_n(&peek->magic, __ATOMIC_ACQUIRE);
			if (magic == ARENA_MAGIC)
				memcpy(hdr, peek, sizeof(*hdr));
			munmap((void *)peek, sizeof(*hdr));
		}
		if (magic == ARENA_MAGIC)
			break;
		if (magic != 0) {
			set_err(err, errlen, "%s is not an arena (first bytes 0x%016llx)", name,
				(unsigned long long)magic);
			return -EPROTO;
		}
		if (waited >= ATTACH_WAIT_NS) {
			set_err(err, errlen, "%s is not an arena (%lld bytes, no header after %lld "
				"ms; or its creator died while creating it)", name,
				(long long)st.st_size, waited / 1000000);
			return -EPROTO;
		}
		/* Real time (a preloaded virtual clock takes the program's
		 * sleeps): the creator is another process. */
		syscall(SYS_nanosleep, &nap, NULL);
		waited += ATTACH_POLL_NS;
	}
	if (hdr->version != ARENA_VERSION || hdr->header_size != sizeof(*hdr)) {
		set_err(err, errlen, "arena %s has version %u, header %u bytes; this library "
			"speaks version %u, %zu bytes", name, hdr->version, hdr->header_size,
			ARENA_VERSION, sizeof(*hdr));
		return -EPROTO;
	}
	if (!hdr->shared || hdr->capacity != (uint64_t)st.st_size ||
	    hdr->base < ARENA_REGION_LO || hdr->base % ARENA_SLOT ||
	    hdr->capacity > ARENA_REGION_HI - hdr->base) {
		set_err(err, errlen, "arena %s has an inconsistent header (base 0x%llx, "
			"capacity %llu, object %lld bytes)", name, (unsigned long long)hdr->base,
			(unsigned long long)hdr->capacity, (long long)st.st_size);
		return -EPROTO;
	}
	return 0;
}

int fs_arena_attach(const char *name, fs_arena **out, char *err, size_t errlen)
{
	fs_arena hdr;
	int fd, rc;

	if (out)
		*out = NULL;
	rc = check_name(name, err, errlen);
	if (rc)
		return rc;
	if (!out) {
		set_err(err, errlen, "arena %s: out is NULL", name);
		return -EINVAL;
	}
	fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT)
			set_err(err, errlen, "no arena named %s", name);
		else
			set_err(err, errlen, "arena %s: shm_open: %s", name, strerror(-rc));
		return rc;
	}
	rc = read_header(name, fd, &hdr, err, errlen);
	if (rc)
		goto out;
	rc = map_exact(hdr.base, hdr.capacity, MAP_SHARED, fd);
	if (rc == -EEXIST) {
		char who[600];

		describe_occupant(hdr.base, hdr.base + hdr.capacity, who, sizeof(who));
		set_err(err, errlen, "arena %s needs 0x%llx-0x%llx, which is already mapped in "
			"this process (%s)", name, (unsigned long long)hdr.base,
			(unsigned long long)(hdr.base + hdr.capacity), who);
		rc = -EADDRINUSE;
	} else if (rc) {
		set_err(err, errlen, "arena %s: mmap of %llu bytes at 0x%llx: %s", name,
			(unsigned long long)hdr.capacity, (unsigned long long)hdr.base,
			strerror(-rc));
	} else {
		*out = (fs_arena *)(uintptr_t)hdr.base;
	}
out:
	close(fd);
	return rc;
}

fs_arena *fs_arena_private(size_t capacity)
{
	uint64_t cap;
	void *p;

	if (check_capacity(capacity, &cap, "private arena", NULL, 0))
		return NULL;
	p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (header_init(p, cap, false)) {
		munmap(p, cap);
		return NULL;
	}
	return p;
}

void fs_arena_detach(fs_arena *arena)
{
	if (arena)
		munmap(arena, arena->capacity);
}

int fs_arena_unlink(const char *name)
{
	return shm_unlink(name) == 0 ? 0 : -errno;
}

bool fs_arena_contains(const fs_arena *arena, const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr, b = (uintptr_t)arena;

	return arena && p >= b && p - b < arena->capacity;
}

void *fs_arena_root(const fs_arena *arena)
{
	return arena ? (void *)(uintptr_t)__atomic_load_n(&arena->root, __ATOMIC_ACQUIRE) : NULL;
}

void fs_arena_set_root(fs_arena *arena, void *root)
{
	if (arena)
		__atomic_store_n(&arena->root, (uint64_t)(uintptr_t)root, __ATOMIC_RELEASE);
}

int fs_arena_set_label(fs_arena *arena, const char *label)
{
	size_t len;

	if (!arena || !label || !arena->shared)
		return -EINVAL;
	len = strlen(label);
	if (len >= sizeof(arena->label))
		return -ENAMETOOLONG;
	if (__atomic_load_n(&arena->label_len, __ATOMIC_ACQUIRE))
		return -EBUSY;
	memcpy(arena->label, label, len + 1);
	__atomic_store_n(&arena->label_len, (uint32_t)len, __ATOMIC_RELEASE);
	return 0;
}

int fs_arena_label(const char *name, char *buf, size_t len)
{
	fs_arena hdr;
	ssize_t n;
	int fd, rc;

	if (!buf || !len)
		return -EINVAL;
	rc = check_name(name, NULL, 0);
	if (rc)
		return rc;
	fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = pread(fd, &hdr, sizeof(hdr), 0);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	/* A creator that has not written its header yet: no label. */
	if ((size_t)n < sizeof(hdr) || !hdr.magic)
		return 0;
	if (hdr.magic != ARENA_MAGIC || hdr.version != ARENA_VERSION ||
	    hdr.header_size != sizeof(hdr) || !hdr.shared)
		return -EPROTO;
	if (!hdr.label_len)
		return 0;
	if (hdr.label_len >= sizeof(hdr.label) ||
	    memchr(hdr.label, '\0', hdr.label_len) ||
	    hdr.label[hdr.label_len] != '\0')
		return -EPROTO;
	if (hdr.label_len >= len)
		return -ENAMETOOLONG;
	memcpy(buf, hdr.label, hdr.label_len + 1);
	return (int)hdr.label_len;
}
