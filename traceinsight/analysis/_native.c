/* The per-event loops of traceinsight's trace analysis, in C.
 *
 * Python-traced captures hold millions of events. Everything that must visit every event in order
 * (protobuf wire decoding of a line's events, nesting them with a stack, inheriting categories down
 * the nesting, sweeping the main thread's timeline) is done here in one linear pass each; the rules
 * and all arithmetic over the results stay in Python / numpy (traceinsight.analysis).
 *
 * Arrays come in as C-contiguous buffers whose element types the Python wrapper
 * (traceinsight/analysis/native.py) guarantees: int64 unless said otherwise, flags as uint8.
 * Trace bytes are untrusted: every read is bounds-checked and a malformed line raises ValueError.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- protobuf wire format ------------------------------------------------------------------- */

static _Thread_local const char *err_msg; /* why the last decode failed */

/* Event times (ps from the trace's earliest line) are kept within +-2^61 ps (26 days): every
 * difference and sum of them computed later, here or in numpy, then fits in int64. */
#define TIME_LIMIT ((int64_t)1 << 61)

static inline int varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    if (p < end && *p < 0x80) { /* one byte: tags, ids, small lengths */
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    for (int i = 0; i < 10; i++) {
        if (p >= end) {
            err_msg = "a varint runs past the end of its message";
            return -1;
        }
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    err_msg = "a varint longer than 10 bytes";
    return -1;
}

/* Reads a field's tag; for length-delimited fields also the length, checked against the end. */
static inline int field(const uint8_t **pp, const uint8_t *end, uint32_t *fnum, uint32_t *wt,
                 uint64_t *value)
{
    uint64_t tag;
    if (varint(pp, end, &tag) < 0)
        return -1;
    *fnum = (uint32_t)(tag >> 3);
    *wt = (uint32_t)(tag & 7);
    switch (*wt) {
    case 0:
        return varint(pp, end, value);
    case 1:
        if (end - *pp < 8) {
            err_msg = "a field runs past the end of its message";
            return -1;
        }
        memcpy(value, *pp, 8); /* little-endian hosts only (x86-64, aarch64) */
        *pp += 8;
        return 0;
    case 2:
        if (varint(pp, end, value) < 0)
            return -1;
        if (*value > (uint64_t)(end - *pp)) {
            err_msg = "a field runs past the end of its message";
            return -1;
        }
        return 0; /* the body is [*pp, *pp + *value): the caller skips or reads it */
    case 5:
        if (end - *pp < 4) {
            err_msg = "a field runs past the end of its message";
            return -1;
        }
        *value = 0;
        memcpy(value, *pp, 4);
        *pp += 4;
        return 0;
    default:
        err_msg = "an unsupported protobuf wire type";
        return -1;
    }
}

/* XLine (tsl/profiler/protobuf/xplane.proto): id 1, display_id 10, name 2, display_name 11,
 * timestamp_ns 3, duration_ps 9, events 4. XEvent: metadata_id 1, offset_ps 2, duration_ps 3,
 * stats 4, num_occurrences 5. XStat: metadata_id 1, double 2, uint64 3, int64 4, str 5, bytes 6,
 * ref 7. */

static PyObject *corrupt(void)
{
    PyErr_SetString(PyExc_ValueError, err_msg ? err_msg : "corrupt protobuf");
    return NULL;
}

/* Argument checking: a buffer of n elements of the given size (n < 0: any count). */
static int check(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *what)
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

/* split_space(xspace) -> [(plane_without_lines, [(line_offset, line_length), ...]), ...]
 *
 * An XSpace's planes (field 1), each split into its lines (XPlane field 3: where they lie in the
 * buffer, for scan_line / decode_line to read in place) and everything else (name, metadata, plane
 * stats: re-serialized as an XPlane without lines, small, for protobuf to parse). The XSpace's
 * other fields (errors, warnings, hostnames) are not read. */
static PyObject *split_space(PyObject *self, PyObject *args)
{
    Py_buffer b = {0};
    PyObject *planes = NULL, *lines = NULL, *item = NULL;
    uint8_t *meta = NULL;
    if (!PyArg_ParseTuple(args, "y*", &b))
        return NULL;
    const uint8_t *buf = b.buf, *p = buf, *end = buf + b.len;
    if (!(planes = PyList_New(0)))
        goto fail;
    while (p < end) {
        uint32_t fnum, wt;
        uint64_t v;
        if (field(&p, end, &fnum, &wt, &v) < 0) {
            corrupt();
            goto fail;
        }
        if (wt != 2 || fnum != 1) {
            if (wt == 2)
                p += v;
            continue;
        }
        const uint8_t *q = p, *plane_end = p + v;
        p += v;
        Py_ssize_t n_meta = 0;
        if (!(meta = malloc(v ? v : 1)) || !(lines = PyList_New(0))) {
            if (!meta)
                PyErr_NoMemory();
            goto fail;
        }
        while (q < plane_end) {
            const uint8_t *field_start = q;
            uint32_t f, w;
            uint64_t len;
            if (field(&q, plane_end, &f, &w, &len) < 0) {
                corrupt();
                goto fail;
            }
            if (w == 2)
                q += len;
            if (w == 2 && f == 3) {
                item = Py_BuildValue("(nn)", (Py_ssize_t)(q - len - buf), (Py_ssize_t)len);
                if (!item || PyList_Append(lines, item) < 0)
                    goto fail;
                Py_CLEAR(item);
            } else { /* keep the whole field, tag and all */
                memcpy(meta + n_meta, field_start, q - field_start);
                n_meta += q - field_start;
            }
        }
        item = Py_BuildValue("(y#N)", (const char *)meta, n_meta, lines);
        lines = NULL; /* the tuple owns it now */
        free(meta);
        meta = NULL;
        if (!item || PyList_Append(planes, item) < 0)
            goto fail;
        Py_CLEAR(item);
    }
    PyBuffer_Release(&b);
    return planes;
fail:
    free(meta);
    Py_XDECREF(item);
    Py_XDECREF(lines);
    Py_XDECREF(planes);
    PyBuffer_Release(&b);
    return NULL;
}

/* scan_line(xline) -> (id, timestamp_ns, name_b, name_e, display_name_b, display_name_e,
 * n_events): the line's own fields and its number of events; event bodies are skipped. */
static PyObject *scan_line(PyObject *self, PyObject *args)
{
    Py_buffer b = {0};
    int64_t id = 0, ts = 0;
    Py_ssize_t nb = 0, ne = 0, db = 0, de = 0, n = 0;
    int rc = 0;
    if (!PyArg_ParseTuple(args, "y*", &b))
        return NULL;
    const uint8_t *buf = b.buf, *p = buf, *end = buf + b.len;
    while (p < end) {
        uint32_t fnum, wt;
        uint64_t v;
        if ((rc = field(&p, end, &fnum, &wt, &v)) < 0)
            break;
        if (wt == 2) {
            if (fnum == 4)
                n++;
            else if (fnum == 2) {
                nb = p - buf;
                ne = nb + (Py_ssize_t)v;
            } else if (fnum == 11) {
                db = p - buf;
                de = db + (Py_ssize_t)v;
            }
            p += v;
        } else if (wt == 0 && fnum == 1)
            id = (int64_t)v;
        else if (wt == 0 && fnum == 3)
            ts = (int64_t)v;
    }
    PyBuffer_Release(&b);
    if (rc < 0)
        return corrupt();
    return Py_BuildValue("(LLnnnnn)", (long long)id, (long long)ts, nb, ne, db, de, n);
}

/* split_line(xline, parts) -> [(byte_begin, byte_end, first_event, n_events), ...]
 *
 * A serialized XLine cut into at most `parts` runs of whole events, as even in event count as
 * the count allows, for decode_line to decode each run on its own (one thread each): a run
 * starts at an event's tag and ends where the next run starts, the last at the line's end (the
 * line's other fields inside a run are skipped by decode_line as in the whole line). No run is
 * empty; a line without events gives none. */
static PyObject *split_line(PyObject *self, PyObject *args)
{
    Py_buffer b = {0};
    Py_ssize_t parts;
    if (!PyArg_ParseTuple(args, "y*n", &b, &parts))
        return NULL;
    if (parts < 1)
        parts = 1;
    Py_ssize_t *cut = PyMem_Calloc((size_t)parts, sizeof(Py_ssize_t));   /* a run's first byte */
    Py_ssize_t *first = PyMem_Calloc((size_t)parts, sizeof(Py_ssize_t)); /* its first event */
    if (!cut || !first) {
        PyMem_Free(cut);
        PyMem_Free(first);
        PyBuffer_Release(&b);
        return PyErr_NoMemory();
    }
    int rc = 0;
    Py_ssize_t n = 0, m = 0;
    Py_BEGIN_ALLOW_THREADS
    const uint8_t *buf = b.buf, *p = buf, *end = buf + b.len;
    while (p < end) { /* count the events */
        uint32_t fnum, wt;
        uint64_t v;
        if ((rc = field(&p, end, &fnum, &wt, &v)) < 0)
            break;
        if (wt == 2) {
            n += fnum == 4;
            p += v;
        }
    }
    if (rc == 0 && n > 0) {
        for (Py_ssize_t i = 0; i < parts; i++) { /* the runs' first events, distinct */
            Py_ssize_t t = (Py_ssize_t)((int64_t)i * n / parts);
            if (m == 0 || t > first[m - 1])
                first[m++] = t;
        }
        Py_ssize_t ev = 0, k = 0;
        p = buf;
        while (p < end && k < m) {
            const uint8_t *tag = p;
            uint32_t fnum, wt;
            uint64_t v;
            if ((rc = field(&p, end, &fnum, &wt, &v)) < 0)
                break;
            if (wt == 2) {
                if (fnum == 4) {
                    if (ev == first[k])
                        cut[k++] = tag - buf;
                    ev++;
                }
                p += v;
            }
        }
    }
    Py_END_ALLOW_THREADS
    PyObject *out = NULL;
    if (rc < 0) {
        corrupt();
        goto done;
    }
    out = PyList_New(m);
    for (Py_ssize_t i = 0; out && i < m; i++) {
        Py_ssize_t stop_b = i + 1 < m ? cut[i + 1] : b.len;
        Py_ssize_t stop_e = i + 1 < m ? first[i + 1] : n;
        PyObject *t = Py_BuildValue("(nnnn)", cut[i], stop_b, first[i], stop_e - first[i]);
        if (!t)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, t);
    }
done:
    PyMem_Free(cut);
    PyMem_Free(first);
    PyBuffer_Release(&b);
    return out;
}

/* The wanted stats of a line, in growable columns. */
typedef struct {
    int64_t *ev, *mid, *val, *b, *e;
    uint8_t *kind;
    Py_ssize_t n, cap;
} stat_cols;

static int stat_grow(stat_cols *c)
{
    Py_ssize_t cap = c->cap ? 2 * c->cap : 1024;
    int64_t **cols[] = {&c->ev, &c->mid, &c->val, &c->b, &c->e};
    for (int i = 0; i < 5; i++) {
        int64_t *v = realloc(*cols[i], cap * sizeof(int64_t));
        if (!v)
            return -1;
        *cols[i] = v;
    }
    uint8_t *k = realloc(c->kind, cap);
    if (!k)
        return -1;
    c->kind = k;
    c->cap = cap;
    return 0;
}

static void stat_free(stat_cols *c)
{
    free(c->ev);
    free(c->mid);
    free(c->val);
    free(c->b);
    free(c->e);
    free(c->kind);
}

typedef struct {
    const uint8_t *buf;
    int64_t base, *start, *end, *mid;
    int32_t *gid;
    const int32_t *lut; /* event metadata id -> name id, -1 unknown */
    Py_ssize_t n_lut;
    const uint8_t *wanted; /* stat metadata id -> 1 when the analysis reads that stat */
    Py_ssize_t n_wanted;
    stat_cols st;
    int nomem;
} line_ctx;

/* One XStat body at [p, end) of event ev: recorded when its metadata id is wanted. */
static int decode_stat(line_ctx *c, const uint8_t *p, const uint8_t *end, Py_ssize_t ev)
{
    int64_t mid = 0, val = 0, b = 0, e = 0;
    uint8_t kind = 0;
    while (p < end) {
        uint32_t fnum, wt;
        uint64_t v;
        if (field(&p, end, &fnum, &wt, &v) < 0)
            return -1;
        if (wt == 2) {
            if (fnum == 5 || fnum == 6) {
                kind = (uint8_t)fnum;
                b = p - c->buf;
                e = b + (int64_t)v;
            }
            p += v;
        } else if (wt == 0 && fnum == 1) {
            mid = (int64_t)v;
        } else if ((wt == 0 && (fnum == 3 || fnum == 4 || fnum == 7)) || (wt == 1 && fnum == 2)) {
            kind = (uint8_t)fnum;
            val = (int64_t)v;
        }
    }
    if (mid < 0 || mid >= c->n_wanted || !c->wanted[mid])
        return 0;
    stat_cols *s = &c->st;
    if (s->n == s->cap && stat_grow(s) < 0) {
        c->nomem = 1;
        err_msg = "out of memory";
        return -1;
    }
    s->ev[s->n] = ev;
    s->mid[s->n] = mid;
    s->kind[s->n] = kind;
    s->val[s->n] = val;
    s->b[s->n] = b;
    s->e[s->n] = e;
    s->n++;
    return 0;
}

static int decode_event(line_ctx *c, const uint8_t *p, const uint8_t *end, Py_ssize_t ev)
{
    int64_t mid = 0, off = 0, dur = 0;
    while (p < end) {
        uint32_t fnum, wt;
        uint64_t v;
        if (field(&p, end, &fnum, &wt, &v) < 0)
            return -1;
        if (wt == 2) {
            if (fnum == 4 && decode_stat(c, p, p + v, ev) < 0)
                return -1;
            p += v;
        } else if (wt == 0) {
            if (fnum == 1)
                mid = (int64_t)v;
            else if (fnum == 2)
                off = (int64_t)v;
            else if (fnum == 3)
                dur = (int64_t)v;
            /* 5, num_occurrences: aggregated events have no time of their own */
        }
    }
    if (dur < 0) {
        err_msg = "negative event duration";
        return -1;
    }
    int64_t t0, t1;
    if (__builtin_add_overflow(c->base, off, &t0) || __builtin_add_overflow(t0, dur, &t1) ||
        t0 < -TIME_LIMIT || t1 > TIME_LIMIT) {
        err_msg = "an event time more than 26 days from the trace's start";
        return -1;
    }
    c->mid[ev] = mid;
    c->gid[ev] = mid >= 0 && mid < c->n_lut ? c->lut[mid] : -1;
    c->start[ev] = t0;
    c->end[ev] = t1;
    return 0;
}

static PyObject *bytes_of(const void *p, Py_ssize_t n)
{
    return PyBytes_FromStringAndSize(n ? p : NULL, n);
}

/* decode_line(xline, base_ps, lut, wanted, start, end, metadata_id, name_id)
 *   -> (stat event, stat metadata id, stat kind, stat value, stat begin, stat end)
 *
 * Every event of a serialized XLine: start / end in ps (base_ps + offset), metadata id, and name id
 * (lut[metadata id], -1 when not in the table); the output arrays hold scan_line's count. Stats
 * whose metadata id is wanted (wanted[id] != 0) come back as six bytes columns: event index,
 * metadata id (int64), kind (uint8: the value's field number, 2 double bits, 3 uint64, 4 int64,
 * 5 str, 6 bytes, 7 ref, 0 none), value (int64) and the byte span of a str / bytes value. */
static PyObject *decode_line(PyObject *self, PyObject *args)
{
    Py_buffer b = {0}, lut = {0}, wanted = {0}, start = {0}, end = {0}, mid = {0}, gid = {0};
    long long base;
    line_ctx c = {0};
    PyObject *result = NULL;
    int rc = -1;
    if (!PyArg_ParseTuple(args, "y*Ly*y*w*w*w*w*", &b, &base, &lut, &wanted, &start, &end, &mid,
                          &gid))
        goto done;
    Py_ssize_t n = start.len / 8;
    if (check(&end, 8, n, "end") || check(&mid, 8, n, "mid") || check(&gid, 4, n, "gid") ||
        check(&lut, 4, -1, "lut"))
        goto done;
    c.buf = b.buf;
    c.base = (int64_t)base;
    c.start = start.buf;
    c.end = end.buf;
    c.mid = mid.buf;
    c.gid = gid.buf;
    c.lut = lut.buf;
    c.n_lut = lut.len / 4;
    c.wanted = wanted.buf;
    c.n_wanted = wanted.len;
    Py_BEGIN_ALLOW_THREADS
    const uint8_t *p = b.buf, *stop = p + b.len;
    Py_ssize_t ev = 0;
    rc = 0;
    while (p < stop && rc == 0) {
        uint32_t fnum, wt;
        uint64_t v;
        if ((rc = field(&p, stop, &fnum, &wt, &v)) < 0)
            break;
        if (wt == 2) {
            if (fnum == 4) {
                if (ev >= n) {
                    err_msg = "more events than scan_line counted";
                    rc = -1;
                    break;
                }
                rc = decode_event(&c, p, p + v, ev++);
            }
            p += v;
        }
    }
    if (rc == 0 && ev != n) {
        err_msg = "fewer events than scan_line counted";
        rc = -1;
    }
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        if (c.nomem)
            PyErr_NoMemory();
        else
            corrupt();
        goto done;
    }
    Py_ssize_t m = c.st.n;
    result = Py_BuildValue("(NNNNNN)", bytes_of(c.st.ev, m * 8), bytes_of(c.st.mid, m * 8),
                           bytes_of(c.st.kind, m), bytes_of(c.st.val, m * 8),
                           bytes_of(c.st.b, m * 8), bytes_of(c.st.e, m * 8));
done:
    stat_free(&c.st);
    RELEASE(&b, &lut, &wanted, &start, &end, &mid, &gid);
    return result;
}

static Py_ssize_t first_segment(const int64_t *b, Py_ssize_t nseg, int64_t t);

/* ---- nesting -------------------------------------------------------------------------------- */

typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} stack;

static int push(stack *s, int64_t x)
{
    if (s->n == s->cap) {
        Py_ssize_t cap = s->cap ? 2 * s->cap : 256;
        int64_t *v = realloc(s->v, cap * sizeof(int64_t));
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

/* is_sorted(start, end) -> bool: sorted by (start, -end)? */
static PyObject *is_sorted(PyObject *self, PyObject *args)
{
    Py_buffer s = {0}, e = {0};
    int ok = 1;
    if (!PyArg_ParseTuple(args, "y*y*", &s, &e))
        return NULL;
    Py_ssize_t n = s.len / 8;
    if (check(&e, 8, n, "end")) {
        RELEASE(&s, &e);
        return NULL;
    }
    const int64_t *st = s.buf, *en = e.buf;
    for (Py_ssize_t i = 1; i < n && ok; i++)
        ok = st[i] > st[i - 1] || (st[i] == st[i - 1] && en[i] <= en[i - 1]);
    RELEASE(&s, &e);
    return PyBool_FromLong(ok);
}

/* nest(start, end, line, include, is_frame, parent, depth, crosser)  (parent, depth: int32)
 *
 * Events in table order, sorted by (line, start, -end). For included events (positive length, not
 * a step marker), per thread line: parent (the innermost enclosing event, -1 at top level), depth,
 * and crosser for events that overlap another without nesting, which are kept out of the nesting.
 * When an event starts inside an open event and ends after it: if the open event is a
 * python-tracer frame and the new one a TraceMe (a TraceMe opened in one frame's ``__enter__`` and
 * closed in another's ``__exit__``), the frame is the crosser (the TraceMe keeps its place and its
 * category); otherwise the new event is. Children of a removed frame belong to its parent. */
static PyObject *nest(PyObject *self, PyObject *args)
{
    Py_buffer bs = {0}, be = {0}, bl = {0}, binc = {0}, bfr = {0}, bp = {0}, bd = {0}, bc = {0};
    stack stk = {0};
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*w*w*", &bs, &be, &bl, &binc, &bfr, &bp, &bd, &bc))
        goto done;
    Py_ssize_t n = bs.len / 8;
    if (check(&be, 8, n, "end") || check(&bl, 4, n, "line") || check(&binc, 1, n, "include") ||
        check(&bfr, 1, n, "is_frame") || check(&bp, 4, n, "parent") || check(&bd, 4, n, "depth") ||
        check(&bc, 1, n, "crosser"))
        goto done;
    if (n < 0 || n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "nest: more than 2^31 events");
        goto done;
    }
    const int64_t *st = bs.buf, *en = be.buf;
    const int32_t *ln = bl.buf;
    const uint8_t *inc = binc.buf, *fr = bfr.buf;
    int32_t *par = bp.buf, *dep = bd.buf;
    uint8_t *cr = bc.buf;
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    /* pass 1: crossers */
    memset(cr, 0, n);
    int32_t cur = 0;
    stk.n = 0;
    for (Py_ssize_t i = 0; i < n && !nomem; i++) {
        par[i] = -1;
        dep[i] = 0;
        if (!inc[i])
            continue;
        if (stk.n && ln[i] != cur)
            stk.n = 0;
        cur = ln[i];
        while (stk.n && en[stk.v[stk.n - 1]] <= st[i])
            stk.n--;
        int crosses = 0;
        while (stk.n) {
            int64_t top = stk.v[stk.n - 1];
            if (en[i] <= en[top])
                break; /* nested */
            if (fr[top] && !fr[i]) {
                cr[top] = 1;
                stk.n--;
                continue;
            }
            crosses = 1;
            break;
        }
        if (crosses)
            cr[i] = 1;
        else if (push(&stk, i) < 0)
            nomem = 1;
    }
    /* pass 2: parents and depths of the rest */
    stk.n = 0;
    for (Py_ssize_t i = 0; i < n && !nomem; i++) {
        if (!inc[i] || cr[i])
            continue;
        if (stk.n && ln[i] != cur)
            stk.n = 0;
        cur = ln[i];
        while (stk.n && en[stk.v[stk.n - 1]] <= st[i])
            stk.n--;
        if (stk.n && en[i] > en[stk.v[stk.n - 1]]) {
            cr[i] = 1; /* cannot happen after pass 1; kept out if it does */
            continue;
        }
        par[i] = stk.n ? (int32_t)stk.v[stk.n - 1] : -1;
        dep[i] = (int32_t)stk.n;
        if (push(&stk, i) < 0)
            nomem = 1;
    }
    Py_END_ALLOW_THREADS
    if (nomem) {
        PyErr_NoMemory();
        goto done;
    }
    ok = 1;
done:
    free(stk.v);
    RELEASE(&bs, &be, &bl, &binc, &bfr, &bp, &bd, &bc);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* inherit(parent, own, own_strength, pass_strength, cat, n_cat, pyframe, python, other)
 *
 * Each event's effective category along the nesting, parents before children (table order). An
 * event keeps its own category (own >= 0) when it holds it at least as strongly as its parent
 * hands one down; otherwise it takes the inherited one; with neither, python for a python-tracer
 * frame (own == pyframe), other for the rest. parent int32; own, the strengths and cat int8. */
static PyObject *inherit(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bo = {0}, bos = {0}, bps = {0}, bc = {0};
    long long n_cat, pyframe, python, other;
    int ok = 0;
    int8_t *passed = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*LLLL", &bp, &bo, &bos, &bps, &bc, &n_cat, &pyframe,
                          &python, &other))
        goto done;
    Py_ssize_t n = bp.len / 4;
    if (check(&bp, 4, n, "parent") || check(&bo, 1, n, "own") || check(&bos, 1, n, "own_strength") ||
        check(&bps, 1, n, "pass_strength") || check(&bc, 1, n, "cat"))
        goto done;
    if (n_cat < 0 || n_cat > INT8_MAX || python < INT8_MIN || python > INT8_MAX ||
        other < INT8_MIN || other > INT8_MAX) {
        PyErr_SetString(PyExc_ValueError, "inherit: category codes out of int8 range");
        goto done;
    }
    const int32_t *par = bp.buf;
    const int8_t *own = bo.buf, *os = bos.buf, *ps = bps.buf;
    int8_t *cat = bc.buf;
    passed = malloc(n ? n : 1);
    if (!passed) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t p = par[i];
        if (p >= i) {
            PyErr_SetString(PyExc_ValueError, "inherit: a parent after its child");
            goto done;
        }
        int64_t inh_str = p >= 0 ? passed[p] : 0;
        int64_t inh_cat = inh_str > 0 ? cat[p] : n_cat;
        int64_t o = own[i], res, rp;
        if (o >= 0 && os[i] >= inh_str) {
            res = o;
            rp = ps[i];
        } else {
            res = inh_cat;
            rp = inh_str;
        }
        if (res == n_cat) {
            res = o == pyframe ? python : other;
            rp = 0;
        }
        cat[i] = (int8_t)res;
        passed[i] = (int8_t)rp;
    }
    ok = 1;
done:
    free(passed);
    RELEASE(&bp, &bo, &bos, &bps, &bc);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* mark_ancestors(parent, flag): flag every ancestor of a flagged event (children after parents);
 * parent int32. */
static PyObject *mark_ancestors(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bf = {0};
    if (!PyArg_ParseTuple(args, "y*w*", &bp, &bf))
        return NULL;
    Py_ssize_t n = bp.len / 4;
    if (check(&bp, 4, n, "parent") || check(&bf, 1, n, "flag")) {
        RELEASE(&bp, &bf);
        return NULL;
    }
    const int32_t *par = bp.buf;
    uint8_t *fl = bf.buf;
    for (Py_ssize_t i = n - 1; i >= 0; i--)
        if (fl[i] && par[i] >= 0 && par[i] < i)
            fl[par[i]] = 1;
    RELEASE(&bp, &bf);
    Py_RETURN_NONE;
}

/* nearest_marked(parent, mask, out): the nearest event at or above each event (along parents)
 * with mask set, -1 for none. parent and out int32. */
static PyObject *nearest_marked(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bm = {0}, bo = {0};
    if (!PyArg_ParseTuple(args, "y*y*w*", &bp, &bm, &bo))
        return NULL;
    Py_ssize_t n = bp.len / 4;
    if (check(&bp, 4, n, "parent") || check(&bm, 1, n, "mask") || check(&bo, 4, n, "out")) {
        RELEASE(&bp, &bm, &bo);
        return NULL;
    }
    const int32_t *par = bp.buf;
    const uint8_t *m = bm.buf;
    int32_t *out = bo.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = m[i] ? (int32_t)i : (par[i] >= 0 && par[i] < i ? out[par[i]] : -1);
    RELEASE(&bp, &bm, &bo);
    Py_RETURN_NONE;
}

/* timeline(start, end, events, cat, python, t, owner, seg_cat) -> k
 *
 * The timeline of properly nested events (indices in table order): every instant where the
 * innermost open event changes, the event that owns the time after it (int32, -1: none) and that
 * time's category (int8: cat[owner], python where no event is open). At one instant only the
 * last change is kept, so t[:k] is strictly increasing and segment j is [t[j], t[j+1]) owned by
 * owner[j]. events is int32, cat int8. t, owner and seg_cat need room for 2 * len(events). */
static PyObject *timeline(PyObject *self, PyObject *args)
{
    Py_buffer bs = {0}, be = {0}, bev = {0}, bcat = {0}, bt = {0}, bo = {0}, bsc = {0};
    long long python;
    stack stk = {0};
    Py_ssize_t k = 0;
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*Lw*w*w*", &bs, &be, &bev, &bcat, &python, &bt, &bo,
                          &bsc))
        goto done;
    Py_ssize_t n = bs.len / 8, m = bev.len / 4;
    if (check(&be, 8, n, "end") || check(&bev, 4, m, "events") || check(&bcat, 1, n, "cat") ||
        check(&bt, 8, 2 * m, "t") || check(&bo, 4, 2 * m, "owner") ||
        check(&bsc, 1, 2 * m, "seg_cat"))
        goto done;
    const int64_t *st = bs.buf, *en = be.buf;
    const int32_t *ev = bev.buf;
    const int8_t *cat = bcat.buf;
    int64_t *t = bt.buf;
    int32_t *ow = bo.buf;
    int8_t *sc = bsc.buf;
#define EMIT(time, who)                                                                        \
    do {                                                                                       \
        int64_t _w = (who);                                                                    \
        if (!(k && t[k - 1] == (time)))                                                        \
            t[k++] = (time);                                                                   \
        ow[k - 1] = (int32_t)_w;                                                               \
        sc[k - 1] = (int8_t)(_w >= 0 ? cat[_w] : python);                                      \
    } while (0)
    for (Py_ssize_t j = 0; j < m; j++) {
        int64_t e = ev[j];
        if (e < 0 || e >= n || e > INT32_MAX) {
            PyErr_SetString(PyExc_IndexError, "timeline: event index out of range");
            goto done;
        }
        while (stk.n && en[stk.v[stk.n - 1]] <= st[e]) {
            int64_t top = stk.v[--stk.n];
            EMIT(en[top], stk.n ? stk.v[stk.n - 1] : -1);
        }
        EMIT(st[e], e);
        if (push(&stk, e) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    while (stk.n) {
        int64_t top = stk.v[--stk.n];
        EMIT(en[top], stk.n ? stk.v[stk.n - 1] : -1);
    }
#undef EMIT
    ok = 1;
done:
    free(stk.v);
    RELEASE(&bs, &be, &bev, &bcat, &bt, &bo, &bsc);
    if (!ok)
        return NULL;
    return PyLong_FromSsize_t(k);
}

/* frame_sums(parent, name, start, nested, is_frame_name, lo, hi, t0, t1, own, calls, self,
 *            inclusive)
 *
 * Python hotspots of one thread (its events are rows [lo, hi), sorted by start): for every
 * python-tracer frame (is_frame_name[name]) of the nesting (nested) that starts inside one of the
 * sorted, disjoint windows [t0, t1), per name: calls, own time (``own``, the time the frame owns),
 * and inclusive time, the own time of its whole subtree, counted for outermost calls only (no
 * counted ancestor of the same name: recursion counted once). Subtrees are summed in one backward
 * pass (children come after their parents); the chain of ancestors is kept in one forward pass. */
static PyObject *frame_sums(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bn = {0}, bs = {0}, bnest = {0}, bfn = {0}, b0 = {0}, b1 = {0},
              bown = {0}, bcalls = {0}, bself = {0}, bincl = {0};
    Py_ssize_t lo, hi;
    stack stk = {0};
    int64_t *sub = NULL;
    int32_t *count = NULL;
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*nny*y*y*w*w*w*", &bp, &bn, &bs, &bnest, &bfn, &lo, &hi,
                          &b0, &b1, &bown, &bcalls, &bself, &bincl))
        goto done;
    Py_ssize_t n = bp.len / 4, n_names = bfn.len, w = b0.len / 8;
    if (check(&bp, 4, n, "parent") || check(&bn, 4, n, "name") || check(&bs, 8, n, "start") || check(&bnest, 1, n, "nested") ||
        check(&b1, 8, w, "t1") || check(&bown, 8, n, "own") || check(&bcalls, 8, n_names, "calls") ||
        check(&bself, 8, n_names, "self") || check(&bincl, 8, n_names, "inclusive"))
        goto done;
    if (lo < 0 || hi > n || lo > hi) {
        PyErr_SetString(PyExc_IndexError, "frame_sums: rows out of range");
        goto done;
    }
    const int32_t *par = bp.buf;
    const int64_t *st = bs.buf, *t0 = b0.buf, *t1 = b1.buf, *own = bown.buf;
    const int32_t *nm = bn.buf;
    const uint8_t *nested = bnest.buf, *is_frame = bfn.buf;
    int64_t *calls = bcalls.buf, *selft = bself.buf, *incl = bincl.buf;
    for (Py_ssize_t i = lo; i < hi; i++)
        if (nm[i] < 0 || nm[i] >= n_names) {
            PyErr_SetString(PyExc_IndexError, "frame_sums: name id out of range");
            goto done;
        }
    sub = malloc(((hi - lo) ? (hi - lo) : 1) * sizeof(int64_t));
    count = calloc(n_names ? n_names : 1, sizeof(int32_t));
    if (!sub || !count) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(sub, own + lo, (hi - lo) * sizeof(int64_t));
    for (Py_ssize_t i = hi - 1; i >= lo; i--)
        if (par[i] >= lo && par[i] < i)
            sub[par[i] - lo] += sub[i - lo];
    Py_ssize_t k = 0; /* the window a start may fall in */
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (!nested[i])
            continue;
        while (stk.n && stk.v[stk.n - 1] != par[i]) {
            int64_t top = stk.v[--stk.n];
            if (top <= -2) /* a name marker (below -1, which is "no parent") */
                count[-top - 2]--;
        }
        while (k < w && t1[k] <= st[i])
            k++;
        int64_t entry = i;
        if (is_frame[nm[i]] && k < w && t0[k] <= st[i]) {
            int32_t f = nm[i];
            calls[f]++;
            selft[f] += own[i];
            if (count[f] == 0)
                incl[f] += sub[i - lo];
            count[f]++;
            entry = -(int64_t)f - 2;
        }
        /* the chain holds event indices; a counted frame's index sits on a marker of its name, so
         * popping the frame pops the marker next and gives its count back */
        if ((entry < 0 && push(&stk, entry) < 0) || push(&stk, i) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    ok = 1;
done:
    free(stk.v);
    free(sub);
    free(count);
    RELEASE(&bp, &bn, &bs, &bnest, &bfn, &b0, &b1, &bown, &bcalls, &bself, &bincl);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* window_sums(bounds, seg_cat, t0, t1, out): out[w * n_cat + c] = time of the segments of category
 * c (segment j is [bounds[j], bounds[j+1]), seg_cat int8) inside window [t0[w], t1[w]). Each window
 * finds its first segment by binary search and walks its segments: linear in the segments the
 * windows cover. */
static PyObject *window_sums(PyObject *self, PyObject *args)
{
    Py_buffer bb = {0}, bc = {0}, b0 = {0}, b1 = {0}, bo = {0};
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*", &bb, &bc, &b0, &b1, &bo))
        goto done;
    Py_ssize_t nb = bb.len / 8, w = b0.len / 8;
    Py_ssize_t nseg = nb > 0 ? nb - 1 : 0;
    if (check(&bc, 1, nseg, "seg_cat") || check(&b1, 8, w, "t1") || (w && bo.len % (8 * w)))
        goto done;
    Py_ssize_t n_cat = w ? bo.len / 8 / w : 0;
    const int64_t *b = bb.buf, *t0 = b0.buf, *t1 = b1.buf;
    const int8_t *cat = bc.buf;
    int64_t *out = bo.buf;
    memset(out, 0, bo.len);
    for (Py_ssize_t k = 0; k < w; k++) {
        Py_ssize_t lo = first_segment(b, nseg, t0[k]);
        for (Py_ssize_t j = lo; j < nseg && b[j] < t1[k]; j++) {
            int64_t a = b[j] > t0[k] ? b[j] : t0[k];
            int64_t z = b[j + 1] < t1[k] ? b[j + 1] : t1[k];
            if (z > a && cat[j] >= 0 && cat[j] < n_cat)
                out[k * n_cat + cat[j]] += z - a;
        }
    }
    ok = 1;
done:
    RELEASE(&bb, &bc, &b0, &b1, &bo);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* first segment ending after t (segment j is [b[j], b[j + 1])) */
static Py_ssize_t first_segment(const int64_t *b, Py_ssize_t nseg, int64_t t)
{
    Py_ssize_t lo = 0, hi = nseg;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (b[mid + 1] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* owned_time(bounds, seg_owner, seg_cat, t0, t1, category, out): out[e] += the time of the
 * segments of one category owned by event e (seg_owner int32, -1 for none) inside the windows
 * [t0, t1), clipped to them. */
static PyObject *owned_time(PyObject *self, PyObject *args)
{
    Py_buffer bb = {0}, bown = {0}, bc = {0}, b0 = {0}, b1 = {0}, bo = {0};
    int category, ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*iw*", &bb, &bown, &bc, &b0, &b1, &category, &bo))
        goto done;
    Py_ssize_t nb = bb.len / 8, w = b0.len / 8, n = bo.len / 8;
    Py_ssize_t nseg = nb > 0 ? nb - 1 : 0;
    if (check(&bown, 4, nseg, "seg_owner") || check(&bc, 1, nseg, "seg_cat") ||
        check(&b1, 8, w, "t1") || check(&bo, 8, n, "out"))
        goto done;
    const int64_t *b = bb.buf, *t0 = b0.buf, *t1 = b1.buf;
    const int32_t *owner = bown.buf;
    const int8_t *cat = bc.buf;
    int64_t *out = bo.buf;
    for (Py_ssize_t k = 0; k < w; k++)
        for (Py_ssize_t j = first_segment(b, nseg, t0[k]); j < nseg && b[j] < t1[k]; j++) {
            if (cat[j] != category || owner[j] < 0 || owner[j] >= n)
                continue;
            int64_t a = b[j] > t0[k] ? b[j] : t0[k];
            int64_t z = b[j + 1] < t1[k] ? b[j + 1] : t1[k];
            if (z > a)
                out[owner[j]] += z - a;
        }
    ok = 1;
done:
    RELEASE(&bb, &bown, &bc, &b0, &b1, &bo);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"split_space", split_space, METH_VARARGS,
     "split_space(xspace) -> [(plane_without_lines, [(line_offset, line_length), ...]), ...]"},
    {"scan_line", scan_line, METH_VARARGS,
     "scan_line(xline) -> (id, timestamp_ns, name_b, name_e, display_name_b, display_name_e, "
     "n_events)"},
    {"split_line", split_line, METH_VARARGS,
     "split_line(xline, parts) -> [(byte_begin, byte_end, first_event, n_events), ...]"},
    {"decode_line", decode_line, METH_VARARGS,
     "decode_line(xline, base_ps, lut, wanted, start, end, metadata_id, name_id) -> stat columns"},
    {"is_sorted", is_sorted, METH_VARARGS, "is_sorted(start, end) -> bool"},
    {"nest", nest, METH_VARARGS,
     "nest(start, end, line, include, is_frame, parent, depth, crosser)"},
    {"inherit", inherit, METH_VARARGS,
     "inherit(parent, own, own_strength, pass_strength, cat, n_cat, pyframe, python, other)"},
    {"mark_ancestors", mark_ancestors, METH_VARARGS, "mark_ancestors(parent, flag)"},
    {"nearest_marked", nearest_marked, METH_VARARGS, "nearest_marked(parent, mask, out)"},
    {"timeline", timeline, METH_VARARGS,
     "timeline(start, end, events, cat, python, t, owner, seg_cat) -> k"},
    {"frame_sums", frame_sums, METH_VARARGS,
     "frame_sums(parent, name, start, nested, is_frame_name, lo, hi, t0, t1, own, calls, self, "
     "inclusive)"},
    {"owned_time", owned_time, METH_VARARGS,
     "owned_time(bounds, seg_owner, seg_cat, t0, t1, category, out)"},
    {"window_sums", window_sums, METH_VARARGS, "window_sums(bounds, seg_cat, t0, t1, out)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "traceinsight's per-event loops (see native.py)", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
