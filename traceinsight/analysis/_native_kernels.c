/* The per-event loops of traceinsight's trace analysis, in C, and the module ``_native``.
 *
 * Python-traced captures hold millions of events. Everything that must visit every event in order
 * (nesting them with a stack, inheriting categories down the nesting, sweeping the main thread's
 * timeline, summing frames and windows) is done here in one linear pass each; the rules and all
 * arithmetic over the results stay in Python / numpy (traceinsight.analysis). The protobuf wire
 * decoding of the events themselves is in _native_decode.c.
 */
#include "_native.h"

/* ---- a thread's timeline, by reference -------------------------------------------------------
 *
 * The main thread's timeline (traceinsight.analysis.native.Timeline) is a list of boundaries; the
 * segment j is [bound j, bound j + 1). A boundary is no time but a reference (int32): r >= 0 the
 * start of event r, TL_END <= r < 0 the end of event ~r, r < TL_END a synthetic instant (a cut
 * made after the sweep: an input wait's edge, say), syn_t[r - INT32_MIN]. The time after a
 * boundary is owned by: the event r it starts; the parent of the event ~r it ends (parent[~r],
 * -1: none, a gap); for a synthetic one, syn_owner[r - INT32_MIN]. 4 bytes a boundary instead of
 * 8 for a time and 4 for an owner: the times are the event table's own. */
#define TL_END (-(1 << 30))

typedef struct {
    const int32_t *ref, *par, *syn_own;
    const int64_t *st, *en, *syn_t;
    Py_ssize_t nb, n, nsyn; /* boundaries, events, synthetic instants */
    int bad;                /* a reference out of range was read */
} tline;

/* The buffers of a timeline as a kernel takes them: six arguments in a row (ref, start, end,
 * parent, syn_t, syn_owner; not a tuple: PyArg_ParseTuple sizes its list of buffers to release by
 * the top-level arguments); parent may be empty where the kernel asks no owner. */
typedef struct {
    Py_buffer ref, st, en, par, syn_t, syn_own;
} tline_buf;

#define TL_FORMAT "y*y*y*y*y*y*"
#define TL_ARGS(B) &(B).ref, &(B).st, &(B).en, &(B).par, &(B).syn_t, &(B).syn_own
#define TL_RELEASE(B) RELEASE(&(B).ref, &(B).st, &(B).en, &(B).par, &(B).syn_t, &(B).syn_own)

static int tl_open(tline *T, tline_buf *B)
{
    Py_ssize_t n = B->st.len / 8, nsyn = B->syn_t.len / 8;
    if (check(&B->ref, 4, -1, "timeline refs") || check(&B->st, 8, -1, "start") ||
        check(&B->en, 8, n, "end") || (B->par.len && check(&B->par, 4, n, "parent")) ||
        check(&B->syn_t, 8, -1, "syn_t") || check(&B->syn_own, 4, nsyn, "syn_owner"))
        return -1;
    *T = (tline){B->ref.buf, B->par.len ? B->par.buf : NULL, B->syn_own.buf, B->st.buf,
                 B->en.buf, B->syn_t.buf, B->ref.len / 4, n, nsyn, 0};
    return 0;
}

/* The instant of boundary j (0 where its reference is out of range: T->bad is set). */
static inline int64_t tl_t(tline *T, Py_ssize_t j)
{
    int32_t r = T->ref[j];
    if (r >= 0) {
        if (r < T->n)
            return T->st[r];
    } else if (r >= TL_END) {
        if (~r < T->n)
            return T->en[~r];
    } else if ((int64_t)r - INT32_MIN < T->nsyn)
        return T->syn_t[(int64_t)r - INT32_MIN];
    T->bad = 1;
    return 0;
}

/* The owner of segment j (the time after boundary j): an event or -1. */
static inline int32_t tl_owner(tline *T, Py_ssize_t j)
{
    int32_t r = T->ref[j];
    if (r >= 0) {
        if (r < T->n)
            return r;
    } else if (r >= TL_END) {
        if (~r < T->n && T->par)
            return T->par[~r];
    } else if ((int64_t)r - INT32_MIN < T->nsyn)
        return T->syn_own[(int64_t)r - INT32_MIN];
    T->bad = 1;
    return -1;
}

/* IndexError where a reference was out of range (-1), else 0. */
static int tl_check(tline *T, const char *who)
{
    if (!T->bad)
        return 0;
    PyErr_Format(PyExc_IndexError, "%s: timeline reference out of range", who);
    return -1;
}

static Py_ssize_t first_segment(tline *T, int64_t t);

/* An integer column of any width (1, 2, 4 or 8 bytes, signed): the caller's own dtype, so that a
 * narrow column (thread lines, ids) is read as it is instead of copied to a wider one. */
static inline int64_t int_at(const void *p, int size, Py_ssize_t i)
{
    switch (size) {
    case 1:
        return ((const int8_t *)p)[i];
    case 2:
        return ((const int16_t *)p)[i];
    case 4:
        return ((const int32_t *)p)[i];
    default:
        return ((const int64_t *)p)[i];
    }
}

static int int_size_ok(int size)
{
    if (size == 1 || size == 2 || size == 4 || size == 8)
        return 1;
    PyErr_SetString(PyExc_ValueError, "integer column of 1, 2, 4 or 8 bytes expected");
    return 0;
}


/* The runs of equal values of a line column (the table is sorted by line: a run is a thread's
 * rows): their starts, then n (count + 1 values, malloc'd; NULL when out of memory). Read in one
 * tight loop per width, so the loops over the events read no line at all. */
static Py_ssize_t *line_runs(const void *ln, int size, Py_ssize_t n, Py_ssize_t *count)
{
    Py_ssize_t cap = 64, k = 0;
    Py_ssize_t *runs = malloc(cap * sizeof(Py_ssize_t));
    if (!runs)
        return NULL;
    if (n > 0)
        runs[k++] = 0;
#define RUNS(T)                                                                                \
    {                                                                                          \
        const T *l = ln;                                                                       \
        for (Py_ssize_t i = 1; i < n; i++) {                                                   \
            if (l[i] == l[i - 1])                                                              \
                continue;                                                                      \
            if (k + 1 >= cap) {                                                                \
                Py_ssize_t *more = realloc(runs, 2 * cap * sizeof(Py_ssize_t));                \
                if (!more) {                                                                   \
                    free(runs);                                                                \
                    return NULL;                                                               \
                }                                                                              \
                runs = more;                                                                   \
                cap *= 2;                                                                      \
            }                                                                                  \
            runs[k++] = i;                                                                     \
        }                                                                                      \
    }
    switch (size) {
    case 1:
        RUNS(int8_t) break;
    case 2:
        RUNS(int16_t) break;
    case 4:
        RUNS(int32_t) break;
    default:
        RUNS(int64_t) break;
    }
#undef RUNS
    runs[k] = n;
    *count = k;
    return runs;
}

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

/* nest(start, end, line, line_size, include, is_frame, name, parent, depth, crosser)
 * (parent, depth: int32, depth empty where it is not wanted; line of line_size bytes; is_frame per
 * event, or per name id where name, int32 per event, is given: not empty)
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
    Py_buffer bs = {0}, be = {0}, bl = {0}, binc = {0}, bfr = {0}, bn = {0}, bp = {0}, bd = {0},
              bc = {0};
    stack stk = {0};
    Py_ssize_t *runs = NULL;
    int ok = 0, line_size;
    if (!PyArg_ParseTuple(args, "y*y*y*iy*y*y*w*w*w*", &bs, &be, &bl, &line_size, &binc, &bfr,
                          &bn, &bp, &bd, &bc))
        goto done;
    if (!int_size_ok(line_size))
        goto done;
    Py_ssize_t n = bs.len / 8, by_name = bn.len > 0;
    if (check(&be, 8, n, "end") || check(&bl, line_size, n, "line") ||
        check(&binc, 1, n, "include") || check(&bfr, 1, by_name ? -1 : n, "is_frame") ||
        (by_name && check(&bn, 4, n, "name")) || check(&bp, 4, n, "parent") ||
        (bd.len && check(&bd, 4, n, "depth")) || check(&bc, 1, n, "crosser"))
        goto done;
    if (n < 0 || n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "nest: more than 2^31 events");
        goto done;
    }
    const int64_t *st = bs.buf, *en = be.buf;
    const void *ln = bl.buf;
    const uint8_t *inc = binc.buf, *is_frame = bfr.buf;
    const int32_t *nm = bn.buf;
    if (by_name)
        for (Py_ssize_t i = 0; i < n; i++)
            if (nm[i] < 0 || nm[i] >= bfr.len) {
                PyErr_SetString(PyExc_IndexError, "nest: name id out of range");
                goto done;
            }
#define FRAME(i) (by_name ? is_frame[nm[i]] : is_frame[i])
    int32_t *par = bp.buf, *dep = bd.len ? bd.buf : NULL; /* depth: not asked where empty */
    uint8_t *cr = bc.buf;
    int nomem = 0;
    Py_ssize_t n_runs = 0;
    runs = line_runs(ln, line_size, n, &n_runs);
    if (!runs) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    /* pass 1: crossers, one thread line (run of rows) at a time */
    memset(cr, 0, n);
    for (Py_ssize_t r = 0; r < n_runs && !nomem; r++) {
        stk.n = 0;
        for (Py_ssize_t i = runs[r]; i < runs[r + 1] && !nomem; i++) {
            par[i] = -1;
            if (dep)
                dep[i] = 0;
            if (!inc[i])
                continue;
            while (stk.n && en[stk.v[stk.n - 1]] <= st[i])
                stk.n--;
            int crosses = 0;
            while (stk.n) {
                int64_t top = stk.v[stk.n - 1];
                if (en[i] <= en[top])
                    break; /* nested */
                if (FRAME(top) && !FRAME(i)) {
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
    }
    /* pass 2: parents and depths of the rest */
    for (Py_ssize_t r = 0; r < n_runs && !nomem; r++) {
        stk.n = 0;
        for (Py_ssize_t i = runs[r]; i < runs[r + 1] && !nomem; i++) {
            if (!inc[i] || cr[i])
                continue;
            while (stk.n && en[stk.v[stk.n - 1]] <= st[i])
                stk.n--;
            if (stk.n && en[i] > en[stk.v[stk.n - 1]]) {
                cr[i] = 1; /* cannot happen after pass 1; kept out if it does */
                continue;
            }
            par[i] = stk.n ? (int32_t)stk.v[stk.n - 1] : -1;
            if (dep)
                dep[i] = (int32_t)stk.n;
            if (push(&stk, i) < 0)
                nomem = 1;
        }
    }
    Py_END_ALLOW_THREADS
    if (nomem) {
        PyErr_NoMemory();
        goto done;
    }
    ok = 1;
done:
    free(stk.v);
    free(runs);
#undef FRAME
    RELEASE(&bs, &be, &bl, &binc, &bfr, &bn, &bp, &bd, &bc);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* inherit(parent, own, own_strength, pass_strength, cat, n_cat, pyframe, python, other[, passed])
 *
 * Each event's effective category along the nesting, parents before children (table order). An
 * event keeps its own category (own >= 0) when it holds it at least as strongly as its parent
 * hands one down; otherwise it takes the inherited one; with neither, python for a python-tracer
 * frame (own == pyframe), other for the rest. parent int32; own, the strengths and cat int8.
 * passed (int8, writable; one is allocated where it is not given) receives how strongly each
 * event hands its category down. Each event's own code and strengths are read before its
 * category and strength passed are written, and no earlier event's after: cat may be own's
 * buffer, and passed the strengths' (the caller's columns consumed, no new ones). */
static PyObject *inherit(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bo = {0}, bos = {0}, bps = {0}, bc = {0}, bpa = {0};
    long long n_cat, pyframe, python, other;
    int ok = 0;
    int8_t *passed = NULL, *scratch = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*LLLL|w*", &bp, &bo, &bos, &bps, &bc, &n_cat, &pyframe,
                          &python, &other, &bpa))
        goto done;
    Py_ssize_t n = bp.len / 4;
    if (check(&bp, 4, n, "parent") || check(&bo, 1, n, "own") || check(&bos, 1, n, "own_strength") ||
        check(&bps, 1, n, "pass_strength") || check(&bc, 1, n, "cat") ||
        (bpa.obj && check(&bpa, 1, n, "passed")))
        goto done;
    if (n_cat < 0 || n_cat > INT8_MAX || python < INT8_MIN || python > INT8_MAX ||
        other < INT8_MIN || other > INT8_MAX) {
        PyErr_SetString(PyExc_ValueError, "inherit: category codes out of int8 range");
        goto done;
    }
    const int32_t *par = bp.buf;
    const int8_t *own = bo.buf, *os = bos.buf, *ps = bps.buf;
    int8_t *cat = bc.buf;
    passed = bpa.obj ? bpa.buf : (scratch = malloc(n ? n : 1));
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
    free(scratch);
    RELEASE(&bp, &bo, &bos, &bps, &bc, &bpa);
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

/* has_child(parent, name, child_name, start, end, out): out[p] = 1 (uint8 per event) for every
 * event p that is the parent (int32) of an event whose name child_name marks (per name id; name
 * int32 per event) and, where start and end are given (not empty), of positive length. */
static PyObject *has_child(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bn = {0}, bcn = {0}, bs = {0}, be = {0}, bo = {0};
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*", &bp, &bn, &bcn, &bs, &be, &bo))
        goto done;
    Py_ssize_t n = bp.len / 4, n_names = bcn.len, timed = bs.len > 0;
    if (check(&bp, 4, n, "parent") || check(&bn, 4, n, "name") || check(&bo, 1, n, "out") ||
        (timed && (check(&bs, 8, n, "start") || check(&be, 8, n, "end"))))
        goto done;
    const int32_t *par = bp.buf, *nm = bn.buf;
    const int64_t *st = bs.buf, *en = be.buf;
    const uint8_t *child_name = bcn.buf;
    uint8_t *out = bo.buf;
    if (n > 0)
        memset(out, 0, (size_t)n);
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t p = par[i];
        if (p < 0 || p >= n || nm[i] < 0 || nm[i] >= n_names || !child_name[nm[i]] ||
            (timed && en[i] <= st[i]))
            continue;
        out[p] = 1;
    }
    ok = 1;
done:
    RELEASE(&bp, &bn, &bcn, &bs, &be, &bo);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* lookup(lut, index, index_size, out): out[i] = lut[index[i]] (bytes; an index of one byte is read
 * unsigned, a wider one signed: int16, int32, int64). numpy's lut[index] with an index that is
 * not intp casts the index first, a pass and a copy more. IndexError outside the table. */
static PyObject *lookup(PyObject *self, PyObject *args)
{
    Py_buffer bl = {0}, bi = {0}, bo = {0};
    int size, ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*iw*", &bl, &bi, &size, &bo))
        goto done;
    if (!int_size_ok(size))
        goto done;
    Py_ssize_t n = bo.len, n_lut = bl.len, bad = -1;
    if (check(&bi, size, n, "index"))
        goto done;
    const uint8_t *lut = bl.buf;
    uint8_t *out = bo.buf;
#define LOOKUP(T)                                                                              \
    {                                                                                          \
        const T *ix = bi.buf;                                                                  \
        for (Py_ssize_t i = 0; i < n; i++) {                                                   \
            int64_t v = ix[i];                                                                 \
            if (v < 0 || v >= n_lut) {                                                         \
                bad = i;                                                                       \
                break;                                                                         \
            }                                                                                  \
            out[i] = lut[v];                                                                   \
        }                                                                                      \
    }
    Py_BEGIN_ALLOW_THREADS
    switch (size) {
    case 1:
        LOOKUP(uint8_t) break;
    case 2:
        LOOKUP(int16_t) break;
    case 4:
        LOOKUP(int32_t) break;
    default:
        LOOKUP(int64_t) break;
    }
    Py_END_ALLOW_THREADS
#undef LOOKUP
    if (bad >= 0) {
        PyErr_Format(PyExc_IndexError, "lookup: index %zd out of the table's %zd entries", bad,
                     n_lut);
        goto done;
    }
    ok = 1;
done:
    RELEASE(&bl, &bi, &bo);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* spans_in(start, end, outside, lo, hi, out) -> k: the rows i of [lo, hi) of positive length
 * (end > start) and not outside, in order, written to out (int32, room for hi - lo). */
static PyObject *spans_in(PyObject *self, PyObject *args)
{
    Py_buffer bs = {0}, be = {0}, bout = {0}, bo = {0};
    Py_ssize_t lo, hi, k = 0;
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*nnw*", &bs, &be, &bout, &lo, &hi, &bo))
        goto done;
    Py_ssize_t n = bs.len / 8;
    if (check(&be, 8, n, "end") || check(&bout, 1, n, "outside"))
        goto done;
    if (lo < 0 || hi > n || lo > hi || hi > INT32_MAX || bo.len / 4 < hi - lo) {
        PyErr_SetString(PyExc_IndexError, "spans_in: rows out of range");
        goto done;
    }
    const int64_t *st = bs.buf, *en = be.buf;
    const uint8_t *out = bout.buf;
    int32_t *rows = bo.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = lo; i < hi; i++) {
        rows[k] = (int32_t)i;
        k += en[i] > st[i] && !out[i];
    }
    Py_END_ALLOW_THREADS
    ok = 1;
done:
    RELEASE(&bs, &be, &bout, &bo);
    if (!ok)
        return NULL;
    return PyLong_FromSsize_t(k);
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

/* nearest_marked_at(parent, mask, events, out, budget[, name]) -> bool: nearest_marked's answer for
 * the given events only (int32 each), found by walking up their parents: no table-long column.
 * False, with out unfinished, once the walks have taken more than budget steps in all (a caller
 * asking for many events far below their marked ancestors is better served by nearest_marked).
 * With name (int32, each event's name id): mask is per name id, event e marked where
 * mask[name[e]] (a name id outside mask: not marked), so no per-event mask is made. */
static PyObject *nearest_marked_at(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bm = {0}, bev = {0}, bo = {0}, bn = {0};
    long long budget;
    if (!PyArg_ParseTuple(args, "y*y*y*w*L|y*", &bp, &bm, &bev, &bo, &budget, &bn))
        return NULL;
    Py_ssize_t n = bp.len / 4, q = bev.len / 4, n_mask = bm.len;
    int by_name = bn.obj != NULL;
    if (check(&bm, 1, by_name ? -1 : n, "mask") || check(&bev, 4, q, "events") ||
        check(&bo, 4, q, "out") || (by_name && check(&bn, 4, n, "name"))) {
        RELEASE(&bp, &bm, &bev, &bo, &bn);
        return NULL;
    }
    const int32_t *par = bp.buf, *ev = bev.buf, *nm = bn.buf;
    const uint8_t *m = bm.buf;
    int32_t *out = bo.buf;
    long long steps = 0;
    int done = 1;
#define MARKED(e) (by_name ? (nm[e] >= 0 && nm[e] < n_mask && m[nm[e]]) : m[e])
    for (Py_ssize_t i = 0; i < q && done; i++) {
        int32_t e = ev[i];
        /* as nearest_marked: a parent at or after its child is none */
        while (e >= 0 && e < n && !MARKED(e)) {
            if (++steps > budget) {
                done = 0;
                break;
            }
            e = par[e] >= 0 && par[e] < e ? par[e] : -1;
        }
        out[i] = e >= 0 && e < n ? e : -1;
    }
#undef MARKED
    RELEASE(&bp, &bm, &bev, &bo, &bn);
    return PyBool_FromLong(done);
}

/* timeline(start, end, events, cat, python, ref, seg_cat[, outside, lo, hi]) -> k
 *
 * The timeline of properly nested events (indices in table order): every instant where the
 * innermost open event changes, as a reference (see tline: the start of event e is e, its end ~e),
 * and the category of the time after it (int8: cat of the event that owns it, python where no
 * event is open). At one instant only the last change is kept, so the instants of ref[:k] are
 * strictly increasing and segment j is [ref[j], ref[j+1]) owned by the event ref[j] starts or
 * by the parent of the one it ends: the innermost event open when that one opened. events is
 * int32, cat int8. ref and seg_cat need room for 2 * len(events) (an IndexError past their room);
 * events past 2^30 are refused (OverflowError: an end's reference is ~e). With outside (uint8 per
 * event), the events are instead the rows [lo, hi) of positive length and not outside (events
 * empty): no list of them is made. */
static PyObject *timeline(PyObject *self, PyObject *args)
{
    Py_buffer bs = {0}, be = {0}, bev = {0}, bcat = {0}, bref = {0}, bsc = {0}, bout = {0};
    long long python;
    Py_ssize_t lo = 0, hi = 0;
    stack stk = {0};
    Py_ssize_t k = 0;
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*Lw*w*|y*nn", &bs, &be, &bev, &bcat, &python, &bref,
                          &bsc, &bout, &lo, &hi))
        goto done;
    Py_ssize_t n = bs.len / 8, m = bev.len / 4, cap = bref.len / 4, by_rows = bout.obj != NULL;
    if (check(&be, 8, n, "end") || check(&bev, 4, m, "events") || check(&bcat, 1, n, "cat") ||
        check(&bref, 4, -1, "ref") || check(&bsc, 1, cap, "seg_cat") ||
        (by_rows && check(&bout, 1, n, "outside")) || (!by_rows && cap < 2 * m))
        goto done;
    if (by_rows && (m || lo < 0 || hi > n || lo > hi)) {
        PyErr_SetString(PyExc_IndexError, "timeline: rows out of range");
        goto done;
    }
    if (n > -(Py_ssize_t)TL_END) {
        PyErr_SetString(PyExc_OverflowError, "timeline: more than 2^30 events");
        goto done;
    }
    const int64_t *st = bs.buf, *en = be.buf;
    const int32_t *ev = bev.buf;
    const int8_t *cat = bcat.buf;
    const uint8_t *out = bout.buf;
    int32_t *ref = bref.buf;
    int8_t *sc = bsc.buf;
    int64_t last = 0; /* the instant of ref[k - 1] */
#define EMIT(time, r, who)                                                                     \
    do {                                                                                       \
        int64_t _w = (who);                                                                    \
        if (!(k && last == (time))) {                                                          \
            if (k == cap) {                                                                    \
                PyErr_SetString(PyExc_IndexError, "timeline: more segments than room");        \
                goto done;                                                                     \
            }                                                                                  \
            last = (time);                                                                     \
            k++;                                                                               \
        }                                                                                      \
        ref[k - 1] = (int32_t)(r);                                                             \
        sc[k - 1] = (int8_t)(_w >= 0 ? cat[_w] : python);                                      \
    } while (0)
    /* the events: the list given, or the rows [lo, hi) of positive length not outside */
    for (Py_ssize_t j = by_rows ? lo : 0; j < (by_rows ? hi : m); j++) {
        int64_t e = j;
        if (by_rows) {
            if (en[j] <= st[j] || out[j])
                continue;
        } else {
            e = ev[j];
            if (e < 0 || e >= n) {
                PyErr_SetString(PyExc_IndexError, "timeline: event index out of range");
                goto done;
            }
        }
        while (stk.n && en[stk.v[stk.n - 1]] <= st[e]) {
            int64_t top = stk.v[--stk.n];
            EMIT(en[top], ~top, stk.n ? stk.v[stk.n - 1] : -1);
        }
        EMIT(st[e], e, e);
        if (push(&stk, e) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    while (stk.n) {
        int64_t top = stk.v[--stk.n];
        EMIT(en[top], ~top, stk.n ? stk.v[stk.n - 1] : -1);
    }
#undef EMIT
    ok = 1;
done:
    free(stk.v);
    RELEASE(&bs, &be, &bev, &bcat, &bref, &bsc, &bout);
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
    int32_t *count = NULL;
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*nny*y*w*w*w*w*", &bp, &bn, &bs, &bnest, &bfn, &lo, &hi,
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
    const int64_t *st = bs.buf, *t0 = b0.buf, *t1 = b1.buf;
    /* own time per event, turned in place into each event's subtree sum (rows [lo, hi)): the
     * caller's column is consumed, no copy of it is made */
    int64_t *own = bown.buf, *sub = own;
    const int32_t *nm = bn.buf;
    const uint8_t *nested = bnest.buf, *is_frame = bfn.buf;
    int64_t *calls = bcalls.buf, *selft = bself.buf, *incl = bincl.buf;
    for (Py_ssize_t i = lo; i < hi; i++)
        if (nm[i] < 0 || nm[i] >= n_names) {
            PyErr_SetString(PyExc_IndexError, "frame_sums: name id out of range");
            goto done;
        }
    count = calloc(n_names ? n_names : 1, sizeof(int32_t));
    if (!count) {
        PyErr_NoMemory();
        goto done;
    }
    /* counted: a frame of the nesting that starts in a window. Calls and own time first, while
     * own still holds each event's own time */
    Py_ssize_t k = 0; /* the window a start may fall in */
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (!nested[i])
            continue;
        while (k < w && t1[k] <= st[i])
            k++;
        if (is_frame[nm[i]] && k < w && t0[k] <= st[i]) {
            calls[nm[i]]++;
            selft[nm[i]] += own[i];
        }
    }
    for (Py_ssize_t i = hi - 1; i >= lo; i--)
        if (par[i] >= lo && par[i] < i)
            sub[par[i]] += sub[i];
    k = 0;
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
            if (count[f] == 0)
                incl[f] += sub[i];
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
    free(count);
    RELEASE(&bp, &bn, &bs, &bnest, &bfn, &b0, &b1, &bown, &bcalls, &bself, &bincl);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- the python-tracer frames of the main thread, in one sweep ------------------------------ */

typedef struct {
    int32_t ev, issuer;      /* the event; the nearest issuer at or above it (-1: none) */
    uint8_t counted, outer;  /* a frame counted in a window; the outermost of its name */
    int64_t self, sub;       /* python time it owns; of its subtree, its own added at its pop */
} open_event;

typedef struct {
    open_event *v;
    Py_ssize_t n, cap;
    /* per name, the counted frames of that name open now */
    int32_t *count;
    const int32_t *nm;
    int64_t *selft, *incl;
} open_stack;

static int open_push(open_stack *s, open_event e)
{
    if (s->n == s->cap) {
        Py_ssize_t cap = s->cap ? 2 * s->cap : 256;
        open_event *v = realloc(s->v, cap * sizeof(open_event));
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = e;
    return 0;
}

/* the top event ends: its sums are final, its subtree's time goes to its parent's */
static void open_pop(open_stack *s)
{
    open_event *e = &s->v[--s->n];
    int64_t total = e->self + e->sub;
    if (e->counted) {
        int32_t f = s->nm[e->ev];
        s->selft[f] += e->self;
        if (e->outer)
            s->incl[f] += total;
        s->count[f]--;
    }
    if (s->n)
        s->v[s->n - 1].sub += total;
}

/* The timeline's side of frame_sweep: its segments, the windows, and where the sweep is in them. */
typedef struct {
    tline *T;
    const int32_t *nm;
    const int8_t *cat;
    const int64_t *t0, *t1, *st, *en;
    const uint8_t *out;
    uint8_t kind[256]; /* per category (its byte): 1 python, 2 cat_a, 3 cat_b, 0 none */
    Py_ssize_t lo, hi, nseg, w, j, wseg; /* j: the next segment; wseg: its first window */
    int64_t *time_a, *time_b;
} timeline_sweep;

/* Segment j's owner o is the innermost open event: the events above it on the stack ended by
 * the segment's start (every one, for a gap, o = -1). 0 where that is not so. */
static int settle(timeline_sweep *S, open_stack *stk, int32_t o, int64_t at)
{
    if (o >= 0 && !(o >= S->lo && o < S->hi && !S->out[o] && S->en[o] > S->st[o]))
        return 0; /* owned by an event out of the nesting */
    while (stk->n && stk->v[stk->n - 1].ev != o) {
        if (S->en[stk->v[stk->n - 1].ev] > at)
            return 0;
        open_pop(stk);
    }
    return o < 0 ? stk->n == 0 : stk->n && stk->v[stk->n - 1].ev == o;
}

/* The segments that start before x: each one's time inside the windows goes to its owner (python:
 * its own time) or to its owner's issuer (cat_a, cat_b). 0 where the timeline is not the
 * nesting's. */
static int consume(timeline_sweep *S, open_stack *stk, int64_t x)
{
    tline *T = S->T;
    const int32_t *nm = S->nm;
    const int8_t *cat = S->cat;
    const int64_t *t0 = S->t0, *t1 = S->t1;
    const uint8_t *kind = S->kind;
    Py_ssize_t j = S->j, wseg = S->wseg, nseg = S->nseg, w = S->w;
    int ok = 1;
    /* the instant of boundary j, carried from one segment to the next */
    int64_t bj = j < nseg ? tl_t(T, j) : 0;
    for (; j < nseg && bj < x; j++) {
        int32_t o = T->ref[j];  /* the owner: the event the boundary starts, most often */
        if (o < 0)
            o = tl_owner(T, j);
        int64_t s0 = bj, s1 = tl_t(T, j + 1);
        bj = s1;
        /* most segments: owned by the top of the stack */
        if (o >= 0 ? !stk->n || stk->v[stk->n - 1].ev != o : stk->n != 0) {
            if (!settle(S, stk, o, s0)) {
                ok = 0;
                break;
            }
        }
        uint8_t k = kind[(uint8_t)cat[j]];
        if (o < 0 || !k)
            continue;
        int64_t d = 0;
        while (wseg < w && t1[wseg] <= s0)
            wseg++;
        for (Py_ssize_t q = wseg; q < w && t0[q] < s1; q++) {
            int64_t a0 = s0 > t0[q] ? s0 : t0[q], a1 = s1 < t1[q] ? s1 : t1[q];
            if (a1 > a0)
                d += a1 - a0;
        }
        open_event *top = &stk->v[stk->n - 1];
        if (k == 1)
            top->self += d;
        else if (top->issuer >= 0)
            (k == 2 ? S->time_a : S->time_b)[nm[top->issuer]] += d;
    }
    S->j = j;
    S->wseg = wseg;
    return ok;
}

/* frame_sweep(parent, name, start, end, outside, lo, hi, <the timeline's six buffers>, seg_cat,
 *             t0, t1, is_frame_name, python, calls, self, inclusive,
 *             issuer_name, caller_name, op_kind, cat_a, cat_b, time_a, time_b, ops, entry) -> bool
 *
 * One pass over one thread's events (rows [lo, hi), sorted by start; those kept out of the nesting,
 * ``outside``, skipped; the others of positive length are the nesting) together with that thread's
 * timeline (see tline: segment j is [bound j, bound j + 1), of category seg_cat[j]), inside the
 * sorted, disjoint windows [t0, t1). The open events are kept on a stack, each summing the time it
 * owns and, once it ends, its subtree's. It gives frame_sums() over owned_time()'s python time (per
 * name: calls, self and outermost inclusive time of the frames that start in a window), with no
 * per-event column, and at once, per issuer name (a name that issuer_name marks and that has calls;
 * each event's issuer is the nearest issuer event at or above it): the time of categories cat_a and
 * cat_b owned by events under it (time_a, time_b); the op events in the windows (op_kind per name,
 * -1: no op) whose parent's issuer it is, by kind (ops[3 * name + 0]: all, + 1: kind 1, + 2: kind
 * 2); and entry[name] = 1 for an issuer event in a window whose issuer above is none or one whose
 * name caller_name marks. Per name: all outputs as long as the names (ops three times).
 *
 * False where the timeline is not the nesting's (a segment's owner is not the innermost open
 * event, an event ends after the time that must have closed it): the caller then computes the
 * same sums from the per-event columns. */
static PyObject *frame_sweep(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bn = {0}, bs = {0}, be = {0}, bout = {0}, bc = {0}, b0 = {0}, b1 = {0},
              bfn = {0}, bcalls = {0}, bself = {0}, bincl = {0}, bir = {0}, bcr = {0}, bok = {0},
              bta = {0}, btb = {0}, bops = {0}, bentry = {0};
    tline_buf B = {0};
    tline T;
    Py_ssize_t lo, hi;
    int python, cat_a, cat_b, ok = 0, consistent = 1;
    open_stack stk = {0};
    uint8_t *isr = NULL; /* the issuers' names */
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*nn" TL_FORMAT "y*y*y*y*iw*w*w*y*y*y*iiw*w*w*w*", &bp,
                          &bn, &bs, &be, &bout, &lo, &hi, TL_ARGS(B), &bc, &b0, &b1, &bfn, &python,
                          &bcalls, &bself, &bincl, &bir, &bcr, &bok, &cat_a, &cat_b, &bta, &btb,
                          &bops, &bentry))
        goto done;
    if (tl_open(&T, &B))
        goto done;
    Py_ssize_t n = bp.len / 4, n_names = bfn.len, w = b0.len / 8, nb = T.nb,
               nseg = nb > 0 ? nb - 1 : 0;
    if (check(&bn, 4, n, "name") || check(&bs, 8, n, "start") || check(&be, 8, n, "end") ||
        check(&bout, 1, n, "outside") || check(&B.par, 4, n, "timeline parent") ||
        check(&bc, 1, nseg, "seg_cat") || check(&b1, 8, w, "t1") ||
        check(&bcalls, 8, n_names, "calls") || check(&bself, 8, n_names, "self") ||
        check(&bincl, 8, n_names, "inclusive") || check(&bir, 1, n_names, "issuer_name") ||
        check(&bcr, 1, n_names, "caller_name") || check(&bok, 1, n_names, "op_kind") ||
        check(&bta, 8, n_names, "time_a") || check(&btb, 8, n_names, "time_b") ||
        check(&bops, 8, 3 * n_names, "ops") || check(&bentry, 1, n_names, "entry"))
        goto done;
    if (lo < 0 || hi > n || lo > hi) {
        PyErr_SetString(PyExc_IndexError, "frame_sweep: rows out of range");
        goto done;
    }
    const int32_t *par = bp.buf, *nm = bn.buf;
    const int64_t *st = bs.buf, *en = be.buf, *t0 = b0.buf, *t1 = b1.buf;
    const uint8_t *out = bout.buf, *is_frame = bfn.buf, *caller = bcr.buf, *issuer_name = bir.buf;
    const int8_t *cat = bc.buf, *opk = bok.buf;
    int64_t *calls = bcalls.buf, *time_a = bta.buf, *time_b = btb.buf, *ops = bops.buf;
    uint8_t *entry = bentry.buf;
    if (python == cat_a || python == cat_b || cat_a == cat_b) {
        PyErr_SetString(PyExc_ValueError, "frame_sweep: three different categories expected");
        goto done;
    }
    stk.count = calloc(n_names ? n_names : 1, sizeof(int32_t));
    isr = calloc(n_names ? n_names : 1, 1);
    if (!stk.count || !isr) {
        PyErr_NoMemory();
        goto done;
    }
    /* the calls first: an issuer is a marked name with calls in the windows */
    for (Py_ssize_t i = lo, k = 0; i < hi; i++) {
        if (nm[i] < 0 || nm[i] >= n_names) {
            PyErr_SetString(PyExc_IndexError, "frame_sweep: name id out of range");
            goto done;
        }
        if (out[i] || en[i] <= st[i] || !is_frame[nm[i]])
            continue;
        while (k < w && t1[k] <= st[i])
            k++;
        if (k < w && t0[k] <= st[i])
            calls[nm[i]]++;
    }
    for (Py_ssize_t f = 0; f < n_names; f++)
        isr[f] = issuer_name[f] && calls[f] > 0;
    stk.nm = nm;
    stk.selft = bself.buf;
    stk.incl = bincl.buf;
    timeline_sweep S = {&T, nm, cat, t0, t1, st, en, out, {0}, lo, hi, nseg, w, 0, 0,
                        time_a, time_b};
    S.kind[(uint8_t)python] = 1;
    S.kind[(uint8_t)cat_a] = 2;
    S.kind[(uint8_t)cat_b] = 3;
    Py_ssize_t wev = 0; /* the windows' place of the events' starts */
    for (Py_ssize_t i = lo; i < hi && consistent; i++) {
        if (out[i])
            continue;
        int32_t f = nm[i];
        while (wev < w && t1[wev] <= st[i])
            wev++;
        int in_win = wev < w && t0[wev] <= st[i];
        if (en[i] <= st[i]) { /* of zero length: no parent, owns nothing */
            if (in_win && isr[f])
                entry[f] = 1;
            continue;
        }
        if (!(consistent = consume(&S, &stk, st[i])))
            break;
        int32_t p = par[i];
        while (stk.n && stk.v[stk.n - 1].ev != p) {
            if (en[stk.v[stk.n - 1].ev] > st[i]) {
                consistent = 0;
                break;
            }
            open_pop(&stk);
        }
        if (!consistent || (p >= 0 && !stk.n))
            break;
        int32_t up = stk.n ? stk.v[stk.n - 1].issuer : -1;
        open_event e = {(int32_t)i, isr[f] ? (int32_t)i : up, 0, 0, 0, 0};
        if (in_win) {
            if (is_frame[f]) {
                e.counted = 1;
                e.outer = stk.count[f]++ == 0;
            }
            if (isr[f] && (up < 0 || caller[nm[up]]))
                entry[f] = 1;
            if (opk[f] >= 0 && up >= 0) {
                int64_t *r = ops + 3 * (int64_t)nm[up];
                r[0]++;
                if (opk[f] == 1 || opk[f] == 2)
                    r[opk[f]]++;
            }
        }
        if (open_push(&stk, e) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (consistent)
        consistent = consume(&S, &stk, INT64_MAX);
    while (stk.n)
        open_pop(&stk);
    ok = !tl_check(&T, "frame_sweep");
done:
    free(stk.v);
    free(stk.count);
    free(isr);
    TL_RELEASE(B);
    RELEASE(&bp, &bn, &bs, &be, &bout, &bc, &b0, &b1, &bfn, &bcalls, &bself, &bincl, &bir, &bcr,
            &bok, &bta, &btb, &bops, &bentry);
    if (!ok)
        return NULL;
    return PyBool_FromLong(consistent);
}

/* window_sums(ref, start, end, parent, syn_t, syn_owner, seg_cat, t0, t1, out):
 * out[w * n_cat + c] = time of the segments of category c (the timeline's six buffers, see tline:
 * segment j is [bound j, bound j + 1), seg_cat int8) inside window [t0[w], t1[w]). Each window
 * finds its first segment by binary search and walks its segments: linear in the segments the
 * windows cover. */
static PyObject *window_sums(PyObject *self, PyObject *args)
{
    Py_buffer bc = {0}, b0 = {0}, b1 = {0}, bo = {0};
    tline_buf B = {0};
    tline T;
    int ok = 0;
    if (!PyArg_ParseTuple(args, TL_FORMAT "y*y*y*w*", TL_ARGS(B), &bc, &b0, &b1, &bo))
        goto done;
    if (tl_open(&T, &B))
        goto done;
    Py_ssize_t nb = T.nb, w = b0.len / 8;
    Py_ssize_t nseg = nb > 0 ? nb - 1 : 0;
    if (check(&bc, 1, nseg, "seg_cat") || check(&b1, 8, w, "t1") || (w && bo.len % (8 * w)))
        goto done;
    Py_ssize_t n_cat = w ? bo.len / 8 / w : 0;
    const int64_t *t0 = b0.buf, *t1 = b1.buf;
    const int8_t *cat = bc.buf;
    int64_t *out = bo.buf;
    memset(out, 0, bo.len);
    for (Py_ssize_t k = 0; k < w && !T.bad; k++) {
        Py_ssize_t j = first_segment(&T, t0[k]);
        int64_t bj = j < nseg ? tl_t(&T, j) : 0;
        for (; j < nseg && bj < t1[k]; j++) {
            int64_t next = tl_t(&T, j + 1);
            int64_t a = bj > t0[k] ? bj : t0[k];
            int64_t z = next < t1[k] ? next : t1[k];
            if (z > a && cat[j] >= 0 && cat[j] < n_cat)
                out[k * n_cat + cat[j]] += z - a;
            bj = next;
        }
    }
    ok = !tl_check(&T, "window_sums");
done:
    TL_RELEASE(B);
    RELEASE(&bc, &b0, &b1, &bo);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* first segment ending after t (segment j is [bound j, bound j + 1)) */
static Py_ssize_t first_segment(tline *T, int64_t t)
{
    Py_ssize_t lo = 0, hi = T->nb > 0 ? T->nb - 1 : 0;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (tl_t(T, mid + 1) > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* owned_time(ref, start, end, parent, syn_t, syn_owner, seg_cat, t0, t1, category, out[, group]):
 * out[e] += the time of the segments of one category owned by event e (the timeline's six
 * buffers, see tline; -1 for none) inside the windows
 * [t0, t1), clipped to them. With group (int32 per event, -1: none), summed by the owner's group
 * instead, out[group[e]] (out as long as the groups), so no per-event column is made. */
static PyObject *owned_time(PyObject *self, PyObject *args)
{
    Py_buffer bc = {0}, b0 = {0}, b1 = {0}, bo = {0}, bg = {0};
    tline_buf B = {0};
    tline T;
    int category, ok = 0;
    if (!PyArg_ParseTuple(args, TL_FORMAT "y*y*y*iw*|y*", TL_ARGS(B), &bc, &b0, &b1, &category,
                          &bo, &bg))
        goto done;
    if (tl_open(&T, &B))
        goto done;
    Py_ssize_t nb = T.nb, w = b0.len / 8, n = bo.len / 8;
    Py_ssize_t nseg = nb > 0 ? nb - 1 : 0;
    if (check(&B.par, 4, T.n, "timeline parent") || check(&bc, 1, nseg, "seg_cat") ||
        check(&b1, 8, w, "t1") || check(&bo, 8, n, "out") || (bg.obj && check(&bg, 4, -1, "group")))
        goto done;
    const int64_t *t0 = b0.buf, *t1 = b1.buf;
    const int32_t *group = bg.obj ? bg.buf : NULL;
    Py_ssize_t n_owners = group ? bg.len / 4 : n;
    const int8_t *cat = bc.buf;
    int64_t *out = bo.buf;
    for (Py_ssize_t k = 0; k < w && !T.bad; k++) {
        Py_ssize_t j = first_segment(&T, t0[k]);
        int64_t bj = j < nseg ? tl_t(&T, j) : 0;
        for (; j < nseg && bj < t1[k]; j++) {
            int64_t a = bj > t0[k] ? bj : t0[k], next = tl_t(&T, j + 1);
            bj = next;
            if (cat[j] != category)
                continue;
            int32_t o = tl_owner(&T, j);
            if (o < 0 || o >= n_owners)
                continue;
            int64_t to = group ? group[o] : o;
            if (to < 0 || to >= n)
                continue;
            int64_t z = next < t1[k] ? next : t1[k];
            if (z > a)
                out[to] += z - a;
        }
    }
    ok = !tl_check(&T, "owned_time");
done:
    TL_RELEASE(B);
    RELEASE(&bc, &b0, &b1, &bo, &bg);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* First index in [lo, hi) whose value is above x (hi when none): b sorted. */
static Py_ssize_t upper_bound(const int64_t *b, Py_ssize_t lo, Py_ssize_t hi, int64_t x)
{
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (b[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The place of x in b (sorted, n values): the first index whose value is above x (numpy's
 * searchsorted(b, x, side="right")), found by galloping from p, the previous such place (keys in
 * runs of increasing values, a thread's event starts, cost about a step each instead of a binary
 * search over the whole array). */
static Py_ssize_t gallop(const int64_t *b, Py_ssize_t n, Py_ssize_t p, int64_t x)
{
    if (p < n && b[p] <= x) { /* forward: b[last] <= x */
        Py_ssize_t last = p, probe = p + 1, step = 1;
        while (probe < n && b[probe] <= x) {
            last = probe;
            step *= 2;
            probe = last + step;
        }
        return upper_bound(b, last + 1, probe < n ? probe : n, x);
    }
    if (p > 0 && b[p - 1] > x) { /* backward: b[first] > x */
        Py_ssize_t first = p - 1, probe = p - 2, step = 1;
        while (probe >= 0 && b[probe] > x) {
            first = probe;
            step *= 2;
            probe = first - step;
        }
        return upper_bound(b, probe < 0 ? 0 : probe + 1, first, x);
    }
    return p;
}

/* gallop() over a timeline's boundaries: the first boundary whose instant is above x. */
static Py_ssize_t tl_upper_bound(tline *T, Py_ssize_t lo, Py_ssize_t hi, int64_t x)
{
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (tl_t(T, mid) <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static Py_ssize_t tl_gallop(tline *T, Py_ssize_t p, int64_t x)
{
    Py_ssize_t n = T->nb;
    if (p < n && tl_t(T, p) <= x) {
        Py_ssize_t last = p, probe = p + 1, step = 1;
        while (probe < n && tl_t(T, probe) <= x) {
            last = probe;
            step *= 2;
            probe = last + step;
        }
        return tl_upper_bound(T, last + 1, probe < n ? probe : n, x);
    }
    if (p > 0 && tl_t(T, p - 1) > x) {
        Py_ssize_t first = p - 1, probe = p - 2, step = 1;
        while (probe >= 0 && tl_t(T, probe) > x) {
            first = probe;
            step *= 2;
            probe = first - step;
        }
        return tl_upper_bound(T, probe < 0 ? 0 : probe + 1, first, x);
    }
    return p;
}

/* timeline_search(<the timeline's six buffers>, x, right, out): out[i] = the place of x[i] among
 * the boundaries' instants (sorted), as numpy's searchsorted gives it: the first boundary whose
 * instant is above x[i] (right) or at or above it (not right). Galloping from the place of the
 * value before: sorted values cost a few steps each. */
static PyObject *timeline_search(PyObject *self, PyObject *args)
{
    Py_buffer bx = {0}, bo = {0};
    tline_buf B = {0};
    tline T;
    int right, ok = 0;
    if (!PyArg_ParseTuple(args, TL_FORMAT "y*pw*", TL_ARGS(B), &bx, &right, &bo))
        goto done;
    if (tl_open(&T, &B))
        goto done;
    Py_ssize_t m = bx.len / 8;
    if (check(&bx, 8, m, "x") || check(&bo, 8, m, "out"))
        goto done;
    const int64_t *x = bx.buf;
    int64_t *out = bo.buf;
    Py_ssize_t p = 0;
    for (Py_ssize_t i = 0; i < m && !T.bad; i++) {
        if (!right && x[i] == INT64_MIN) { /* nothing is below it */
            out[i] = 0;
            continue;
        }
        /* the first instant at or above x is the first above x - 1 (integers) */
        p = tl_gallop(&T, p, right ? x[i] : x[i] - 1);
        out[i] = p;
    }
    ok = !tl_check(&T, "timeline_search");
done:
    TL_RELEASE(B);
    RELEASE(&bx, &bo);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* landing_counts(start, end, line, line_size, parent, outside, cat, <the timeline's six buffers>,
 *                seg_cat, t0, t1, line_kind, python, counts)
 *
 * The host's events by the category their recording cost lands in (traceinsight.analysis.overhead),
 * counted: an event counts when its line's kind (line_kind[line], uint8) is 1 (the main thread;
 * events kept out of the nesting, ``outside``, skipped) or 2 (another thread of the host), and its
 * start falls in the window that is the last to start at or before it ([t0, t1) sorted by t0).
 * A main-thread event lands in its parent's category (cat, int8), python for a root event of
 * positive length; any other event in the main thread's category at its start instant: the
 * segment of the timeline holding it (see tline: segment j is [bound j, bound j + 1), seg_cat
 * int8 as long as the segments), python off the timeline. counts (int64, one per category) is
 * added to. */
static PyObject *landing_counts(PyObject *self, PyObject *args)
{
    Py_buffer bs = {0}, be = {0}, bl = {0}, bp = {0}, bout = {0}, bc = {0}, bsc = {0}, b0 = {0},
              b1 = {0}, bk = {0}, bcount = {0};
    tline_buf B = {0};
    tline T;
    Py_ssize_t *runs = NULL;
    int line_size, python, ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*iy*y*y*" TL_FORMAT "y*y*y*y*iw*", &bs, &be, &bl,
                          &line_size, &bp, &bout, &bc, TL_ARGS(B), &bsc, &b0, &b1, &bk, &python,
                          &bcount))
        goto done;
    if (!int_size_ok(line_size) || tl_open(&T, &B))
        goto done;
    Py_ssize_t n = bs.len / 8, nb = T.nb, nseg = bsc.len, w = b0.len / 8, n_lines = bk.len,
               n_cat = bcount.len / 8;
    if (check(&be, 8, n, "end") || check(&bl, line_size, n, "line") || check(&bp, 4, n, "parent") ||
        check(&bout, 1, n, "outside") || check(&bc, 1, n, "cat") || check(&b1, 8, w, "t1") ||
        check(&bcount, 8, -1, "counts"))
        goto done;
    const int64_t *st = bs.buf, *en = be.buf, *t0 = b0.buf, *t1 = b1.buf;
    const int32_t *par = bp.buf;
    const uint8_t *out = bout.buf, *kind = bk.buf;
    const int8_t *cat = bc.buf, *sc = bsc.buf;
    const void *ln = bl.buf;
    int64_t *counts = bcount.buf;
    Py_ssize_t pw = 0, pb = 0; /* the previous start's places among the windows, the bounds */
    Py_ssize_t n_runs = 0;
    runs = line_runs(ln, line_size, n, &n_runs);
    if (!runs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t r = 0; r < n_runs; r++) {
        int64_t l = int_at(ln, line_size, runs[r]);
        int k = l >= 0 && l < n_lines ? kind[l] : 0;
        if (!k)
            continue;
        for (Py_ssize_t i = runs[r]; i < runs[r + 1]; i++) {
            if (k == 1 && out[i])
                continue;
            pw = gallop(t0, w, pw, st[i]);
            if (pw == 0 || st[i] >= t1[pw - 1])
                continue;
            int64_t land;
            int32_t p = par[i];
            if (k == 1 && p >= 0 && p < n)
                land = cat[p];
            else if (k == 1 && en[i] > st[i])
                land = python;
            else {
                pb = tl_gallop(&T, pb, st[i]);
                land = pb >= 1 && pb - 1 < nseg && pb < nb ? sc[pb - 1] : python;
            }
            if (land >= 0 && land < n_cat)
                counts[land]++;
        }
    }
    ok = !tl_check(&T, "landing_counts");
done:
    free(runs);
    TL_RELEASE(B);
    RELEASE(&bs, &be, &bl, &bp, &bout, &bc, &bsc, &b0, &b1, &bk, &bcount);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    NATIVE_DECODE_METHODS
    {"is_sorted", is_sorted, METH_VARARGS, "is_sorted(start, end) -> bool"},
    {"nest", nest, METH_VARARGS,
     "nest(start, end, line, line_size, include, is_frame, name, parent, depth, crosser)"},
    {"inherit", inherit, METH_VARARGS,
     "inherit(parent, own, own_strength, pass_strength, cat, n_cat, pyframe, python, other"
     "[, passed])"},
    {"mark_ancestors", mark_ancestors, METH_VARARGS, "mark_ancestors(parent, flag)"},
    {"has_child", has_child, METH_VARARGS, "has_child(parent, name, child_name, start, end, out)"},
    {"lookup", lookup, METH_VARARGS, "lookup(lut, index, index_size, out)"},
    {"spans_in", spans_in, METH_VARARGS, "spans_in(start, end, outside, lo, hi, out) -> k"},
    {"nearest_marked", nearest_marked, METH_VARARGS, "nearest_marked(parent, mask, out)"},
    {"nearest_marked_at", nearest_marked_at, METH_VARARGS,
     "nearest_marked_at(parent, mask, events, out, budget[, name]) -> bool"},
    {"timeline", timeline, METH_VARARGS,
     "timeline(start, end, events, cat, python, ref, seg_cat[, outside, lo, hi]) -> k"},
    {"frame_sums", frame_sums, METH_VARARGS,
     "frame_sums(parent, name, start, nested, is_frame_name, lo, hi, t0, t1, own, calls, self, "
     "inclusive)"},
    {"owned_time", owned_time, METH_VARARGS,
     "owned_time(ref, start, end, parent, syn_t, syn_owner, seg_cat, t0, t1, category, out"
     "[, group])"},
    {"frame_sweep", frame_sweep, METH_VARARGS,
     "frame_sweep(parent, name, start, end, outside, lo, hi, ref, start, end, parent, syn_t, "
     "syn_owner, seg_cat, t0, t1, "
     "is_frame_name, python, calls, self, inclusive, issuer_name, caller_name, op_kind, cat_a, "
     "cat_b, time_a, time_b, ops, entry) -> bool"},
    {"window_sums", window_sums, METH_VARARGS,
     "window_sums(ref, start, end, parent, syn_t, syn_owner, seg_cat, t0, t1, out)"},
    {"timeline_search", timeline_search, METH_VARARGS,
     "timeline_search(ref, start, end, parent, syn_t, syn_owner, x, right, out)"},
    {"landing_counts", landing_counts, METH_VARARGS,
     "landing_counts(start, end, line, line_size, parent, outside, cat, ref, start, end, parent, "
     "syn_t, syn_owner, seg_cat, t0, t1, "
     "line_kind, python, counts)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "traceinsight's per-event loops (see native.py)", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
