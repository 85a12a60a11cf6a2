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
 * buffer, for scan_jobs / decode_jobs to read in place) and everything else (name, metadata, plane
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

/* ---- a trace's lines decoded by threads ----------------------------------------------------
 *
 * One file's lines are cut into jobs (events.load_files): a small line is one job, a large one
 * several, each a span of its bytes [X, Y). Two passes run over all jobs, each on `threads`
 * threads (the calling one among them) that take jobs in turn, the GIL released:
 *
 * scan_jobs: each job walks the line's fields from its first field at or after X to its first
 * field at or after Y (Q), counting its events and noting the line's own fields it meets (id,
 * timestamp, name, display name). A job starting inside the line (X past the line's start) cannot
 * know where a field starts: it takes the first byte from X on where an event's tag starts a run
 * of fields that parse (sync_ok), as a guess. The guess is checked afterwards, in order
 * (resolve_job): the job before it, exact, stops at the line's first field at or after X; the
 * guessed walk must pass there (a walk from a wrong guess inside an event meets the right one at
 * the event's end) and then starts there; a job whose guess fails is walked again from there.
 * The outcome (fields, counts, the first error) is that of one walk of each whole line.
 *
 * decode_jobs: each job decodes its events (from P to Q) into the rows [ROW, ROW + N) of the
 * table's columns (start / end ps, name id, line index), and keeps its wanted stats and the
 * events whose name id the lookup table lacks (for Python to name).
 *
 * A job is one row of an int64 array of J_FIELDS fields: */
enum {
    J_LB, J_LE, J_X, J_Y,                    /* in: the line's bytes, the job's span in it */
    J_P, J_Q, J_N, J_STATUS,                 /* scan: fields from P to Q, N events, 0 ok / -1 */
    J_ID, J_TS, J_NB, J_NE, J_DB, J_DE,      /* scan: the line's fields met (last one each), */
    J_SEEN,                                  /*   SEEN bits 1 id, 2 timestamp, 4 name, 8 display */
    J_ROW, J_BASE, J_LINE,                   /* decode in: first row, ps of offset 0, line index */
    J_LUT, J_NLUT, J_WANT, J_NWANT,          /*   the plane's lookup tables (offset, length) */
    J_SORTED, J_S0, J_E0, J_S1, J_E1,        /* decode: sorted by (start, -end)?, first, last */
    J_AGAIN,                                 /* scan: 1 where the guess failed (walked again) */
    J_FIELDS
};

#define MAX_THREADS 256

typedef struct {
    const uint8_t *buf;
    Py_ssize_t len;
    int64_t *jobs;
    Py_ssize_t n_jobs;
    Py_ssize_t next; /* the next job to take (atomic) */
    const char **err; /* per job: why it failed */
    /* decode_jobs */
    const int32_t *lut;
    Py_ssize_t n_lut;
    const uint8_t *wanted;
    Py_ssize_t n_wanted;
    int64_t *start, *end;
    int32_t *gid;
    void *line;
    int line_size;
    Py_ssize_t rows;
    struct job_out *out;
    struct sync_marks *marks;
} jobs_ctx;

/* Runs work(ctx, job) for every job on `threads` threads, the calling one among them. */
static void run_threads(jobs_ctx *c, int threads, void *(*worker)(void *))
{
    pthread_t th[MAX_THREADS];
    int started = 0;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&th[started], NULL, worker, c) == 0)
            started++; /* a thread that cannot start leaves its jobs to the others */
    worker(c);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

static inline Py_ssize_t take(jobs_ctx *c)
{
    return __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED);
}

/* The fields of an event (depth 1, its stats' too) at [p, end) parse, as far as `budget`
 * fields allow (a guess needs no more: it is checked afterwards; the budget keeps the search
 * linear in a line crafted to look like events everywhere)? */
static int walk_ok(const uint8_t *p, const uint8_t *end, int depth, int *budget)
{
    while (p < end && --*budget >= 0) {
        uint32_t f, w;
        uint64_t v;
        if (field(&p, end, &f, &w, &v) < 0 || f == 0)
            return 0;
        if (w == 2) {
            if (depth && f == 4 && !walk_ok(p, p + v, 0, budget))
                return 0;
            p += v;
        }
    }
    return 1;
}

/* Might an event's field start at p? Its tag (field 4, length-delimited), then up to 8 fields
 * (events parsed through, their stats too; 64 fields in all) that parse within the line. A
 * guess: checked by the caller (see above). */
static int sync_ok(const uint8_t *p, const uint8_t *end)
{
    int budget = 64;
    if (*p != 0x22)
        return 0;
    for (int k = 0; k < 8 && p < end && budget > 0; k++) {
        uint32_t f, w;
        uint64_t v;
        budget--;
        if (field(&p, end, &f, &w, &v) < 0 || f == 0)
            return 0;
        if (w == 2) {
            if (f == 4 && !walk_ok(p, p + v, 1, &budget))
                return 0;
            p += v;
        }
    }
    return 1;
}

/* A job starting inside its line: where its first fields started, and its events before each. */
#define SYNC_MARKS 64
typedef struct sync_marks {
    int64_t pos[SYNC_MARKS], before[SYNC_MARKS];
    int n, first_seen; /* first_seen: the index of the first line field met (SYNC_MARKS: none) */
} sync_marks;

/* Walks job k's fields from p (its line's start, a field start known, or a guess: `m` then
 * notes its first fields) to its first field at or after Y. */
static void walk_job(jobs_ctx *c, Py_ssize_t k, const uint8_t *p, sync_marks *m)
{
    int64_t *j = c->jobs + k * J_FIELDS;
    const uint8_t *buf = c->buf, *end = buf + j[J_LE], *y = buf + j[J_Y];
    int64_t n = 0, seen = 0;
    j[J_STATUS] = 0;
    j[J_P] = p - buf;
    if (m) {
        m->n = 0;
        m->first_seen = SYNC_MARKS;
    }
    while (p < end && p < y) {
        uint32_t fnum, wt;
        uint64_t v;
        if (m && m->n < SYNC_MARKS) {
            m->pos[m->n] = p - buf;
            m->before[m->n++] = n;
        }
        if (field(&p, end, &fnum, &wt, &v) < 0) {
            j[J_STATUS] = -1;
            c->err[k] = err_msg;
            break;
        }
        int64_t was = seen;
        if (wt == 2) {
            if (fnum == 4)
                n++;
            else if (fnum == 2) {
                j[J_NB] = p - buf;
                j[J_NE] = j[J_NB] + (int64_t)v;
                seen |= 4;
            } else if (fnum == 11) {
                j[J_DB] = p - buf;
                j[J_DE] = j[J_DB] + (int64_t)v;
                seen |= 8;
            }
            p += v;
        } else if (wt == 0 && fnum == 1) {
            j[J_ID] = (int64_t)v;
            seen |= 1;
        } else if (wt == 0 && fnum == 3) {
            j[J_TS] = (int64_t)v;
            seen |= 2;
        }
        if (m && seen != was && m->first_seen == SYNC_MARKS)
            m->first_seen = m->n - 1;
    }
    j[J_Q] = p - buf;
    j[J_N] = n;
    j[J_SEEN] = seen;
}

static void scan_job(jobs_ctx *c, Py_ssize_t k)
{
    int64_t *j = c->jobs + k * J_FIELDS;
    const uint8_t *p = c->buf + j[J_X], *end = c->buf + j[J_LE];
    if (j[J_X] == j[J_LB]) {
        walk_job(c, k, p, NULL);
        return;
    }
    while (p < end && !sync_ok(p, end))
        p++;
    walk_job(c, k, p, &c->marks[k]);
}

/* A job that started inside its line from a guessed field, once the job before it is exact (its
 * walk from the line's start, or from a field start known the same way, ends at the first field
 * at or after this job's X: Q): the guessed walk meets it there (a guess inside an event, on one
 * of its stats, walks on to the event's end, which is that field) and the job is made to start
 * there, its events before dropped. A job whose walk failed, or does not meet Q among its first
 * fields, or met a line's own field before, is walked again from Q, here (rare: a guess in a
 * string that parses as events). A job after a failed one is left failed (status 1): the caller
 * walks that line again from its start, for the error. */
static void resolve_job(jobs_ctx *c, Py_ssize_t k)
{
    int64_t *j = c->jobs + k * J_FIELDS, *prev = j - J_FIELDS;
    sync_marks *m = &c->marks[k];
    if (k == 0 || prev[J_LB] != j[J_LB] || prev[J_Y] != j[J_X] || prev[J_STATUS] != 0) {
        j[J_STATUS] = j[J_STATUS] < 0 ? j[J_STATUS] : 1;
        return;
    }
    int64_t q = prev[J_Q];
    int i = 0;
    while (i < m->n && m->pos[i] != q)
        i++;
    int met = i < m->n || (q == j[J_Q] && m->n < SYNC_MARKS);
    if (j[J_STATUS] != 0 || !met || (m->first_seen < SYNC_MARKS && m->first_seen < i)) {
        walk_job(c, k, c->buf + q, NULL);
        j[J_AGAIN] = 1;
        return;
    }
    j[J_N] -= i < m->n ? m->before[i] : j[J_N];
    j[J_P] = q;
}

static void *scan_worker(void *arg)
{
    jobs_ctx *c = arg;
    for (Py_ssize_t k; (k = take(c)) < c->n_jobs;)
        scan_job(c, k);
    return NULL;
}

/* Checks a jobs array: int64, C-contiguous, whole jobs, spans within the buffer. */
static int jobs_arg(Py_buffer *jb, Py_ssize_t len, Py_ssize_t *n_jobs)
{
    if (check(jb, 8 * J_FIELDS, -1, "jobs"))
        return -1;
    *n_jobs = jb->len / (8 * J_FIELDS);
    const int64_t *j = jb->buf;
    for (Py_ssize_t k = 0; k < *n_jobs; k++, j += J_FIELDS)
        if (!(0 <= j[J_LB] && j[J_LB] <= j[J_X] && j[J_X] <= j[J_Y] && j[J_Y] <= j[J_LE] &&
              j[J_LE] <= len)) {
            PyErr_SetString(PyExc_ValueError, "jobs: a span outside its line or the buffer");
            return -1;
        }
    return 0;
}

/* scan_jobs(buffer, jobs, threads) -> [(job, error), ...]: see above; the jobs that failed. */
PyObject *native_scan_jobs(PyObject *self, PyObject *args)
{
    Py_buffer b = {0}, jb = {0};
    int threads;
    jobs_ctx c = {0};
    PyObject *out = NULL;
    if (!PyArg_ParseTuple(args, "y*w*i", &b, &jb, &threads))
        return NULL;
    if (jobs_arg(&jb, b.len, &c.n_jobs) < 0)
        goto done;
    c.buf = b.buf;
    c.len = b.len;
    c.jobs = jb.buf;
    if (!(c.err = PyMem_Calloc(c.n_jobs ? c.n_jobs : 1, sizeof(char *))) ||
        !(c.marks = PyMem_Calloc(c.n_jobs ? c.n_jobs : 1, sizeof(sync_marks)))) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    run_threads(&c, threads, scan_worker);
    for (Py_ssize_t k = 0; k < c.n_jobs; k++) /* in order: a job resolves after the one before */
        if (c.jobs[k * J_FIELDS + J_X] > c.jobs[k * J_FIELDS + J_LB])
            resolve_job(&c, k);
    Py_END_ALLOW_THREADS
    if (!(out = PyList_New(0)))
        goto done;
    for (Py_ssize_t k = 0; k < c.n_jobs; k++) {
        if (c.jobs[k * J_FIELDS + J_STATUS] == 0)
            continue;
        const char *why = c.jobs[k * J_FIELDS + J_STATUS] > 0 ? "a guessed start not met"
                          : c.err[k] ? c.err[k] : "corrupt protobuf";
        PyObject *t = Py_BuildValue("(ns)", k, why);
        if (!t || PyList_Append(out, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(t);
    }
done:
    PyMem_Free(c.err);
    PyMem_Free(c.marks);
    RELEASE(&b, &jb);
    return out;
}

/* The wanted stats of a job, in growable columns. */
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

#define MAX_GROUPS 64 /* see group_stats */

/* What a job leaves for Python: its wanted stats, its events without a name id (row, metadata
 * id), why it failed. */
struct job_out {
    stat_cols st;
    int64_t *miss_row, *miss_mid;
    Py_ssize_t n_miss, cap_miss;
    const char *err;
    int nomem;
    int grouped, n_groups; /* group_stats */
    int64_t group_key[MAX_GROUPS], group_count[MAX_GROUPS];
};

typedef struct {
    const uint8_t *buf;
    int64_t base, *start, *end;
    int32_t *gid;
    const int32_t *lut; /* event metadata id -> name id, -1 unknown */
    Py_ssize_t n_lut;
    const uint8_t *wanted; /* stat metadata id -> 1 when the analysis reads that stat */
    Py_ssize_t n_wanted;
    struct job_out *o;
} line_ctx;

/* One XStat body at [p, end) of event (row) ev: recorded when its metadata id is wanted. */
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
    stat_cols *s = &c->o->st;
    if (s->n == s->cap && stat_grow(s) < 0) {
        c->o->nomem = 1;
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
    uint64_t v;
    /* the fields in the order TF writes them (metadata id, offset, duration: one-byte tags)
     * read straight; whatever follows, or comes in another order, by the loop below */
    if (p < end && *p == 0x08) {
        p++;
        if (varint(&p, end, &v) < 0)
            return -1;
        mid = (int64_t)v;
        if (p < end && *p == 0x10) {
            p++;
            if (varint(&p, end, &v) < 0)
                return -1;
            off = (int64_t)v;
            if (p < end && *p == 0x18) {
                p++;
                if (varint(&p, end, &v) < 0)
                    return -1;
                dur = (int64_t)v;
            }
        }
    }
    while (p < end) {
        uint32_t fnum, wt;
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
    int32_t g = mid >= 0 && mid < c->n_lut ? c->lut[mid] : -1;
    if (g < 0) { /* named by Python afterwards: rare (no metadata, or an id past the table) */
        struct job_out *o = c->o;
        if (o->n_miss == o->cap_miss) {
            Py_ssize_t cap = o->cap_miss ? 2 * o->cap_miss : 64;
            int64_t *r = realloc(o->miss_row, cap * sizeof(int64_t));
            if (r)
                o->miss_row = r;
            int64_t *m = r ? realloc(o->miss_mid, cap * sizeof(int64_t)) : NULL;
            if (!m) {
                o->nomem = 1;
                err_msg = "out of memory";
                return -1;
            }
            o->miss_mid = m;
            o->cap_miss = cap;
        }
        o->miss_row[o->n_miss] = ev;
        o->miss_mid[o->n_miss++] = mid;
    }
    c->gid[ev] = g;
    c->start[ev] = t0;
    c->end[ev] = t1;
    return 0;
}

/* A job's stats grouped by (metadata id, value class), each group in the order decoded, the
 * groups by key (id * 4 + class; class 0 an integer, 3 / 4; 1 a string, 5; 2 a ref, 7); the
 * values Python does not read (doubles, bytes, none) dropped: Python then takes each group as
 * one slice. A job with more than MAX_GROUPS groups is left as decoded (grouped = 0). */

static int stat_class(uint8_t kind)
{
    return kind == 3 || kind == 4 ? 0 : kind == 5 ? 1 : kind == 7 ? 2 : -1;
}

/* The place of k among the n sorted keys: its index if present, else where it would go. */
static int key_place(const int64_t *key, int n, int64_t k)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (key[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int group_stats(struct job_out *o)
{
    stat_cols *s = &o->st, g = {0};
    int64_t key[MAX_GROUPS];
    Py_ssize_t count[MAX_GROUPS], at[MAX_GROUPS];
    int n = 0;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        int cls = stat_class(s->kind[i]);
        if (cls < 0)
            continue;
        int64_t k = s->mid[i] * 4 + cls;
        int lo = key_place(key, n, k);
        if (lo < n && key[lo] == k) {
            count[lo]++;
            continue;
        }
        if (n == MAX_GROUPS)
            return 0;
        memmove(key + lo + 1, key + lo, (n - lo) * sizeof(int64_t));
        memmove(count + lo + 1, count + lo, (n - lo) * sizeof(Py_ssize_t));
        key[lo] = k;
        count[lo] = 1;
        n++;
    }
    Py_ssize_t total = 0;
    for (int i = 0; i < n; i++) {
        at[i] = total;
        total += count[i];
    }
    g.cap = total ? total : 1;
    g.n = total;
    if (!(g.ev = malloc(g.cap * 8)) || !(g.mid = malloc(g.cap * 8)) ||
        !(g.val = malloc(g.cap * 8)) || !(g.b = malloc(g.cap * 8)) ||
        !(g.e = malloc(g.cap * 8)) || !(g.kind = malloc(g.cap))) {
        stat_free(&g);
        return -1;
    }
    for (Py_ssize_t i = 0; i < s->n; i++) {
        int cls = stat_class(s->kind[i]);
        if (cls < 0)
            continue;
        int64_t k = s->mid[i] * 4 + cls;
        Py_ssize_t t = at[key_place(key, n, k)]++;
        g.ev[t] = s->ev[i];
        g.mid[t] = s->mid[i];
        g.kind[t] = s->kind[i];
        g.val[t] = s->val[i];
        g.b[t] = s->b[i];
        g.e[t] = s->e[i];
    }
    stat_free(s);
    *s = g;
    o->n_groups = n;
    for (int i = 0; i < n; i++) {
        o->group_key[i] = key[i];
        o->group_count[i] = count[i];
    }
    o->grouped = 1;
    return 0;
}

static void decode_job(jobs_ctx *d, Py_ssize_t k)
{
    int64_t *j = d->jobs + k * J_FIELDS;
    struct job_out *o = &d->out[k];
    line_ctx c = {0};
    c.buf = d->buf;
    c.base = j[J_BASE];
    c.start = d->start;
    c.end = d->end;
    c.gid = d->gid;
    c.lut = d->lut + j[J_LUT];
    c.n_lut = j[J_NLUT];
    c.wanted = d->wanted + j[J_WANT];
    c.n_wanted = j[J_NWANT];
    c.o = o;
    const uint8_t *p = d->buf + j[J_P], *stop = d->buf + j[J_Q];
    Py_ssize_t row = j[J_ROW], last = j[J_ROW] + j[J_N];
    while (p < stop) {
        uint32_t fnum, wt;
        uint64_t v;
        if (field(&p, stop, &fnum, &wt, &v) < 0)
            goto fail;
        if (wt == 2) {
            if (fnum == 4) {
                if (row >= last) {
                    err_msg = "more events than the line's scan counted";
                    goto fail;
                }
                if (decode_event(&c, p, p + v, row++) < 0)
                    goto fail;
            }
            p += v;
        }
    }
    if (row != last) {
        err_msg = "fewer events than the line's scan counted";
        goto fail;
    }
    Py_ssize_t first = j[J_ROW];
    if (d->line_size == 2)
        for (Py_ssize_t i = first; i < last; i++)
            ((int16_t *)d->line)[i] = (int16_t)j[J_LINE];
    else
        for (Py_ssize_t i = first; i < last; i++)
            ((int32_t *)d->line)[i] = (int32_t)j[J_LINE];
    const int64_t *st = d->start, *en = d->end;
    int sorted = 1;
    for (Py_ssize_t i = first + 1; i < last && sorted; i++)
        sorted = st[i] > st[i - 1] || (st[i] == st[i - 1] && en[i] <= en[i - 1]);
    j[J_SORTED] = sorted;
    if (last > first) {
        j[J_S0] = st[first];
        j[J_E0] = en[first];
        j[J_S1] = st[last - 1];
        j[J_E1] = en[last - 1];
    }
    if (o->st.n && group_stats(o) < 0) {
        o->nomem = 1;
        err_msg = "out of memory";
        goto fail;
    }
    j[J_STATUS] = 0;
    return;
fail:
    j[J_STATUS] = -1;
    o->err = err_msg;
}

static void *decode_worker(void *arg)
{
    jobs_ctx *c = arg;
    for (Py_ssize_t k; (k = take(c)) < c->n_jobs;)
        decode_job(c, k);
    return NULL;
}

/* decode_jobs(buffer, jobs, lut, wanted, start, end, name_id, line, threads)
 *   -> ([(job, error), ...], (stat event, stat metadata id, stat kind, stat value, stat begin,
 *        stat end, unnamed rows, their metadata ids, group keys, group sizes, job counts))
 *
 * The scanned jobs' events (see above) into the table's columns: start / end in ps (BASE +
 * offset), name id (lut[LUT + metadata id] while the id is below NLUT, else -1 and the event
 * listed as unnamed), line index (LINE; the column int16 or int32). Stats whose metadata id is
 * wanted (wanted[WANT + id] != 0 while below NWANT) come back as bytes columns, every job's one
 * after another in job order: the event's row, metadata id (int64), kind (uint8: the value's
 * field number, 2 double bits, 3 uint64, 4 int64, 5 str, 6 bytes, 7 ref, 0 none), value (int64)
 * and the byte span of a str / bytes value in the buffer; the unnamed events' rows and metadata
 * ids; the stats' groups (group_stats: keys, sizes); and each job's three counts (int64: its
 * stats, its unnamed events, its groups, -1 where its stats were left as decoded). */
PyObject *native_decode_jobs(PyObject *self, PyObject *args)
{
    Py_buffer b = {0}, jb = {0}, lut = {0}, wanted = {0}, start = {0}, end = {0}, gid = {0},
              line = {0};
    int threads;
    jobs_ctx c = {0};
    PyObject *errors = NULL, *extras = NULL, *result = NULL;
    if (!PyArg_ParseTuple(args, "y*w*y*y*w*w*w*w*i", &b, &jb, &lut, &wanted, &start, &end, &gid,
                          &line, &threads))
        return NULL;
    c.rows = start.len / 8;
    if (jobs_arg(&jb, b.len, &c.n_jobs) < 0 || check(&start, 8, -1, "start") ||
        check(&end, 8, c.rows, "end") || check(&gid, 4, c.rows, "name_id") ||
        check(&lut, 4, -1, "lut"))
        goto done;
    if (line.len != 2 * c.rows && line.len != 4 * c.rows) {
        PyErr_SetString(PyExc_ValueError, "line: expected int16 or int32 rows");
        goto done;
    }
    c.buf = b.buf;
    c.len = b.len;
    c.jobs = jb.buf;
    c.lut = lut.buf;
    c.n_lut = lut.len / 4;
    c.wanted = wanted.buf;
    c.n_wanted = wanted.len;
    c.start = start.buf;
    c.end = end.buf;
    c.gid = gid.buf;
    c.line = line.buf;
    c.line_size = c.rows && line.len == 2 * c.rows ? 2 : 4;
    for (Py_ssize_t k = 0; k < c.n_jobs; k++) { /* every row and table within bounds */
        const int64_t *j = c.jobs + k * J_FIELDS;
        if (j[J_ROW] < 0 || j[J_N] < 0 || j[J_ROW] > c.rows - j[J_N] || j[J_LUT] < 0 ||
            j[J_NLUT] < 0 || j[J_LUT] > c.n_lut - j[J_NLUT] || j[J_WANT] < 0 || j[J_NWANT] < 0 ||
            j[J_WANT] > c.n_wanted - j[J_NWANT] || j[J_P] < j[J_LB] || j[J_P] > j[J_Q] ||
            j[J_Q] > j[J_LE]) {
            PyErr_SetString(PyExc_ValueError, "jobs: rows or tables out of bounds");
            goto done;
        }
    }
    if (!(c.out = PyMem_Calloc(c.n_jobs ? c.n_jobs : 1, sizeof(struct job_out)))) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    run_threads(&c, threads, decode_worker);
    Py_END_ALLOW_THREADS
    if (!(errors = PyList_New(0)))
        goto done;
    Py_ssize_t n_st = 0, n_miss = 0, n_groups = 0;
    for (Py_ssize_t k = 0; k < c.n_jobs; k++) {
        struct job_out *o = &c.out[k];
        if (o->nomem) {
            PyErr_NoMemory();
            goto done;
        }
        if (c.jobs[k * J_FIELDS + J_STATUS] != 0) {
            PyObject *t = Py_BuildValue("(ns)", k, o->err ? o->err : "corrupt protobuf");
            if (!t || PyList_Append(errors, t) < 0) {
                Py_XDECREF(t);
                goto done;
            }
            Py_DECREF(t);
            continue;
        }
        n_st += o->st.n;
        n_miss += o->n_miss;
        n_groups += o->grouped ? o->n_groups : 0;
    }
    /* every job's stats, unnamed events and groups one after another, job by job */
    Py_ssize_t sizes[] = {n_st * 8, n_st * 8, n_st, n_st * 8, n_st * 8, n_st * 8, n_miss * 8,
                          n_miss * 8, n_groups * 8, n_groups * 8, c.n_jobs * 3 * 8};
    enum { N_COLS = sizeof(sizes) / sizeof(sizes[0]) };
    char *col[N_COLS];
    if (!(extras = PyTuple_New(N_COLS)))
        goto done;
    for (int i = 0; i < N_COLS; i++) {
        PyObject *bytes = PyBytes_FromStringAndSize(NULL, sizes[i]);
        if (!bytes)
            goto done;
        PyTuple_SET_ITEM(extras, i, bytes);
        col[i] = PyBytes_AS_STRING(bytes);
    }
    for (Py_ssize_t k = 0; k < c.n_jobs; k++) {
        struct job_out *o = &c.out[k];
        int ok = c.jobs[k * J_FIELDS + J_STATUS] == 0;
        Py_ssize_t m = ok ? o->st.n : 0, q = ok ? o->n_miss : 0;
        Py_ssize_t g = ok && o->grouped ? o->n_groups : 0;
        const void *src[] = {o->st.ev, o->st.mid, o->st.kind, o->st.val, o->st.b, o->st.e,
                             o->miss_row, o->miss_mid, o->group_key, o->group_count};
        Py_ssize_t len[] = {m * 8, m * 8, m, m * 8, m * 8, m * 8, q * 8, q * 8, g * 8, g * 8};
        for (int i = 0; i < N_COLS - 1; i++)
            if (len[i]) {
                memcpy(col[i], src[i], (size_t)len[i]);
                col[i] += len[i];
            }
        int64_t counts[3] = {m, q, ok && o->grouped ? o->n_groups : -1};
        memcpy(col[N_COLS - 1], counts, sizeof(counts));
        col[N_COLS - 1] += sizeof(counts);
    }
    result = Py_BuildValue("(OO)", errors, extras);
done:
    if (c.out)
        for (Py_ssize_t k = 0; k < c.n_jobs; k++) {
            stat_free(&c.out[k].st);
            free(c.out[k].miss_row);
            free(c.out[k].miss_mid);
        }
    PyMem_Free(c.out);
    Py_XDECREF(errors);
    Py_XDECREF(extras);
    RELEASE(&b, &jb, &lut, &wanted, &start, &end, &gid, &line);
    return result;
}

/* ---- stat strings ---------------------------------------------------------------------------- */

/* utf8_strings(buffer, begin, end) -> [str, ...]: the byte spans [begin[i], end[i]) of the
 * buffer (int64 arrays, checked) decoded as UTF-8, errors replaced (str(bytes, "utf-8",
 * "replace")). Equal spans give one object: a stat's values repeat (an op's name on each of
 * its calls), so they are decoded and held once. */
PyObject *native_utf8_strings(PyObject *self, PyObject *args)
{
    Py_buffer b = {0}, bb = {0}, be = {0};
    PyObject *out = NULL;
    struct slot {
        uint64_t hash;
        const uint8_t *p;
        Py_ssize_t n;
        PyObject *s;
    } *table = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*", &b, &bb, &be))
        return NULL;
    Py_ssize_t n = bb.len / 8, size = 1024;
    if (check(&bb, 8, -1, "begin") || check(&be, 8, n, "end"))
        goto done;
    const int64_t *begin = bb.buf, *end = be.buf;
    const uint8_t *buf = b.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (begin[i] < 0 || begin[i] > end[i] || end[i] > b.len) {
            PyErr_SetString(PyExc_ValueError, "a span outside the buffer");
            goto done;
        }
    while (size < 2 * n && size < (1 << 20))
        size *= 2;
    if (!(table = PyMem_Calloc((size_t)size, sizeof(struct slot)))) {
        PyErr_NoMemory();
        goto done;
    }
    if (!(out = PyList_New(n)))
        goto done;
    Py_ssize_t used = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint8_t *p = buf + begin[i];
        Py_ssize_t len = (Py_ssize_t)(end[i] - begin[i]);
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (Py_ssize_t k = 0; k < len; k++)
            h = (h ^ p[k]) * 1099511628211ULL;
        struct slot *sl = NULL;
        for (Py_ssize_t at = (Py_ssize_t)(h & (uint64_t)(size - 1));; at = (at + 1) & (size - 1)) {
            struct slot *t = &table[at];
            if (!t->s) {
                sl = used < size / 2 ? t : NULL; /* a full table: no more kept */
                break;
            }
            if (t->hash == h && t->n == len && !memcmp(t->p, p, (size_t)len)) {
                Py_INCREF(t->s);
                PyList_SET_ITEM(out, i, t->s);
                goto next;
            }
        }
        PyObject *s = PyUnicode_DecodeUTF8((const char *)p, len, "replace");
        if (!s) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, s);
        if (sl) {
            sl->hash = h;
            sl->p = p;
            sl->n = len;
            sl->s = s; /* borrowed: the list holds it */
            used++;
        }
    next:;
    }
done:
    PyMem_Free(table);
    RELEASE(&b, &bb, &be);
    return out;
}

/* ---- reading a file on threads --------------------------------------------------------------- */

typedef struct {
    int fd;
    uint8_t *buf;
    Py_ssize_t len, parts, next;
    Py_ssize_t *got; /* per part: bytes read; errno as -errno */
} read_ctx;

static void *read_worker(void *arg)
{
    read_ctx *r = arg;
    for (Py_ssize_t k; (k = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED)) < r->parts;) {
        Py_ssize_t b = (Py_ssize_t)((int64_t)r->len * k / r->parts);
        Py_ssize_t e = (Py_ssize_t)((int64_t)r->len * (k + 1) / r->parts), at = b;
        while (at < e) {
            ssize_t n = pread(r->fd, r->buf + at, (size_t)(e - at), (off_t)at);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                r->got[k] = -errno;
                break;
            }
            if (n == 0)
                break; /* the file is shorter now */
            at += n;
        }
        if (r->got[k] >= 0)
            r->got[k] = at - b;
    }
    return NULL;
}

/* pread_into(fd, buffer, threads) -> bytes read: the file's bytes from offset 0 into the
 * writable buffer, in parts read at once by `threads` threads (each part's copy and the faults
 * of its pages on a core of its own); the count is the length of the whole prefix read (a file
 * that shrank meanwhile gives its shorter content). OSError as the reads raise it. */
PyObject *native_pread_into(PyObject *self, PyObject *args)
{
    Py_buffer b = {0};
    int fd, threads;
    if (!PyArg_ParseTuple(args, "iw*i", &fd, &b, &threads))
        return NULL;
    read_ctx r = {fd, b.buf, b.len, 0, 0, NULL};
    r.parts = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    if (b.len < ((Py_ssize_t)1 << 22))
        r.parts = 1;
    if (!(r.got = PyMem_Calloc((size_t)r.parts, sizeof(Py_ssize_t)))) {
        PyBuffer_Release(&b);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    pthread_t th[MAX_THREADS];
    int started = 0;
    for (Py_ssize_t t = 1; t < r.parts; t++)
        if (pthread_create(&th[started], NULL, read_worker, &r) == 0)
            started++;
    read_worker(&r);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    Py_END_ALLOW_THREADS
    Py_ssize_t total = 0;
    int err = 0;
    for (Py_ssize_t k = 0; k < r.parts; k++) {
        if (r.got[k] < 0) {
            err = (int)-r.got[k];
            break;
        }
        total += r.got[k];
        if (r.got[k] < (Py_ssize_t)((int64_t)b.len * (k + 1) / r.parts) -
                           (Py_ssize_t)((int64_t)b.len * k / r.parts))
            break; /* a short part: the prefix ends there */
    }
    PyMem_Free(r.got);
    PyBuffer_Release(&b);
    if (err) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyLong_FromSsize_t(total);
}
