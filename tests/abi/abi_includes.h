/* SPDX-License-Identifier: BSD-2-Clause
 * Every public libfabric header, in the order gen_abi_manifest.py reads
 * them. Which copy is included (ours or Debian's) depends only on the include
 * path of the target compiling this: //api:headers puts ours first; without
 * it, <rdma/...> is the distribution's /usr/include/rdma.
 */
#ifndef ABI_INCLUDES_H
#define ABI_INCLUDES_H

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_ext_psm2.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#define ABI_CAT_(a, b) a##b
#define ABI_CAT(a, b)  ABI_CAT_(a, b)
#define ABI_STR(x)     #x
#define ABI_XSTR(x)    ABI_STR(x)

#endif /* ABI_INCLUDES_H */
