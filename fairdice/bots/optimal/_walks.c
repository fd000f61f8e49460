/* The optimal table's two lattice walks and the first roll's mean, compiled: the same exact arithmetic as
 * programme._Walks.one_roll_earlier (twice) and _ValuePath._mean, which stay the reference and the fallback.
 *
 * Why C: numpy spends most of a walk on its own calls and on moving a batch's rows through memory; here a
 * block of BLOCK states goes through both walks in the core's own cache, each step a loop the compiler
 * vectorises.  Every number is an integer below 2^53 held in a double (programme.py: EXACT_LIMIT), so each
 * sum, product and maximum is exact in any order, and the divisions by 7776 and the round-half-even
 * (rint, the default rounding mode) are the very IEEE operations numpy performs: the results are the
 * same bits.  Build with -O3 and nothing that relaxes IEEE arithmetic (no -ffast-math).
 *
 * Plain C: the vector units are reached by GCC's auto-vectoriser, and on x86-64 Linux (glibc) each hot
 * function is compiled for AVX-512, AVX2 and the baseline, picked at load time (target_clones), so one
 * built module runs on every x86-64; elsewhere it is compiled once for the target's baseline.
 *
 * The lattice (which keeps are the children and the parents of which) comes from Python at every call and
 * is checked before use: every index in range, children after and parents before their keep, so that no
 * input reads or writes outside the buffers and every walk reads only finished rows. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define ROWS 462      /* keeps of 0..5 dice, in the kernel's order (programme.LATTICE) */
#define FOURS 84      /* the first keep of four dice */
#define FIVES 210     /* the first keep of five dice: the rolls */
#define FACES 6
#define BLOCK 16      /* states a block: its rows (462 x 16 doubles) stay in the core's own cache */
#define OUTCOMES 7776.0

#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif
/* Each loop over a block's states stays a loop: GCC would otherwise unroll it into BLOCK scalars first, and
 * where a row is kept across an outer loop (a maximum over parents, a sum over rolls) its vectoriser does not
 * join them again.  As a loop, it is vectorised for each clone's unit (measured: twice as fast). */
#define ROW_LOOP _Pragma("GCC unroll 1")
#if defined(__GNUC__)  /* the helpers inlined into each clone of one_block, so each is compiled for its unit */
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

typedef double row_t[BLOCK];

typedef struct {
    const int32_t *children;  /* (FIVES, FACES): the keep plus one die of each face */
    const int32_t *starts;    /* (ROWS + 1): row i's parents are parents[starts[i]:starts[i + 1]] */
    const int32_t *parents;   /* the keeps one die smaller, in the order numpy takes them */
    const double *scales;     /* (FIVES): 6^s for a keep of s dice */
    const double *ways;       /* (ROWS - FIVES): ordered throws showing each roll */
} lattice_t;

/* Row operations on a block: one loop each over the block's states, which the compiler vectorises (the rows
 * are distinct, `restrict` tells it so). */
INLINE void copy_row(double *restrict to, const double *restrict from) {
    ROW_LOOP for (int j = 0; j < BLOCK; j++) to[j] = from[j];
}

INLINE void add_row(double *restrict to, const double *restrict from) {
    ROW_LOOP for (int j = 0; j < BLOCK; j++) to[j] += from[j];
}

INLINE void max_row(double *restrict to, const double *restrict from) {
    ROW_LOOP for (int j = 0; j < BLOCK; j++) to[j] = from[j] > to[j] ? from[j] : to[j];
}

/* Down the lattice: each keep of fewer than five dice gets the sum S of its six children, then 6^s x S. */
INLINE void sum_down(row_t *kb, const lattice_t *l) {
    for (int i = FIVES - 1; i >= 0; i--) {
        const int32_t *c = l->children + FACES * i;
        copy_row(kb[i], kb[c[0]]);
        for (int f = 1; f < FACES; f++) add_row(kb[i], kb[c[f]]);
    }
    for (int i = 1; i < FIVES; i++) {
        const double scale = l->scales[i];
        ROW_LOOP for (int j = 0; j < BLOCK; j++) kb[i][j] *= scale;
    }
}

/* Up the lattice: each keep the best of itself and its sub-keeps; the keeps of four dice are divided by 7776
 * and rounded before the rolls take their maximum (rounding is monotone: the same number). */
INLINE void best_below(row_t *kb, const lattice_t *l) {
    for (int i = 1; i < ROWS; i++) {
        for (int32_t e = l->starts[i]; e < l->starts[i + 1]; e++) max_row(kb[i], kb[l->parents[e]]);
        if (i == FIVES - 1)
            for (int r = FOURS; r < FIVES; r++)
                ROW_LOOP for (int j = 0; j < BLOCK; j++) kb[r][j] = rint(kb[r][j] / OUTCOMES);
    }
}

/* One block: the rolls' values after the last roll in, two walks, the first roll's rounded mean out. */
CLONES static void one_block(row_t *kb, const lattice_t *l, double *mean) {
    sum_down(kb, l);
    best_below(kb, l);
    sum_down(kb, l);
    best_below(kb, l);
    double acc[BLOCK];
    ROW_LOOP for (int j = 0; j < BLOCK; j++) acc[j] = 0.0;
    for (int r = FIVES; r < ROWS; r++) {
        const double w = l->ways[r - FIVES];
        ROW_LOOP for (int j = 0; j < BLOCK; j++) acc[j] += w * kb[r][j];
    }
    ROW_LOOP for (int j = 0; j < BLOCK; j++) mean[j] = rint(acc[j] / OUTCOMES);
}

/* The batch (keeps: ROWS x b, row-major, the rolls' rows filled) block by block; the rolls' rows are written
 * back with their values one roll into the turn, as numpy's walks leave them. */
static void walk_batch(double *keeps, Py_ssize_t b, double *out, const lattice_t *l) {
    row_t kb[ROWS];
    double mean[BLOCK];
    for (Py_ssize_t lo = 0; lo < b; lo += BLOCK) {
        const Py_ssize_t n = b - lo < BLOCK ? b - lo : BLOCK;
        for (int r = FIVES; r < ROWS; r++) {
            memset(kb[r], 0, sizeof(row_t));
            memcpy(kb[r], keeps + r * b + lo, (size_t)n * sizeof(double));
        }
        one_block(kb, l, mean);
        for (int r = FIVES; r < ROWS; r++) memcpy(keeps + r * b + lo, kb[r], (size_t)n * sizeof(double));
        memcpy(out + lo, mean, (size_t)n * sizeof(double));
    }
}

/* A C-contiguous buffer of `count` items of the native type `code` ('d' or 'i'), writable if asked. */
static int get_buffer(PyObject *obj, Py_buffer *view, int writable, char code, Py_ssize_t itemsize,
                      Py_ssize_t count, const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *format = view->format ? view->format : "B";
    if (format[0] == '@' || format[0] == '=' || format[0] == '<') format++;
    if (view->itemsize != itemsize || format[0] != code || format[1] != '\0'
            || (count >= 0 && view->len != count * itemsize)) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of type '%c', got %zd bytes of '%s'",
                     name, count, code, view->len, view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The lattice's indices keep every read and write inside the block, in the order the walks need. */
static int check_lattice(const lattice_t *l, Py_ssize_t parents) {
    for (int i = 0; i < FIVES; i++)
        for (int f = 0; f < FACES; f++) {
            int32_t c = l->children[FACES * i + f];
            if (c <= i || c >= ROWS) goto bad;
        }
    if (l->starts[0] != 0 || l->starts[1] != 0 || l->starts[ROWS] > parents) goto bad;
    for (int i = 1; i < ROWS; i++) {
        if (l->starts[i + 1] < l->starts[i]) goto bad;
        for (int32_t e = l->starts[i]; e < l->starts[i + 1]; e++)
            if (l->parents[e] < 0 || l->parents[e] >= i) goto bad;
    }
    for (int r = FIVES; r < ROWS; r++)  /* the rounding of the fours runs after their last parent's row */
        for (int32_t e = l->starts[r]; e < l->starts[r + 1]; e++)
            if (l->parents[e] < FOURS || l->parents[e] >= FIVES) goto bad;
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "the lattice's indices are not a lattice of keeps");
    return -1;
}

/* Whether two buffers share a byte (the walks would then read what they write). */
static int overlap(const Py_buffer *a, const Py_buffer *b) {
    const char *a0 = a->buf, *b0 = b->buf;
    return a->len && b->len && a0 < b0 + b->len && b0 < a0 + a->len;
}

/* walks(keeps, out, children, starts, parents, scales, ways): see programme._CompiledWalks. */
static PyObject *walks(PyObject *self, PyObject *args) {
    (void)self;
    static const char *names[7] = {"out", "keeps", "children", "starts", "parents", "scales", "ways"};
    static const char codes[7] = {'d', 'd', 'i', 'i', 'i', 'd', 'd'};
    PyObject *objs[7];
    if (!PyArg_ParseTuple(args, "OOOOOOO:walks", &objs[1], &objs[0], &objs[2], &objs[3], &objs[4], &objs[5],
                          &objs[6]))
        return NULL;
    Py_buffer views[7];
    Py_ssize_t counts[7] = {-1, 0, FIVES * FACES, ROWS + 1, -1, FIVES, ROWS - FIVES};
    PyObject *result = NULL;
    int got = 0;
    for (; got < 7; got++) {
        if (got == 1) counts[1] = ROWS * (views[0].len / 8);
        if (get_buffer(objs[got], &views[got], got < 2, codes[got], codes[got] == 'd' ? 8 : 4, counts[got],
                       names[got]) < 0)
            goto done;
    }
    const lattice_t l = {views[2].buf, views[3].buf, views[4].buf, views[5].buf, views[6].buf};
    if (check_lattice(&l, views[4].len / 4) < 0) goto done;
    if (overlap(&views[0], &views[1])) {
        PyErr_SetString(PyExc_ValueError, "out and keeps share memory");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    walk_batch(views[1].buf, views[0].len / 8, views[0].buf, &l);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    while (got > 0) PyBuffer_Release(&views[--got]);
    return result;
}

static PyMethodDef methods[] = {
    {"walks", walks, METH_VARARGS,
     "walks(keeps, out, children, starts, parents, scales, ways): a batch's two walks and first-roll mean."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "fairdice.bots.optimal._walks",
    "The optimal table's lattice walks, compiled (programme.py's numpy walks are the reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__walks(void) { return PyModule_Create(&module); }
