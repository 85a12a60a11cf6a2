/* The protobuf wire decoding of traceinsight's trace reading, in C: an XSpace split into its
 * planes and lines, and a line's events decoded into columns in one linear pass, the GIL released
 * (threads decode one trace's lines at once: traceinsight.analysis.events).
 *
 * Trace bytes are untrusted: every read is bounds-checked and a malformed line raises ValueError.
 * The per-event loops over the decoded columns are in _native_kernels.c.
 */
#include "_native.h"

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

/* split_space(xspace) -> [(plane_without_lines, [(line_offset, line_length), ...]), ...]
 *
 * An XSpace's planes (field 1), each split into its lines (XPlane field 3: where they lie in the
 * buffer, for scan_line / decode_line to read in place) and everything else (name, metadata, plane
 * stats: re-serialized as an XPlane without lines, small, for protobuf to parse). The XSpace's
 * other fields (errors, warnings, hostnames) are not read. */
PyObject *native_split_space(PyObject *self, PyObject *args)
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
PyObject *native_scan_line(PyObject *self, PyObject *args)
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

/* split_line(xline, parts[, n_events]) -> [(byte_begin, byte_end, first_event, n_events), ...]
 *
 * A serialized XLine cut into at most `parts` runs of whole events, as even in event count as
 * the count allows, for decode_line to decode each run on its own (one thread each): a run
 * starts at an event's tag and ends where the next run starts, the last at the line's end (the
 * line's other fields inside a run are skipped by decode_line as in the whole line). No run is
 * empty; a line without events gives none. n_events: the line's event count where the caller
 * has it (scan_line's), so the line is not walked once more to count them; the walk to the last
 * cut then checks it (ValueError where the line holds fewer). */
PyObject *native_split_line(PyObject *self, PyObject *args)
{
    Py_buffer b = {0};
    Py_ssize_t parts, known = -1;
    if (!PyArg_ParseTuple(args, "y*n|n", &b, &parts, &known))
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
    if (known >= 0) {
        n = known;
        p = end;
    }
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
        if (rc == 0 && k < m) {
            err_msg = "fewer events than scan_line counted";
            rc = -1;
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
PyObject *native_decode_line(PyObject *self, PyObject *args)
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
