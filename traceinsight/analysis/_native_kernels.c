/* The per-event loops of traceinsight's trace analysis, in C, and the module ``_native``.
 *
 * Python-traced captures hold millions of events. Everything that must visit every event in order
 * (nesting them with a stack, inheriting categories down the nesting, sweeping the main thread's
 * timeline, summing frames and windows) is done here in one linear pass each; the rules and all
 * arithmetic over the results stay in Python / numpy (traceinsight.analysis). The protobuf wire
 * decoding of the events themselves is in _native_decode.c.
 */
#include "_native.h"

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

/* nearest_marked_at(parent, mask, events, out, budget) -> bool: nearest_marked's answer for the
 * given events only (int32 each), found by walking up their parents: no table-long column. False,
 * with out unfinished, once the walks have taken more than budget steps in all (a caller asking
 * for many events far below their marked ancestors is better served by nearest_marked). */
static PyObject *nearest_marked_at(PyObject *self, PyObject *args)
{
    Py_buffer bp = {0}, bm = {0}, bev = {0}, bo = {0};
    long long budget;
    if (!PyArg_ParseTuple(args, "y*y*y*w*L", &bp, &bm, &bev, &bo, &budget))
        return NULL;
    Py_ssize_t n = bp.len / 4, q = bev.len / 4;
    if (check(&bm, 1, n, "mask") || check(&bev, 4, q, "events") || check(&bo, 4, q, "out")) {
        RELEASE(&bp, &bm, &bev, &bo);
        return NULL;
    }
    const int32_t *par = bp.buf, *ev = bev.buf;
    const uint8_t *m = bm.buf;
    int32_t *out = bo.buf;
    long long steps = 0;
    int done = 1;
    for (Py_ssize_t i = 0; i < q && done; i++) {
        int32_t e = ev[i];
        /* as nearest_marked: a parent at or after its child is none */
        while (e >= 0 && e < n && !m[e]) {
            if (++steps > budget) {
                done = 0;
                break;
            }
            e = par[e] >= 0 && par[e] < e ? par[e] : -1;
        }
        out[i] = e >= 0 && e < n ? e : -1;
    }
    RELEASE(&bp, &bm, &bev, &bo);
    return PyBool_FromLong(done);
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

/* owned_time(bounds, seg_owner, seg_cat, t0, t1, category, out[, group]): out[e] += the time of
 * the segments of one category owned by event e (seg_owner int32, -1 for none) inside the windows
 * [t0, t1), clipped to them. With group (int32 per event, -1: none), summed by the owner's group
 * instead, out[group[e]] (out as long as the groups), so no per-event column is made. */
static PyObject *owned_time(PyObject *self, PyObject *args)
{
    Py_buffer bb = {0}, bown = {0}, bc = {0}, b0 = {0}, b1 = {0}, bo = {0}, bg = {0};
    int category, ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*iw*|y*", &bb, &bown, &bc, &b0, &b1, &category, &bo,
                          &bg))
        goto done;
    Py_ssize_t nb = bb.len / 8, w = b0.len / 8, n = bo.len / 8;
    Py_ssize_t nseg = nb > 0 ? nb - 1 : 0;
    if (check(&bown, 4, nseg, "seg_owner") || check(&bc, 1, nseg, "seg_cat") ||
        check(&b1, 8, w, "t1") || check(&bo, 8, n, "out") || (bg.obj && check(&bg, 4, -1, "group")))
        goto done;
    const int64_t *b = bb.buf, *t0 = b0.buf, *t1 = b1.buf;
    const int32_t *owner = bown.buf, *group = bg.obj ? bg.buf : NULL;
    Py_ssize_t n_owners = group ? bg.len / 4 : n;
    const int8_t *cat = bc.buf;
    int64_t *out = bo.buf;
    for (Py_ssize_t k = 0; k < w; k++)
        for (Py_ssize_t j = first_segment(b, nseg, t0[k]); j < nseg && b[j] < t1[k]; j++) {
            if (cat[j] != category || owner[j] < 0 || owner[j] >= n_owners)
                continue;
            int64_t to = group ? group[owner[j]] : owner[j];
            if (to < 0 || to >= n)
                continue;
            int64_t a = b[j] > t0[k] ? b[j] : t0[k];
            int64_t z = b[j + 1] < t1[k] ? b[j + 1] : t1[k];
            if (z > a)
                out[to] += z - a;
        }
    ok = 1;
done:
    RELEASE(&bb, &bown, &bc, &b0, &b1, &bo, &bg);
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

/* locate(sorted, keys, out): out[i] = the index of the last value of ``sorted`` at or below
 * keys[i], -1 when none (numpy's searchsorted(sorted, keys, side="right") - 1). Each search
 * gallops from the previous key's place: keys in runs of increasing times (a thread's event
 * starts against the timeline's bounds) cost about a step each instead of a binary search over
 * the whole array. */
static PyObject *locate(PyObject *self, PyObject *args)
{
    Py_buffer bb = {0}, bk = {0}, bo = {0};
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*y*w*", &bb, &bk, &bo))
        goto done;
    Py_ssize_t n = bb.len / 8, m = bk.len / 8;
    if (check(&bb, 8, -1, "sorted") || check(&bk, 8, m, "keys") || check(&bo, 8, m, "out"))
        goto done;
    const int64_t *b = bb.buf, *key = bk.buf;
    int64_t *out = bo.buf;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t p = 0; /* the previous key's place: values below it are at or below that key */
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t x = key[i];
        Py_ssize_t pos = p;
        if (p < n && b[p] <= x) { /* forward: b[last] <= x */
            Py_ssize_t last = p, probe = p + 1, step = 1;
            while (probe < n && b[probe] <= x) {
                last = probe;
                step *= 2;
                probe = last + step;
            }
            pos = upper_bound(b, last + 1, probe < n ? probe : n, x);
        } else if (p > 0 && b[p - 1] > x) { /* backward: b[first] > x */
            Py_ssize_t first = p - 1, probe = p - 2, step = 1;
            while (probe >= 0 && b[probe] > x) {
                first = probe;
                step *= 2;
                probe = first - step;
            }
            pos = upper_bound(b, probe < 0 ? 0 : probe + 1, first, x);
        }
        out[i] = pos - 1;
        p = pos;
    }
    Py_END_ALLOW_THREADS
    ok = 1;
done:
    RELEASE(&bb, &bk, &bo);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    NATIVE_DECODE_METHODS
    {"is_sorted", is_sorted, METH_VARARGS, "is_sorted(start, end) -> bool"},
    {"nest", nest, METH_VARARGS,
     "nest(start, end, line, include, is_frame, parent, depth, crosser)"},
    {"inherit", inherit, METH_VARARGS,
     "inherit(parent, own, own_strength, pass_strength, cat, n_cat, pyframe, python, other)"},
    {"mark_ancestors", mark_ancestors, METH_VARARGS, "mark_ancestors(parent, flag)"},
    {"nearest_marked", nearest_marked, METH_VARARGS, "nearest_marked(parent, mask, out)"},
    {"nearest_marked_at", nearest_marked_at, METH_VARARGS,
     "nearest_marked_at(parent, mask, events, out, budget) -> bool"},
    {"timeline", timeline, METH_VARARGS,
     "timeline(start, end, events, cat, python, t, owner, seg_cat) -> k"},
    {"frame_sums", frame_sums, METH_VARARGS,
     "frame_sums(parent, name, start, nested, is_frame_name, lo, hi, t0, t1, own, calls, self, "
     "inclusive)"},
    {"owned_time", owned_time, METH_VARARGS,
     "owned_time(bounds, seg_owner, seg_cat, t0, t1, category, out[, group])"},
    {"window_sums", window_sums, METH_VARARGS, "window_sums(bounds, seg_cat, t0, t1, out)"},
    {"locate", locate, METH_VARARGS, "locate(sorted, keys, out)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "traceinsight's per-event loops (see native.py)", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
