/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim — libfabric 1.x compatible logging interface.
 *
 * FI_LOG_LEVEL picks the most verbose level shown, FI_LOG_PROV and
 * FI_LOG_SUBSYS narrow by provider and subsystem (a name, or ^name to
 * exclude). Messages go to stderr.
 */
#ifndef FI_LOG_H
#define FI_LOG_H

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fi_log_subsys {
	FI_LOG_CORE,
	FI_LOG_FABRIC,
	FI_LOG_DOMAIN,
	FI_LOG_EP_CTRL,
	FI_LOG_EP_DATA,
	FI_LOG_AV,
	FI_LOG_CQ,
	FI_LOG_EQ,
	FI_LOG_MR,
	FI_LOG_CNTR,
	FI_LOG_SUBSYS_MAX
};

enum fi_log_level {
	FI_LOG_WARN,
	FI_LOG_TRACE,
	FI_LOG_INFO,
	FI_LOG_DEBUG,
	FI_LOG_MAX
};

int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level,
		   enum fi_log_subsys subsys);
/* Like fi_log_enabled, but also rate-limits through *showtime. */
int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level,
		 enum fi_log_subsys subsys, uint64_t *showtime);
void fi_log(const struct fi_provider *prov, enum fi_log_level level,
	    enum fi_log_subsys subsys, const char *func, int line,
	    const char *fmt, ...) FI_FORMAT_PRINTF(6, 7);

/* Logging must never change errno under the caller. */
#define FI_LOG(prov, level, subsys, ...)                                  \
	do {                                                              \
		if (fi_log_enabled(prov, level, subsys)) {                \
			int fi_log_errno_ = errno;                        \
			fi_log(prov, level, subsys, __func__, __LINE__,   \
			       __VA_ARGS__);                              \
			errno = fi_log_errno_;                            \
		}                                                         \
	} while (0)

#define FI_LOG_SPARSE(prov, level, subsys, ...)                           \
	do {                                                              \
		static uint64_t fi_log_showtime_;                         \
		if (fi_log_ready(prov, level, subsys,                     \
				 &fi_log_showtime_)) {                    \
			int fi_log_errno_ = errno;                        \
			fi_log(prov, level, subsys, __func__, __LINE__,   \
			       __VA_ARGS__);                              \
			errno = fi_log_errno_;                            \
		}                                                         \
	} while (0)

#define FI_WARN(prov, subsys, ...)  FI_LOG(prov, FI_LOG_WARN, subsys, __VA_ARGS__)
#define FI_TRACE(prov, subsys, ...) FI_LOG(prov, FI_LOG_TRACE, subsys, __VA_ARGS__)
#define FI_INFO(prov, subsys, ...)  FI_LOG(prov, FI_LOG_INFO, subsys, __VA_ARGS__)
#define FI_WARN_SPARSE(prov, subsys, ...) \
	FI_LOG_SPARSE(prov, FI_LOG_WARN, subsys, __VA_ARGS__)

#if defined(ENABLE_DEBUG) && ENABLE_DEBUG
#define FI_DBG(prov, subsys, ...)       FI_LOG(prov, FI_LOG_DEBUG, subsys, __VA_ARGS__)
#define FI_DBG_TRACE(prov, subsys, ...) FI_LOG(prov, FI_LOG_TRACE, subsys, __VA_ARGS__)
#else
#define FI_DBG(prov, subsys, ...)       do { } while (0)
#define FI_DBG_TRACE(prov, subsys, ...) do { } while (0)
#endif

#define FI_WARN_ONCE(prov, subsys, ...)                                   \
	do {                                                              \
		static int fi_log_warned_;                                \
		if (!fi_log_warned_ &&                                    \
		    fi_log_enabled(prov, FI_LOG_WARN, subsys)) {          \
			int fi_log_errno_ = errno;                        \
			fi_log(prov, FI_LOG_WARN, subsys, __func__,       \
			       __LINE__, __VA_ARGS__);                    \
			fi_log_warned_ = 1;                               \
			errno = fi_log_errno_;                            \
		}                                                         \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif /* FI_LOG_H */
