/* A libfabric program built against the distribution's headers
 * (/usr/include/rdma from libfabric-dev), linked and run against our
 * libfabric.so.1. It prints what it found; the test checks the output. */
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#ifdef FABSIM_RDMA_HEADERS
#error "this program must be compiled against the distribution's headers"
#endif

int main(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL, *cur;
	struct fid_fabric *fabric = NULL;
	int ret;

	hints->caps = FI_MSG | FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (ret) {
		printf("fi_getinfo: %s\n", fi_strerror(-ret));
		return 1;
	}
	for (cur = info; cur; cur = cur->next) {
		char type[64], mr_mode[256];

		fi_tostr_r(type, sizeof(type), &cur->ep_attr->type,
			   FI_TYPE_EP_TYPE);
		fi_tostr_r(mr_mode, sizeof(mr_mode), &cur->domain_attr->mr_mode,
			   FI_TYPE_MR_MODE);
		printf("provider %s domain %s type %s mr_mode [%s]\n",
		       cur->fabric_attr->prov_name, cur->domain_attr->name,
		       type, mr_mode);
	}
	ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	printf("fi_fabric: %d\n", ret);
	if (!ret)
		printf("fi_close: %d\n", fi_close(&fabric->fid));
	printf("strerror: %s\n", fi_strerror(FI_ETRUNC));
	printf("version: %u.%u\n", FI_MAJOR(fi_version()),
	       FI_MINOR(fi_version()));
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return 0;
}
