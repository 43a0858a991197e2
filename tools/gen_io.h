/* gen_io.h: the file handling the build-time generators share (tools/gen_tiles.c, tools/gen_dispatch.c): read an
 * input whole, and write an output through OUT.tmp renamed into place, so a failed run never leaves half a file.
 * Messages go to stderr, prefixed with the generator's name. Header-only: each generator is one C file. */
#ifndef MG_GEN_IO_H
#define MG_GEN_IO_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file (malloc'ed, *len bytes, not NUL-terminated), or NULL after a message. */
static char *gen_read_file(const char *prog, const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s: cannot open: %s\n", prog, path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
    }
    if (!buf || ferror(f)) {
        fprintf(stderr, "%s: %s: read failed\n", prog, path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Opens path's temporary twin for writing (its name into tmp), or NULL after a message. */
static FILE *gen_open_tmp(const char *prog, const char *path, char *tmp, size_t tmplen) {
    snprintf(tmp, tmplen, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) fprintf(stderr, "%s: cannot create %s: %s\n", prog, tmp, strerror(errno));
    return f;
}

/* Closes f and renames tmp to path: 0, or -1 after a message (tmp removed). */
static int gen_finish(const char *prog, FILE *f, const char *tmp, const char *path) {
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

#endif /* MG_GEN_IO_H */
