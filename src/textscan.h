/* textscan.h: what the line-oriented text parsers share (bench/matrix.c, src/dispatch.c, src/optkeys.c): an error
 * message that names the file and the line, and a printable excerpt of the input to quote in it. Header-only, pure
 * C (the fuzzers and the table generator build the parsers alone). */
#ifndef MG_TEXTSCAN_H
#define MG_TEXTSCAN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* A printable copy of p[0..n) for messages: at most 40 bytes, non-printable bytes as '?', "..." when cut. */
static inline const char *mg_text_show(const char *p, size_t n, char buf[48]) {
    size_t m = n < 40 ? n : 40, i;
    for (i = 0; i < m; i++) {
        const unsigned char ch = (unsigned char)p[i];
        buf[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (n > 40) { buf[m++] = '.'; buf[m++] = '.'; buf[m++] = '.'; }
    buf[m] = '\0';
    return buf;
}

/* err = "file:line: " + the formatted message (err may be NULL / errlen 0). Returns -1, a parser's failure. */
static inline int mg_text_verr(char *err, size_t errlen, const char *file, int line, const char *fmt, va_list ap) {
    if (err && errlen) {
        int n = snprintf(err, errlen, "%s:%d: ", file, line);
        if (n >= 0 && (size_t)n < errlen) vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    }
    return -1;
}

/* The same with the arguments in place. */
static inline int mg_text_err(char *err, size_t errlen, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static inline int mg_text_err(char *err, size_t errlen, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mg_text_verr(err, errlen, file, line, fmt, ap);
    va_end(ap);
    return -1;
}

#endif /* MG_TEXTSCAN_H */
