/* The configuration key table and typed setters shared by the JSON and environment front ends.
 * Not a public header. */
#ifndef NM_CONFIG_INTERNAL_H
#define NM_CONFIG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "netmodel/nm_config.h"

typedef enum key_kind {
	KEY_PRESET,      /* chosen before everything else; not set through the table */
	KEY_UINT,        /* integer in [umin, umax], stored in `width` bytes */
	KEY_POW2,        /* KEY_UINT that must also be a power of two */
	KEY_REAL,        /* double in [dmin, dmax] */
	KEY_GBPS,        /* KEY_REAL in Gb/s, stored as integer bits/s (0 = infinite) */
	KEY_ENUM,        /* one of enum_names, stored as an int */
	KEY_DROP_LIST,   /* loss.drop */
	KEY_FAULT_LIST,  /* faults.link_down */
} key_kind;

typedef struct key_spec {
	nm_config_key_info info;
	key_kind kind;
	size_t offset;
	size_t width;
	uint64_t umin, umax;
	double dmin, dmax;
	const char *const *enum_names; /* NULL-terminated */
} key_spec;

const key_spec *config_key_table(size_t *count_out);
const key_spec *config_find_key(const char *dotted);

/* Typed setters: check range, store, or fail with "<key>: <shown> ... (allowed: ...)". */
int config_set_uint(nm_config *cfg, const key_spec *spec, uint64_t value, const char *shown,
		    nm_error *err);
int config_set_real(nm_config *cfg, const key_spec *spec, double value, const char *shown,
		    nm_error *err);
int config_set_enum(nm_config *cfg, const key_spec *spec, const char *name, nm_error *err);
int config_set_drops(nm_config *cfg, const nm_scripted_drop *drops, size_t count, nm_error *err);
int config_set_faults(nm_config *cfg, const nm_link_fault *faults, size_t count, nm_error *err);

/* A value in its text form (as the environment gives it). */
int config_set_text(nm_config *cfg, const key_spec *spec, const char *text, nm_error *err);

/* Message for a value of the wrong type, naming what the key takes. */
int config_type_error(const key_spec *spec, const char *shown, nm_error *err);

/* JSON front end (config_json.c). root is jansson's json_t. */
struct json_t;
int config_json_parse(const char *json_text, const char *path, struct json_t **root_out,
		      nm_error *err);
void config_json_free(struct json_t *root);
/* The root's "preset" string (borrowed from root) or NULL when absent. */
int config_json_preset(const struct json_t *root, const char **name, nm_error *err);
/* foreign: top-level keys the caller reads itself, skipped (NULL: none). */
int config_json_apply(nm_config *cfg, const struct json_t *root, const char *const *foreign,
		      nm_error *err);

#endif
