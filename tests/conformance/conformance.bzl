"""Builds each conformance test source against Debian's libfabric (reference
runs) and against fabsim's, over reliable-datagram (FI_EP_RDM) and connected
(FI_EP_MSG) endpoints."""

# Reference runs against Debian's libfabric 1.17, by target-name suffix:
# the provider (CONFORMANCE_PROVIDER) and any further environment.
REFERENCES = {
    # The two RDM providers every test runs on.
    "sockets": {"CONFORMANCE_PROVIDER": "sockets"},
    "tcp_rxm": {"CONFORMANCE_PROVIDER": "tcp;ofi_rxm"},
    # Extra runs some tests opt into (see BUILD):
    # a libfabric 1.4-style program (FI_MR_BASIC: virtual addresses and
    # provider keys), which the default runs never exercise;
    "sockets_basic": {
        "CONFORMANCE_PROVIDER": "sockets",
        "CONFORMANCE_MR_MODE": "basic",
    },
    # shared memory, which requires FI_MR_VIRT_ADDR (see EXCLUSIVE);
    "shm": {"CONFORMANCE_PROVIDER": "shm"},
    # RDM over UDP (ofi_rxd).
    "udp_rxd": {"CONFORMANCE_PROVIDER": "udp;ofi_rxd"},
    # Connected endpoints (FI_EP_MSG) of the two providers that offer them
    # (fi_info -p tcp -t FI_EP_MSG), on the loopback interface.
    "sockets_msg": {
        "CONFORMANCE_PROVIDER": "sockets",
        "CONFORMANCE_EP_TYPE": "msg",
    },
    "tcp_msg": {
        "CONFORMANCE_PROVIDER": "tcp",
        "CONFORMANCE_EP_TYPE": "msg",
    },
}

DEFAULT_REFERENCES = ["sockets", "tcp_rxm"]

# The reference runs of an area that also runs over FI_EP_MSG.
MSG_REFERENCES = ["sockets_msg", "tcp_msg"]

# shm names its shared-memory regions after the process id, and every test
# sandbox runs its test as the same pid: two shm runs at once collide (and
# crash). Those runs are exclusive: Bazel runs them one at a time.
EXCLUSIVE = ["shm"]

# The verbs face of the simulated NIC (providers/sim_verbs), which the verbs
# runs load in place of rdma-core.
FACE_IBVERBS = "//providers/sim_verbs:libibverbs.so.1"
FACE_RDMACM = "//providers/sim_verbs:librdmacm.so.1"

# name_verbs_msg: the verbs provider over FI_EP_MSG on two simulated RoCE
# NICs (10.0.0.1 and 10.0.0.2; the nodes listen on them in turn), as a
# program that supports FI_RX_CQ_DATA, which verbs requires for remote CQ
# data.
VERBS_MSG_ENV = {
    "CONFORMANCE_PROVIDER": "verbs",
    "CONFORMANCE_EP_TYPE": "msg",
    "CONFORMANCE_RX_CQ_DATA": "1",
    "FI_PROVIDER": "verbs",
    "FI_VERBS_IBVERBS_LIB": "$(rootpath %s)" % FACE_IBVERBS,
    "FI_VERBS_RDMACM_LIB": "$(rootpath %s)" % FACE_RDMACM,
    "FABSIM_VERBS_DEVICES": "2",
}

def conformance_test(name, srcs, size = "small", extra = [], rdm = True,
                     msg = False):
    """One reference cc_test per reference run, and fabsim cc_tests.

    name_ref_<suffix>: compiled against Debian's headers (no
    //api:headers, so <rdma/...> is /usr/include/rdma) and linked with
    Debian's libfabric.so.1 (-lfabric); runs DEFAULT_REFERENCES + extra
    when rdm, MSG_REFERENCES when msg.
    name_sim: compiled against our headers, linked with our libfabric.so.1,
    run with FI_PROVIDER=sim (when rdm).
    name_sim_msg: the same over FI_EP_MSG (CONFORMANCE_EP_TYPE=msg; when
    msg).
    name_verbs_msg: the same over FI_EP_MSG with the verbs provider on the
    verbs face of the simulated NIC (when msg).
    """
    refs = (DEFAULT_REFERENCES + extra if rdm else []) + \
           (MSG_REFERENCES if msg else [])
    for ref in refs:
        env = dict(REFERENCES[ref])

        # Under --config=asan, leaks inside Debian's libfabric are not ours.
        env["LSAN_OPTIONS"] = "suppressions=$(rootpath :lsan_reference.supp)"
        native.cc_test(
            name = "%s_ref_%s" % (name, ref),
            size = size,
            srcs = srcs,
            data = [":lsan_reference.supp"],
            env = env,
            tags = ["exclusive"] if ref in EXCLUSIVE else [],
            deps = [
                ":harness_ref",
                "//third_party:gtest_main",
            ],
        )
    sims = ([("sim", {})] if rdm else []) + \
           ([("sim_msg", {"CONFORMANCE_EP_TYPE": "msg"})] if msg else [])
    for suffix, env in sims:
        env = dict(env)
        env.update({
            "CONFORMANCE_PROVIDER": "sim",
            "FI_PROVIDER": "sim",
        })
        native.cc_test(
            name = "%s_%s" % (name, suffix),
            size = size,
            srcs = srcs,
            env = env,
            deps = [
                ":harness_sim",
                "//api:headers",
                "//api:libfabric",
                "//third_party:gtest_main",
            ],
        )
    if msg:
        # The verbs provider over the verbs face of the simulated NIC:
        # the same binary as name_sim_msg; libfabric.so.1 dlopens the
        # face's libibverbs.so.1 and librdmacm.so.1 (named by
        # FI_VERBS_IBVERBS_LIB / FI_VERBS_RDMACM_LIB) instead of
        # rdma-core's.
        native.cc_test(
            name = "%s_verbs_msg" % name,
            size = size,
            srcs = srcs,
            data = [FACE_IBVERBS, FACE_RDMACM],
            env = VERBS_MSG_ENV,
            deps = [
                ":harness_sim",
                "//api:headers",
                "//api:libfabric",
                "//third_party:gtest_main",
            ],
        )
