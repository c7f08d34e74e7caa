"""Compiler options for code that reads the world's thread-locals."""

# TLS descriptors: the thread-locals every poll reads (nic/nic_lock.c,
# nic/nic_sched.c) cost a call to __tls_get_addr per access from a shared
# library, and initial-exec TLS cannot be had by a library that is
# dlopen'ed (Open MPI's mtl ofi). gcc's option (the toolchain Bazel finds on
# Debian); clang has it from release 19 only. The provider's code needs it
# as much as the NIC's: with link-time optimisation (--config=release) the
# NIC's polls are inlined into the provider's CQ reads, and are compiled
# with the options of the function they land in.
TLS_DESCRIPTORS = select({
    "@platforms//cpu:x86_64": ["-mtls-dialect=gnu2"],
    "//conditions:default": [],
})
