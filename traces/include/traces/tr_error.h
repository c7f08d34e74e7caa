/* SPDX-License-Identifier: BSD-2-Clause
 * Errors of the traces module. Functions return 0 (or a count) on success and a negative errno
 * value on failure; when the caller passes a tr_error, it also receives a sentence naming the
 * frame, the byte offset and what was wrong, ready to show to the user unchanged. */
#ifndef TR_ERROR_H
#define TR_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#define TR_ERROR_MSG_MAX 512

typedef struct tr_error {
	int code;                   /* the negative errno value also returned */
	char msg[TR_ERROR_MSG_MAX]; /* NUL-terminated, empty when no error */
} tr_error;

/* Records code and a printf-style message into err (which may be NULL); returns code so that
 * callers can write `return tr_error_set(err, -EINVAL, "...", ...);`. */
int tr_error_set(tr_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Puts "prefix: " in front of the message already in err (may be NULL); returns err->code. */
int tr_error_prefix(tr_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void tr_error_clear(tr_error *err);

#ifdef __cplusplus
}
#endif

#endif
