/* SPDX-License-Identifier: BSD-2-Clause
 * libfabsim_vclock.so: loaded with LD_PRELOAD (`fabsim run --virtual-clock`),
 * it makes the program's clocks read the simulated fabric's virtual time,
 * as SimGrid's SMPI does, so that an unmodified benchmark times the
 * simulated hardware instead of the simulator.
 *
 * Each clock starts at its real value when first read (to the second) and
 * from then on moves only with virtual time: differences between two
 * readings are exact virtual nanoseconds. The sim provider attaches its fabric when it
 * opens one (fabsim_vclock_attach, found with dlsym); before that, and
 * after it closes, the clocks stand still. CPU-time clocks stay real.
 *
 * A thread that reads the clock over and over and finds it where it was
 * waits for time to pass, and nothing else will move it: a program that
 * times a delay by reading the clock in a loop (perftest measures its
 * CPU's frequency so) would hang. Past STILL_READINGS such readings in a
 * row, each further one spends SPIN_STEP_NS in the fabric, as SimGrid's
 * SMPI injects time into a program's readings of its clock; the step ends
 * early when something arrives for the process, so a thread that reads
 * the clock between polls sees what it polls for at its instant.
 *
 * A thread that sleeps (nanosleep, clock_nanosleep on these clocks, usleep,
 * sleep) while a fabric is attached lets that much virtual time pass in the
 * fabric instead, as SMPI turns a sleep into simulated time: what the
 * program measures around it is the sleep, and a run that paces itself
 * with sleeps is the same run after run. Without a fabric, or when the
 * fabric cannot take it, the sleep is real. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t (*vclock_source)(void *ctx);
/* Lets the calling thread wait for `ns` of virtual time to pass: false
 * when it cannot now. */
typedef bool (*vclock_spend)(void *ctx, uint64_t ns);

#define STILL_READINGS 1000
#define SPIN_STEP_NS 1000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static vclock_source source;
static vclock_spend spend;
static vclock_spend sleep_fn; /* waits the whole time; false: cannot */
static void *source_ctx;
static uint64_t frozen_ns;  /* virtual time when no fabric is attached */
static uint64_t attach_ns;  /* ... when the current one attached */

/* Each clock's real value at its first reading (0: not read yet). */
enum { REAL, MONO, CLOCKS };
static int64_t base_ns[CLOCKS];

static int real_clock(clockid_t id, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, id, ts);
}

static int clock_class(clockid_t id)
{
	switch (id) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_TAI:
		return REAL;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
		return MONO;
	default:
		return -1;
	}
}

static uint64_t read_virtual_ns(void)
{
	uint64_t ns;

	pthread_mutex_lock(&lock);
	ns = source ? attach_ns + source(source_ctx) : frozen_ns;
	pthread_mutex_unlock(&lock);
	return ns;
}

/* The calling thread's readings that found the clock where it was. */
static __thread uint64_t last_reading;
static __thread unsigned still_readings;

static uint64_t virtual_ns(void)
{
	uint64_t ns = read_virtual_ns();

	if (ns != last_reading) {
		last_reading = ns;
		still_readings = 0;
		return ns;
	}
	if (++still_readings < STILL_READINGS)
		return ns;
	/* Not under our lock: the fabric's wait may take long, and other
	 * threads read the clock meanwhile. A detach waits for the fabric's
	 * lock, which the spend holds. */
	pthread_mutex_lock(&lock);
	vclock_spend fn = source ? spend : NULL;
	void *ctx = source_ctx;
	pthread_mutex_unlock(&lock);
	if (fn && fn(ctx, SPIN_STEP_NS)) {
		/* The clock moved because this thread waited: the run of
		 * still readings goes on, and the next one waits again. */
		still_readings = STILL_READINGS - 1;
		ns = read_virtual_ns();
		last_reading = ns;
	}
	return ns;
}

/* Attaches a fabric's clock (now_ns gives its virtual time since it
 * started; spend_ns lets a thread wait for time to pass). 0, or -1 when
 * another one is attached. */
int fabsim_vclock_attach(vclock_source now_ns, vclock_spend spend_ns,
			 void *ctx)
{
	int ret = -1;

	pthread_mutex_lock(&lock);
	if (!source) {
		source = now_ns;
		spend = spend_ns;
		source_ctx = ctx;
		attach_ns = frozen_ns;
		ret = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The attached fabric's way to let a thread sleep `ns` of virtual time. */
void fabsim_vclock_set_sleep(vclock_spend sleep_ns)
{
	pthread_mutex_lock(&lock);
	if (source)
		sleep_fn = sleep_ns;
	pthread_mutex_unlock(&lock);
}

void fabsim_vclock_detach(void *ctx)
{
	pthread_mutex_lock(&lock);
	if (source && source_ctx == ctx) {
		frozen_ns = attach_ns + source(source_ctx);
		source = NULL;
		spend = NULL;
		sleep_fn = NULL;
		source_ctx = NULL;
	}
	pthread_mutex_unlock(&lock);
}

/* True when the fabric let `ns` of virtual time pass for this thread. */
static bool virtual_sleep(uint64_t ns)
{
	pthread_mutex_lock(&lock);
	vclock_spend fn = source ? sleep_fn : NULL;
	void *ctx = source_ctx;
	pthread_mutex_unlock(&lock);
	return fn && fn(ctx, ns);
}

static bool valid(const struct timespec *ts)
{
	return ts && ts->tv_sec >= 0 && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < 1000000000;
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000 + (uint64_t)ts->tv_nsec;
}

static int real_sleep(uint64_t ns, struct timespec *rem)
{
	struct timespec ts = { (time_t)(ns / 1000000000),
			       (long)(ns % 1000000000) };

	return (int)syscall(SYS_nanosleep, &ts, rem);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (!valid(req))
		return (int)syscall(SYS_nanosleep, req, rem);
	if (virtual_sleep(ns_of(req))) {
		if (rem)
			*rem = (struct timespec){ 0, 0 };
		return 0;
	}
	return real_sleep(ns_of(req), rem);
}

int clock_nanosleep(clockid_t id, int flags, const struct timespec *req,
		    struct timespec *rem)
{
	struct timespec now;
	uint64_t ns;

	/* CPU-time clocks, and bad arguments, are the kernel's. */
	if (clock_class(id) < 0 || !valid(req)) {
		int ret = (int)syscall(SYS_clock_nanosleep, id, flags, req,
				       rem);

		return ret ? errno : 0;
	}
	ns = ns_of(req);
	if (flags & TIMER_ABSTIME) {
		clock_gettime(id, &now);
		if (ns <= ns_of(&now))
			return 0;
		ns -= ns_of(&now);
		rem = NULL; /* not written for an absolute sleep */
	}
	if (virtual_sleep(ns)) {
		if (rem)
			*rem = (struct timespec){ 0, 0 };
		return 0;
	}
	return real_sleep(ns, rem) ? errno : 0;
}

int usleep(useconds_t us)
{
	uint64_t ns = (uint64_t)us * 1000;

	return virtual_sleep(ns) ? 0 : real_sleep(ns, NULL);
}

unsigned int sleep(unsigned int seconds)
{
	uint64_t ns = (uint64_t)seconds * 1000000000;
	struct timespec rem = { 0, 0 };

	if (virtual_sleep(ns) || real_sleep(ns, &rem) == 0)
		return 0;
	return (unsigned int)rem.tv_sec + (rem.tv_nsec > 0);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int cls = clock_class(id);
	int64_t ns;

	if (cls < 0)
		return real_clock(id, ts);
	pthread_mutex_lock(&lock);
	if (!base_ns[cls]) {
		struct timespec real;

		/* A whole second: what the program computes from readings
		 * truncated to microseconds (gettimeofday) or milliseconds
		 * must not depend on where in a second the run began. */
		real_clock(cls == REAL ? CLOCK_REALTIME : CLOCK_MONOTONIC, &real);
		base_ns[cls] = (int64_t)real.tv_sec * 1000000000;
	}
	ns = base_ns[cls];
	pthread_mutex_unlock(&lock);
	ns += (int64_t)virtual_ns();
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	return 0;
}

int gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	/* glibc declares tv nonnull, but the kernel's call takes NULL, and
	 * programs pass it (for the time zone alone): the compiler must not
	 * take the check below out on the declaration's word (-O3 with
	 * link-time optimisation did). */
	__asm__("" : "+r"(tv));

	/* The time zone is the kernel's (obsolete, but still filled in);
	 * either argument may be NULL. */
	if (tz && syscall(SYS_gettimeofday, NULL, tz))
		return -1;
	if (!tv)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *out)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (out)
		*out = ts.tv_sec;
	return ts.tv_sec;
}
