/* SPDX-License-Identifier: BSD-2-Clause
 * Names of the API's constants, for fi_tostr and for parsing them back. */
#ifndef FABSIM_NAMES_H
#define FABSIM_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct fabsim_name {
	uint64_t    value;
	const char *name;
};

struct fabsim_name_table {
	const struct fabsim_name *entries;
	size_t                    count;
};

/* Flag sets (printed as lists of names) and enumerations (one name). */
extern const struct fabsim_name_table fabsim_caps_names;      /* caps */
extern const struct fabsim_name_table fabsim_op_flag_names;   /* op_flags */
extern const struct fabsim_name_table fabsim_mode_names;
extern const struct fabsim_name_table fabsim_order_names;     /* msg/comp */
extern const struct fabsim_name_table fabsim_cq_flag_names;   /* CQ flags */
extern const struct fabsim_name_table fabsim_mr_mode_names;
extern const struct fabsim_name_table fabsim_ep_type_names;
extern const struct fabsim_name_table fabsim_addr_format_names;
extern const struct fabsim_name_table fabsim_threading_names;
extern const struct fabsim_name_table fabsim_progress_names;
extern const struct fabsim_name_table fabsim_rm_names;
extern const struct fabsim_name_table fabsim_protocol_names;
extern const struct fabsim_name_table fabsim_av_type_names;
extern const struct fabsim_name_table fabsim_datatype_names;
extern const struct fabsim_name_table fabsim_atomic_op_names;
extern const struct fabsim_name_table fabsim_eq_event_names;
extern const struct fabsim_name_table fabsim_op_type_names;
extern const struct fabsim_name_table fabsim_collective_op_names;
extern const struct fabsim_name_table fabsim_hmem_iface_names;
extern const struct fabsim_name_table fabsim_cq_format_names;
extern const struct fabsim_name_table fabsim_log_level_names;
extern const struct fabsim_name_table fabsim_log_subsys_names;
extern const struct fabsim_name_table fabsim_fclass_names;

/* The name of an enumeration value, or NULL. */
const char *fabsim_name_of(const struct fabsim_name_table *table,
			   uint64_t value);

/* The value of a name (exact match), or -1 when unknown. */
int fabsim_value_of(const struct fabsim_name_table *table, const char *name,
		    uint64_t *value);

#endif
