/* Virtual time: the one unit every netmodel delay is expressed in. */
#ifndef NM_TIME_H
#define NM_TIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Integer nanoseconds since the start of the simulation. Integers (not doubles) so that sums of
 * delays are exact and reruns agree to the nanosecond on every machine. 2^64 ns is ~584 years. */
typedef uint64_t nm_time_ns;

/* "No deadline" / "never happens". */
#define NM_TIME_NEVER UINT64_MAX

#define NM_NS_PER_US UINT64_C(1000)
#define NM_NS_PER_MS UINT64_C(1000000)
#define NM_NS_PER_S UINT64_C(1000000000)

#ifdef __cplusplus
}
#endif

#endif
