/* Named parameter sets for common fabrics. Sources are cited in preset.c and netmodel/README.md. */
#ifndef NM_PRESET_H
#define NM_PRESET_H

#include <stddef.h>

#include "netmodel/nm_config.h"
#include "netmodel/nm_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The project default, used when neither FI_SIM_PRESET nor the JSON names a preset. This is the
 * one place that decides it. */
#define NM_PRESET_DEFAULT "roce-100g"

/* Fills *cfg with preset `name` ("ideal", "roce-25g", "roce-100g", "ib-hdr-200g",
 * "ib-ndr-400g"). -EINVAL with the list of names when unknown. */
int nm_preset_load(nm_config *cfg, const char *name, nm_error *err);

/* The preset names, in order; *count_out receives their number. */
const char *const *nm_preset_names(size_t *count_out);

#ifdef __cplusplus
}
#endif

#endif
