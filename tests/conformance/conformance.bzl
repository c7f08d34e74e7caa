"""Builds each conformance test source twice: reference and fabsim."""

# Reference providers of Debian's libfabric 1.17 that offer FI_EP_RDM,
# with the target-name suffix of each.
REFERENCE_PROVIDERS = {
    "sockets": "sockets",
    "tcp;ofi_rxm": "tcp_rxm",
}

def conformance_test(name, srcs, size = "small", providers = None):
    """One reference cc_test per provider, and one fabsim cc_test (manual).

    name_ref_<provider>: compiled against Debian's headers (no
    //api:headers, so <rdma/...> is /usr/include/rdma) and linked with
    Debian's libfabric.so.1 (-lfabric).
    name_sim: compiled against our headers, linked with our libfabric.so.1,
    run with FI_PROVIDER=sim. Manual until the sim provider has its objects.
    """
    provs = providers if providers != None else REFERENCE_PROVIDERS.keys()
    for prov in provs:
        native.cc_test(
            name = "%s_ref_%s" % (name, REFERENCE_PROVIDERS[prov]),
            size = size,
            srcs = srcs,
            env = {"CONFORMANCE_PROVIDER": prov},
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
        tags = ["manual"],
        deps = [
            ":harness_sim",
            "//api:headers",
            "//api:libfabric",
            "//third_party:gtest_main",
        ],
    )
