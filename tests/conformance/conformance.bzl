"""Builds each conformance test source twice: reference and fabsim."""

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
}

DEFAULT_REFERENCES = ["sockets", "tcp_rxm"]

# shm names its shared-memory regions after the process id, and every test
# sandbox runs its test as the same pid: two shm runs at once collide (and
# crash). Those runs are exclusive: Bazel runs them one at a time.
EXCLUSIVE = ["shm"]

def conformance_test(name, srcs, size = "small", extra = []):
    """One reference cc_test per reference run, and one fabsim cc_test.

    name_ref_<suffix>: compiled against Debian's headers (no
    //api:headers, so <rdma/...> is /usr/include/rdma) and linked with
    Debian's libfabric.so.1 (-lfabric); runs DEFAULT_REFERENCES + extra.
    name_sim: compiled against our headers, linked with our libfabric.so.1,
    run with FI_PROVIDER=sim.
    """
    for ref in DEFAULT_REFERENCES + extra:
        native.cc_test(
            name = "%s_ref_%s" % (name, ref),
            size = size,
            srcs = srcs,
            env = REFERENCES[ref],
            tags = ["exclusive"] if ref in EXCLUSIVE else [],
            deps = [
                ":harness_ref",
                "//third_party:gtest_main",
            ],
        )
    native.cc_test(
        name = "%s_sim" % name,
        size = size,
        srcs = srcs,
        env = {
            "CONFORMANCE_PROVIDER": "sim",
            "FI_PROVIDER": "sim",
        },
        deps = [
            ":harness_sim",
            "//api:headers",
            "//api:libfabric",
            "//third_party:gtest_main",
        ],
    )
