/* Shared by the two halves of the C extension ``_native``: _native_decode.c (the protobuf wire
 * decoding of a trace's planes and lines) and _native_kernels.c (the per-event loops over the
 * decoded columns, and the module itself).
 *
 * Arrays come in as C-contiguous buffers whose element types the Python wrapper
 * (traceinsight/analysis/native.py) guarantees: int64 unless said otherwise, flags as uint8.
 */
#ifndef TRACEINSIGHT_NATIVE_H
#define TRACEINSIGHT_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Argument checking: a buffer of n elements of the given size (n < 0: any count). */
static inline int check(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *what)
{
    if (b->len % itemsize || (n >= 0 && b->len / itemsize != n)) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes", what, n, itemsize);
        return -1;
    }
    return 0;
}

#define RELEASE(...)                                                                           \
    do {                                                                                       \
        Py_buffer *_bufs[] = {__VA_ARGS__};                                                    \
        for (size_t _i = 0; _i < sizeof(_bufs) / sizeof(_bufs[0]); _i++)                      \
            if (_bufs[_i]->obj)                                                                \
                PyBuffer_Release(_bufs[_i]);                                                   \
    } while (0)

/* _native_decode.c: the module's functions of the same names without the prefix (see there) */
PyObject *native_split_space(PyObject *self, PyObject *args);
PyObject *native_scan_jobs(PyObject *self, PyObject *args);
PyObject *native_decode_jobs(PyObject *self, PyObject *args);
PyObject *native_pread_into(PyObject *self, PyObject *args);
PyObject *native_utf8_strings(PyObject *self, PyObject *args);

/* their entries in the module's method table (_native_kernels.c) */
#define NATIVE_DECODE_METHODS                                                                  \
    {"split_space", native_split_space, METH_VARARGS,                                          \
     "split_space(xspace) -> [(plane_without_lines, [(line_offset, line_length), ...]), ...]"}, \
    {"scan_jobs", native_scan_jobs, METH_VARARGS,                                              \
     "scan_jobs(buffer, jobs, threads) -> [(job, error), ...]"},                               \
    {"decode_jobs", native_decode_jobs, METH_VARARGS,                                          \
     "decode_jobs(buffer, jobs, lut, wanted, start, end, name_id, line, threads) -> "          \
     "(errors, stats)"},                                                                       \
    {"pread_into", native_pread_into, METH_VARARGS,                                            \
     "pread_into(fd, buffer, threads) -> bytes read"},                                        \
    {"utf8_strings", native_utf8_strings, METH_VARARGS,                                        \
     "utf8_strings(buffer, begin, end) -> [str, ...]"},

#endif
