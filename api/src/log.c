/* SPDX-License-Identifier: BSD-2-Clause
 * Logging (fi_log and friends), configured by FI_LOG_LEVEL, FI_LOG_PROV and
 * FI_LOG_SUBSYS. Lines look like libfabric's so that existing log filters
 * keep working:  libfabric:PID:SECONDS::PROV:SUBSYS:FUNC():LINE<LEVEL> text
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core_private.h"

static const char *const level_names[FI_LOG_MAX] = {
	[FI_LOG_WARN] = "warn",
	[FI_LOG_TRACE] = "trace",
	[FI_LOG_INFO] = "info",
	[FI_LOG_DEBUG] = "debug",
};

static const char *const subsys_names[FI_LOG_SUBSYS_MAX] = {
	[FI_LOG_CORE] = "core",
	[FI_LOG_FABRIC] = "fabric",
	[FI_LOG_DOMAIN] = "domain",
	[FI_LOG_EP_CTRL] = "ep_ctrl",
	[FI_LOG_EP_DATA] = "ep_data",
	[FI_LOG_AV] = "av",
	[FI_LOG_CQ] = "cq",
	[FI_LOG_EQ] = "eq",
	[FI_LOG_MR] = "mr",
	[FI_LOG_CNTR] = "cntr",
};

static int max_level = FI_LOG_WARN;
static const char *prov_filter;
static const char *subsys_filter;
static uint64_t sparse_interval_ms = 2000;

static void log_init_once(void)
{
	const char *level = getenv("FI_LOG_LEVEL");

	if (level && *level) {
		max_level = -1;
		for (int i = 0; i < FI_LOG_MAX; i++)
			if (!strcasecmp(level, level_names[i]))
				max_level = i;
		if (max_level < 0) {
			max_level = FI_LOG_WARN;
			fprintf(stderr,
				"libfabric:%d::core:core: FI_LOG_LEVEL=\"%s\" "
				"ignored: use warn, trace, info or debug\n",
				(int)getpid(), level);
		}
	}
	prov_filter = getenv("FI_LOG_PROV");
	subsys_filter = getenv("FI_LOG_SUBSYS");
}

void fabsim_log_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, log_init_once);
}

int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level,
		   enum fi_log_subsys subsys)
{
	fabsim_log_init();
	if ((int)level > max_level || (int)level < 0)
		return 0;
	if (prov && prov->name &&
	    !fabsim_name_list_match(prov_filter, prov->name))
		return 0;
	if ((unsigned)subsys < FI_LOG_SUBSYS_MAX &&
	    !fabsim_name_list_match(subsys_filter, subsys_names[subsys]))
		return 0;
	return 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level,
		 enum fi_log_subsys subsys, uint64_t *showtime)
{
	uint64_t now;

	if (!fi_log_enabled(prov, level, subsys))
		return 0;
	now = now_ms();
	if (showtime && now < *showtime)
		return 0;
	if (showtime)
		*showtime = now + sparse_interval_ms;
	return 1;
}

void fi_log(const struct fi_provider *prov, enum fi_log_level level,
	    enum fi_log_subsys subsys, const char *func, int line,
	    const char *fmt, ...)
{
	char buf[1024];
	int len;
	va_list ap;

	len = snprintf(buf, sizeof(buf), "libfabric:%d:%ld::%s:%s:%s():%d<%s> ",
		       (int)getpid(), (long)time(NULL),
		       prov && prov->name ? prov->name : "?",
		       (unsigned)subsys < FI_LOG_SUBSYS_MAX ?
			       subsys_names[subsys] : "?",
		       func ? func : "?", line,
		       (unsigned)level < FI_LOG_MAX ? level_names[level] : "?");
	if (len < 0 || (size_t)len >= sizeof(buf))
		len = 0;
	va_start(ap, fmt);
	vsnprintf(buf + len, sizeof(buf) - (size_t)len, fmt, ap);
	va_end(ap);
	fputs(buf, stderr);
}
