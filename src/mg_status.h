/* mg_status.h: status codes' messages and the shared argument rules, in one file that every other C file may
 * include (the library, the registry, the CPU reference, the CLI) without including each other.
 *   mg_set_error   records a thread-local detail message (mg_last_error returns it) and passes the status on;
 *   mg_normalize_max_dim   the one rule for max_dim (-1 -> 1, -2 -> 0, others MG_ERR_MAX_DIM). */
#ifndef MG_STATUS_H
#define MG_STATUS_H

#include "maxgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* printf-style; returns s. */
mg_status mg_set_error(mg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Normalises max_dim (-1 -> 1, -2 -> 0); MG_ERR_MAX_DIM with a message for others. norm may be NULL. */
mg_status mg_normalize_max_dim(int max_dim, int *norm);

#ifdef __cplusplus
}
#endif
#endif /* MG_STATUS_H */
