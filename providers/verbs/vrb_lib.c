/* SPDX-License-Identifier: BSD-2-Clause
 * Loading rdma-core (see vrb_lib.h for why it is not linked). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "vrb_lib.h"

static int resolve(void *handle, const char *lib_name, const char *sym,
		   void **out, char *why, size_t why_len)
{
	*out = dlsym(handle, sym);
	if (*out)
		return 0;
	snprintf(why, why_len, "%s has no %s (rdma-core too old?)", lib_name,
		 sym);
	return -FI_ENODATA;
}

int vrb_lib_load(struct vrb_lib *lib, const char *ibverbs,
		 const char *rdmacm, char *why, size_t why_len)
{
	int ret = 0;

	memset(lib, 0, sizeof(*lib));
	lib->ibverbs = dlopen(ibverbs, RTLD_NOW | RTLD_LOCAL);
	if (!lib->ibverbs) {
		snprintf(why, why_len, "cannot load %s (is rdma-core's "
			 "libibverbs1 installed?): %s", ibverbs, dlerror());
		return -FI_ENODATA;
	}
	lib->rdmacm = dlopen(rdmacm, RTLD_NOW | RTLD_LOCAL);
	if (!lib->rdmacm) {
		snprintf(why, why_len, "cannot load %s (is rdma-core's "
			 "librdmacm1 installed?): %s", rdmacm, dlerror());
		vrb_lib_unload(lib);
		return -FI_ENODATA;
	}
	/* POSIX lets a data pointer from dlsym become a function pointer. */
#define VRB_IBV(field, sym)                                              \
	if (!ret)                                                        \
		ret = resolve(lib->ibverbs, ibverbs, #sym,               \
			      (void **)&lib->field, why, why_len);
#define VRB_CM(field, sym)                                               \
	if (!ret)                                                        \
		ret = resolve(lib->rdmacm, rdmacm, #sym,                 \
			      (void **)&lib->field, why, why_len);
	VRB_IBVERBS_FUNCS(VRB_IBV)
	VRB_RDMACM_FUNCS(VRB_CM)
#undef VRB_CM
#undef VRB_IBV
	if (ret)
		vrb_lib_unload(lib);
	return ret;
}

void vrb_lib_unload(struct vrb_lib *lib)
{
	if (lib->rdmacm)
		dlclose(lib->rdmacm);
	if (lib->ibverbs)
		dlclose(lib->ibverbs);
	memset(lib, 0, sizeof(*lib));
}

int vrb_query_port(const struct vrb_lib *lib, struct ibv_context *ctx,
		   uint8_t port, struct ibv_port_attr *attr)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);

	if (vctx)
		return vctx->query_port(ctx, port, attr, sizeof(*attr));
	memset(attr, 0, sizeof(*attr));
	return lib->query_port_compat(ctx, port,
				      (struct _compat_ibv_port_attr *)attr);
}
