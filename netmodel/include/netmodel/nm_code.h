/* Function pointers in state that several processes share.
 *
 * The model's state may live in memory that several processes map at one address
 * (MULTIPROCESS.md), but a library's code is loaded at a different address in each of them. A
 * function is therefore kept as its distance from an anchor function of the same library: that
 * distance is fixed when the library is linked, so the same number names the same function in
 * every process using that library. 0 stands for NULL (the anchor itself is never stored).
 */
#ifndef NM_CODE_H
#define NM_CODE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef intptr_t nm_code;

/* Defined once, in the engine. libfabric.so.1 exports only the libfabric API (its version script),
 * so its anchor binds inside it and no program can interpose another. */
void nm_code_anchor(void);

static inline nm_code nm_code_of(void (*fn)(void))
{
	return fn ? (intptr_t)fn - (intptr_t)nm_code_anchor : 0;
}

static inline void (*nm_code_fn(nm_code code))(void)
{
	return code ? (void (*)(void))((intptr_t)nm_code_anchor + code) : (void (*)(void))0;
}

/* NM_CODE(fn) for any function pointer; NM_CODE_AS(type, code) back to it. */
#define NM_CODE(fn) nm_code_of((void (*)(void))(fn))
#define NM_CODE_AS(type, code) ((type)nm_code_fn(code))

#ifdef __cplusplus
}
#endif

#endif
