/* tfn's call trampoline: one C call per compiled-function call (runtime/fastcall.py builds and caches it).

   A Plan holds what runtime/executable.py packs once per executable: the packed entry point
   `_mlir__mlir_ciface_<name>(void **args)`, each input's dtype and static dims, each result's dtype and rank,
   and the functions giving the calling thread's run-time error channel (dialects/abi.py SLOT_FUNCTIONS).
   plan.call(values[, positions]) builds the memref descriptors on the C stack (so concurrent and re-entrant calls
   never share them), runs the function without the GIL, reads the error channel on the same thread, and wraps each
   result buffer as a NumPy array that owns it through an _Owner (no copy). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if NPY_ABI_VERSION < 0x02000000 /* NumPy 1.x headers: no accessor, the field is public */
#define PyDataType_ELSIZE(d) ((d)->elsize)
#endif

#define GLOBAL_SENTINEL ((void *)0xDEADBEEF) /* memref.get_global's `allocated`: a constant, never freed */
#define STACK_WORDS 512
#define MAX_DETAILS 16

void tfn_free(void *p); /* _buffer_cache.c: any malloc block; a large one is kept for reuse */

typedef void *(*slot_fn)(void);

typedef void (*packed_fn)(void **);

/* ---- _Owner: frees (tfn_free) one malloc'ed result buffer when the last array viewing it goes ---- */

typedef struct {
  PyObject_HEAD void *ptr;
} Owner;

static void owner_dealloc(Owner *self) {
  tfn_free(self->ptr);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject OwnerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tfn.runtime._Owner",
    .tp_basicsize = sizeof(Owner),
    .tp_dealloc = (destructor)owner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Owns one buffer the compiled code allocated; freed with the last array viewing it.",
};

/* ---- Plan ---- */

typedef struct {
  PyObject_HEAD packed_fn fn;
  Py_ssize_t n_in, n_out;
  int *in_rank, *out_rank;
  int64_t **in_dims; /* per input: its static dims, -1 where dynamic */
  PyArray_Descr **in_descr, **out_descr;
  Py_ssize_t words; /* int64 words of all result and input descriptors */
  slot_fn flag_slot, detail_slot; /* the calling thread's error flag (int32) and details (int64[n_details]) */
  Py_ssize_t n_details;
  PyObject *on_error; /* on_error(code, details) raises the error */
} Plan;

static PyObject *value_name; /* "_value": a tfn.Tensor's array */

/* on_error is usually a bound method of the Executable holding this plan: a cycle the GC must see. */
static int plan_traverse(Plan *p, visitproc visit, void *arg) {
  Py_VISIT(p->on_error);
  return 0;
}

static int plan_clear(Plan *p) {
  Py_CLEAR(p->on_error);
  return 0;
}

static void plan_dealloc(Plan *p) {
  PyObject_GC_UnTrack(p);
  for (Py_ssize_t i = 0; i < p->n_in; i++) {
    if (p->in_dims) PyMem_Free(p->in_dims[i]);
    if (p->in_descr) Py_XDECREF(p->in_descr[i]);
  }
  for (Py_ssize_t i = 0; i < p->n_out && p->out_descr; i++) Py_XDECREF(p->out_descr[i]);
  PyMem_Free(p->in_rank);
  PyMem_Free(p->out_rank);
  PyMem_Free(p->in_dims);
  PyMem_Free(p->in_descr);
  PyMem_Free(p->out_descr);
  Py_CLEAR(p->on_error);
  Py_TYPE(p)->tp_free((PyObject *)p);
}

/* Plan(fn_address, ((dtype, dims), ...), ((dtype, rank), ...), flag_slot_address, detail_slot_address,
        n_details, on_error); slot addresses 0: the function reports no errors */
static int plan_init(Plan *p, PyObject *args, PyObject *Py_UNUSED(kw)) {
  unsigned long long fn, flag_slot, detail_slot;
  Py_ssize_t n_details;
  PyObject *ins, *outs, *on_error;
  if (!PyArg_ParseTuple(args, "KO!O!KKnO", &fn, &PyTuple_Type, &ins, &PyTuple_Type, &outs, &flag_slot, &detail_slot,
                        &n_details, &on_error))
    return -1;
  if (p->in_rank) {
    PyErr_SetString(PyExc_TypeError, "Plan is already initialized");
    return -1;
  }
  if (!fn) {
    PyErr_SetString(PyExc_ValueError, "Plan: null function address");
    return -1;
  }
  if (n_details < 0 || n_details > MAX_DETAILS || !flag_slot != !detail_slot) {
    PyErr_SetString(PyExc_ValueError, "Plan: bad error channel");
    return -1;
  }
  p->fn = (packed_fn)(uintptr_t)fn;
  p->flag_slot = (slot_fn)(uintptr_t)flag_slot;
  p->detail_slot = (slot_fn)(uintptr_t)detail_slot;
  p->n_details = n_details;
  Py_INCREF(on_error);
  Py_XSETREF(p->on_error, on_error);
  p->n_in = PyTuple_GET_SIZE(ins);
  p->n_out = PyTuple_GET_SIZE(outs);
  p->in_rank = PyMem_Calloc(p->n_in + 1, sizeof(int));
  p->in_dims = PyMem_Calloc(p->n_in + 1, sizeof(int64_t *));
  p->in_descr = PyMem_Calloc(p->n_in + 1, sizeof(PyArray_Descr *));
  p->out_rank = PyMem_Calloc(p->n_out + 1, sizeof(int));
  p->out_descr = PyMem_Calloc(p->n_out + 1, sizeof(PyArray_Descr *));
  if (!p->in_rank || !p->in_dims || !p->in_descr || !p->out_rank || !p->out_descr) {
    PyErr_NoMemory();
    return -1;
  }
  p->words = 0;
  for (Py_ssize_t i = 0; i < p->n_in; i++) {
    PyObject *dt, *dims;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(ins, i), "OO!", &dt, &PyTuple_Type, &dims)) return -1;
    if (!PyArray_DescrConverter(dt, &p->in_descr[i])) return -1;
    int r = p->in_rank[i] = (int)PyTuple_GET_SIZE(dims);
    p->in_dims[i] = PyMem_Calloc(r + 1, sizeof(int64_t));
    if (!p->in_dims[i]) {
      PyErr_NoMemory();
      return -1;
    }
    for (int j = 0; j < r; j++) {
      p->in_dims[i][j] = PyLong_AsLongLong(PyTuple_GET_ITEM(dims, j));
      if (p->in_dims[i][j] == -1 && PyErr_Occurred()) return -1;
    }
    p->words += 3 + 2 * r;
  }
  for (Py_ssize_t i = 0; i < p->n_out; i++) {
    PyObject *dt;
    int r;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(outs, i), "Oi", &dt, &r)) return -1;
    if (!PyArray_DescrConverter(dt, &p->out_descr[i])) return -1;
    if (r < 0 || r > NPY_MAXDIMS) {
      PyErr_Format(PyExc_ValueError, "result %zd: unsupported rank %d", i, r);
      return -1;
    }
    p->out_rank[i] = r;
    p->words += 3 + 2 * r;
  }
  return 0;
}

/* The array of one input value (an ndarray or a tfn Tensor), C-contiguous, aligned and of the input's dtype.
   Returns a new reference, or NULL with an exception set. */
static PyArrayObject *input_array(Plan *p, Py_ssize_t i, PyObject *v) {
  PyObject *a = PyArray_Check(v) ? (Py_INCREF(v), v) : PyObject_GetAttr(v, value_name);
  if (!a) return NULL;
  if (!PyArray_Check(a)) {
    PyErr_Format(PyExc_TypeError, "input %zd: expected a tensor or NumPy array, got %.80s", i, Py_TYPE(v)->tp_name);
    Py_DECREF(a);
    return NULL;
  }
  PyArrayObject *arr = (PyArrayObject *)a;
  PyArray_Descr *want = p->in_descr[i];
  if (PyArray_DESCR(arr) != want && !PyArray_EquivTypes(PyArray_DESCR(arr), want)) {
    PyErr_Format(PyExc_TypeError, "input %zd: expected dtype %S, got %S", i, (PyObject *)want,
                 (PyObject *)PyArray_DESCR(arr));
    Py_DECREF(a);
    return NULL;
  }
  int r = p->in_rank[i];
  if (PyArray_NDIM(arr) != r) {
    PyErr_Format(PyExc_ValueError, "input %zd: expected rank %d, got shape of rank %d", i, r, PyArray_NDIM(arr));
    Py_DECREF(a);
    return NULL;
  }
  for (int j = 0; j < r; j++) {
    int64_t d = p->in_dims[i][j];
    if (d >= 0 && d != (int64_t)PyArray_DIM(arr, j)) {
      PyErr_Format(PyExc_ValueError, "input %zd: dimension %d is %zd, the compiled function expects %lld", i, j,
                   (Py_ssize_t)PyArray_DIM(arr, j), (long long)d);
      Py_DECREF(a);
      return NULL;
    }
  }
  if (PyArray_ISCARRAY_RO(arr)) return arr;
  /* The compiled code assumes the identity layout: pass a contiguous copy of a strided view. */
  Py_INCREF(want);
  PyObject *c = PyArray_FromAny(a, want, 0, 0, NPY_ARRAY_CARRAY_RO, NULL);
  Py_DECREF(a);
  return (PyArrayObject *)c;
}

static int contains(void *const *ptrs, Py_ssize_t n, void *x) {
  for (Py_ssize_t i = 0; i < n; i++)
    if (ptrs[i] == x) return 1;
  return 0;
}

/* Result i as an ndarray: owning its buffer, or a copy when the buffer is a constant, an input or an
   earlier result (never freed twice). `seen` collects the buffers already owned or freed. */
static PyObject *wrap_result(Plan *p, Py_ssize_t i, int64_t *d, void *const *inputs, void **seen,
                             Py_ssize_t *n_seen) {
  void *allocated = (void *)(uintptr_t)d[0];
  char *aligned = (char *)(uintptr_t)d[1];
  int r = p->out_rank[i];
  PyArray_Descr *descr = p->out_descr[i];
  npy_intp dims[NPY_MAXDIMS];
  npy_intp n = 1;
  for (int j = 0; j < r; j++) n *= (dims[j] = (npy_intp)d[3 + j]);
  npy_intp size = n * PyDataType_ELSIZE(descr);
  char *data = aligned + d[2] * PyDataType_ELSIZE(descr);
  int shared = allocated == GLOBAL_SENTINEL || contains(inputs, p->n_in, allocated) ||
               contains(seen, *n_seen, allocated);
  if (shared || n == 0 || !allocated) {
    if (!shared && allocated) { /* an empty buffer: free it now, once */
      seen[(*n_seen)++] = allocated;
      tfn_free(allocated);
    }
    Py_INCREF(descr);
    PyObject *a = PyArray_NewFromDescr(&PyArray_Type, descr, r, dims, NULL, NULL, 0, NULL);
    if (a && shared && size) memcpy(PyArray_DATA((PyArrayObject *)a), data, size);
    return a;
  }
  seen[(*n_seen)++] = allocated;
  Owner *owner = PyObject_New(Owner, &OwnerType);
  if (!owner) {
    tfn_free(allocated);
    return NULL;
  }
  owner->ptr = allocated;
  Py_INCREF(descr);
  PyObject *a = PyArray_NewFromDescr(&PyArray_Type, descr, r, dims, NULL, data, NPY_ARRAY_CARRAY, NULL);
  if (!a || PyArray_SetBaseObject((PyArrayObject *)a, (PyObject *)owner) < 0) {
    Py_XDECREF(a);
    Py_DECREF(owner);
    return NULL;
  }
  return a;
}

/* Free result buffer `d` without wrapping it (after a failure), unless it is a constant, an input or seen. */
static void drop_result(Plan *p, int64_t *d, void *const *inputs, void **seen, Py_ssize_t *n_seen) {
  void *allocated = (void *)(uintptr_t)d[0];
  if (!allocated || allocated == GLOBAL_SENTINEL || contains(inputs, p->n_in, allocated) ||
      contains(seen, *n_seen, allocated))
    return;
  seen[(*n_seen)++] = allocated;
  tfn_free(allocated);
}

/* plan.call(values[, positions]) -> list of result arrays. values: a tuple or list of arrays or tensors;
   positions (a tuple of ints) picks the inputs out of values, else values are the inputs in order. */
static PyObject *plan_call(Plan *p, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "call(values[, positions])");
    return NULL;
  }
  if (!p->fn) {
    PyErr_SetString(PyExc_TypeError, "Plan was not initialized");
    return NULL;
  }
  PyObject *seq = PySequence_Fast(args[0], "call(): values must be a sequence");
  if (!seq) return NULL;
  PyObject *pos = nargs == 2 && args[1] != Py_None ? args[1] : NULL;
  Py_ssize_t n_values = PySequence_Fast_GET_SIZE(seq);
  if (pos ? !PyTuple_Check(pos) || PyTuple_GET_SIZE(pos) != p->n_in : n_values != p->n_in) {
    PyErr_Format(PyExc_TypeError, "call(): expected %zd inputs", p->n_in);
    Py_DECREF(seq);
    return NULL;
  }
  int64_t stack[STACK_WORDS];
  /* Descriptors, then pointer arrays: slots (n_in + 1), argv (n_in + 1), inputs (n_in), seen (n_out), held (n_in) */
  Py_ssize_t n_ptr = 4 * p->n_in + p->n_out + 2;
  int64_t *words = p->words + n_ptr <= STACK_WORDS ? stack : PyMem_Malloc((p->words + n_ptr) * sizeof(int64_t));
  if (!words) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  void **slots = (void **)(words + p->words); /* each descriptor's address; argv points at these */
  void **argv = slots + p->n_in + 1;
  void **inputs = argv + p->n_in + 1; /* each input's data pointer, for alias checks */
  void **seen = inputs + p->n_in;
  PyObject **held = (PyObject **)(seen + p->n_out); /* the input arrays, alive until the results are wrapped */
  memset(held, 0, p->n_in * sizeof(PyObject *));
  PyObject *result = NULL;
  int64_t *w = words;
  Py_ssize_t k = 0;
  if (p->n_out) { /* the results struct comes first: one descriptor per result, all 8-byte fields */
    slots[k++] = w;
    for (Py_ssize_t i = 0; i < p->n_out; i++) w += 3 + 2 * p->out_rank[i];
    memset(words, 0, (w - words) * sizeof(int64_t));
  }
  int64_t *results = words;
  for (Py_ssize_t i = 0; i < p->n_in; i++) {
    Py_ssize_t at = i;
    if (pos) {
      at = PyLong_AsSsize_t(PyTuple_GET_ITEM(pos, i));
      if (at < 0 || at >= n_values) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_IndexError, "call(): position %zd out of range", at);
        goto done;
      }
    }
    PyArrayObject *a = input_array(p, i, PySequence_Fast_GET_ITEM(seq, at));
    if (!a) goto done;
    held[i] = (PyObject *)a;
    int r = p->in_rank[i];
    void *data = PyArray_DATA(a);
    inputs[i] = data;
    w[0] = w[1] = (int64_t)(uintptr_t)data;
    w[2] = 0;
    int64_t stride = 1;
    for (int j = r - 1; j >= 0; j--) {
      int64_t dim = (int64_t)PyArray_DIM(a, j);
      w[3 + j] = dim;
      w[3 + r + j] = stride;
      stride *= dim > 1 ? dim : 1;
    }
    slots[k++] = w;
    w += 3 + 2 * r;
  }
  for (Py_ssize_t i = 0; i < k; i++) argv[i] = &slots[i];
  result = PyList_New(p->n_out); /* before the call: afterwards every result must find an owner */
  if (!result) goto done;
  /* The descriptors live on this call's stack and the error channel is the calling thread's: other threads may
     call the same plan meanwhile. A call nested in this thread's call (a py_function calling back into compiled
     code) finds the outer call's channel cleared and leaves it as it found it. */
  int32_t code = 0;
  int64_t details[MAX_DETAILS];
  Py_BEGIN_ALLOW_THREADS
  int32_t *flag = p->flag_slot ? (int32_t *)p->flag_slot() : NULL;
  int64_t *detail = flag ? (int64_t *)p->detail_slot() : NULL;
  int32_t saved = 0;
  int64_t saved_details[MAX_DETAILS];
  if (flag) {
    saved = *flag;
    memcpy(saved_details, detail, p->n_details * sizeof(int64_t));
    *flag = 0;
  }
  p->fn(argv);
  if (flag) {
    code = *flag;
    memcpy(details, detail, p->n_details * sizeof(int64_t));
    *flag = saved;
    memcpy(detail, saved_details, p->n_details * sizeof(int64_t));
  }
  Py_END_ALLOW_THREADS

  Py_ssize_t n_seen = 0;
  int64_t *d = results;
  int failed = code != 0; /* a run-time error: drop (free) every result, then let on_error raise */
  for (Py_ssize_t i = 0; i < p->n_out; i++) {
    if (failed) {
      drop_result(p, d, inputs, seen, &n_seen);
    } else {
      PyObject *a = wrap_result(p, i, d, inputs, seen, &n_seen);
      if (a) PyList_SET_ITEM(result, i, a);
      else failed = 1; /* wrap_result freed this one's buffer; the rest are dropped */
    }
    d += 3 + 2 * p->out_rank[i];
  }
  if (failed) Py_CLEAR(result);
  if (code) {
    PyObject *r = NULL, *info = PyTuple_New(p->n_details);
    for (Py_ssize_t i = 0; info && i < p->n_details; i++) {
      PyObject *v = PyLong_FromLongLong(details[i]);
      if (!v) Py_CLEAR(info);
      else PyTuple_SET_ITEM(info, i, v);
    }
    if (info) r = p->on_error ? PyObject_CallFunction(p->on_error, "iO", (int)code, info) : Py_NewRef(Py_None);
    Py_XDECREF(info);
    if (r) {
      Py_DECREF(r);
      PyErr_SetString(PyExc_RuntimeError, "the compiled function reported a run-time error");
    }
  }
done:
  for (Py_ssize_t i = 0; i < p->n_in; i++) Py_XDECREF(held[i]);
  if (words != stack) PyMem_Free(words);
  Py_DECREF(seq);
  return result;
}

static PyMethodDef plan_methods[] = {
    {"call", (PyCFunction)(void (*)(void))plan_call, METH_FASTCALL,
     "call(values[, positions]) -> list of result arrays"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tfn.runtime.Plan",
    .tp_basicsize = sizeof(Plan),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A compiled function's calling convention, packed once.",
    .tp_traverse = (traverseproc)plan_traverse,
    .tp_clear = (inquiry)plan_clear,
    .tp_free = PyObject_GC_Del,
    .tp_methods = plan_methods,
    .tp_init = (initproc)plan_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tfn_fastcall", "tfn's call trampoline", -1, NULL};

PyMODINIT_FUNC PyInit__tfn_fastcall(void) {
  import_array();
  if (PyType_Ready(&OwnerType) < 0 || PyType_Ready(&PlanType) < 0) return NULL;
  value_name = PyUnicode_InternFromString("_value");
  if (!value_name) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  Py_INCREF(&PlanType);
  Py_INCREF(&OwnerType);
  if (PyModule_AddObject(m, "Plan", (PyObject *)&PlanType) < 0 ||
      PyModule_AddObject(m, "_Owner", (PyObject *)&OwnerType) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
