/* Error reporting shared by every netmodel function that can reject its input.
 *
 * Functions return 0 or a negative errno value (-EINVAL, -ENOMEM, ...) and, when the caller passes
 * an nm_error, a sentence naming what was wrong, the value given and what is allowed. The libfabric
 * layer maps the errno values to FI_E* codes; the text goes to the user unchanged. */
#ifndef NM_ERROR_H
#define NM_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#define NM_ERROR_MSG_MAX 512

typedef struct nm_error {
	int code;                   /* the negative errno value also returned */
	char msg[NM_ERROR_MSG_MAX]; /* NUL-terminated, empty when no error */
} nm_error;

/* Records code and a printf-style message into err (which may be NULL); returns code so that
 * callers can write `return nm_error_set(err, -EINVAL, "...", ...);`. */
int nm_error_set(nm_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Empties err (may be NULL). */
void nm_error_clear(nm_error *err);

#ifdef __cplusplus
}
#endif

#endif
