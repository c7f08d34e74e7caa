// The NIC tests' worlds: one that several processes share, made in a new
// arena of its own name (a stale one of that name is unlinked first), or
// one of this process alone; on the roce-25g preset.
#ifndef FABSIM_NIC_TESTS_SHARED_WORLD_H
#define FABSIM_NIC_TESTS_SHARED_WORLD_H

#include <gtest/gtest.h>

#include <string>

extern "C" {
#include <netmodel/nm_preset.h>
#include "providers/sim/nic/nic.h"
}

// A world on the roce-25g preset, in `arena` (NULL: in this process's own
// memory, a world of one process); NULL (the test failed, saying why) when
// it cannot be made.
inline nic_world *MakeWorldIn(fs_arena *arena)
{
	nm_config cfg;
	nm_error err;
	nic_transport_params tp;
	nic_world *world = nullptr;

	if (nm_preset_load(&cfg, "roce-25g", &err) != 0) {
		ADD_FAILURE() << "preset roce-25g: " << err.msg;
		return nullptr;
	}
	nic_transport_defaults(&tp);
	if (nic_world_create_in(arena, &cfg, &tp, &world, &err) != 0) {
		ADD_FAILURE() << "world: " << err.msg;
		return nullptr;
	}
	return world;
}

// The world, and its arena in *arena_out; NULL (the test failed, saying
// why) when either cannot be made.
inline nic_world *MakeSharedWorld(const std::string &name,
				  fs_arena **arena_out = nullptr)
{
	char msg[256] = "";
	fs_arena *arena = nullptr;

	fs_arena_unlink(name.c_str());
	if (fs_arena_create(name.c_str(), size_t(1) << 28, &arena, msg,
			    sizeof(msg)) != 0) {
		ADD_FAILURE() << "arena " << name << ": " << msg;
		return nullptr;
	}
	nic_world *world = MakeWorldIn(arena);
	if (world && arena_out)
		*arena_out = arena;
	return world;
}

#endif
