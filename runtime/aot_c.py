"""The C source of an ahead-of-time library's entry point (runtime/aot.py builds it) and of its header.

The entry point `int <name>(const T0 *arg0, ..., T *out0, ...)` takes one pointer per argument and per output:
dense row-major (C order) arrays of the element type, with the static shapes the header states. It wraps each
argument in a memref descriptor (no copy), calls the compiled function's C interface
`_mlir_ciface_<symbol>(results *, descriptors *...)` (runtime/executable.py: the same convention), copies each
result into its output buffer and frees the result buffers the compiled code allocated (never a constant's, an
argument's, or one buffer twice). After the call it reads the error flag (dialects/abi.py): the calling thread's
copy, whose address the compiled code's `tfn_error_flag_slot()` gives (tfn-thread-local-errors), so threads call the
library at once, each with its own error; 0 is success; otherwise the message is formatted from its template
(aot.error_messages) into a thread-local buffer that
`<name>_last_error()` returns, and the TF status code of the error is returned.
"""
import dataclasses

from tfn.dialects import dtypes
from tfn.dialects.abi import DETAIL_LEN, ERROR_DETAIL, ERROR_FLAG, SLOT_FUNCTIONS
from tfn.dialects.types import TensorType

C_TYPES = {"bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
           "uint8": "uint8_t", "float16": "uint16_t", "float32": "float", "float64": "double"}
_GLOBAL_SENTINEL = 0xDEADBEEF  # memref.get_global's `allocated` (runtime/executable.py): a constant, never freed
MESSAGE_LEN = 4096


@dataclasses.dataclass
class Spec:
    name: str            # the C entry point; the library is lib<name>.so
    symbol: str          # the compiled function's symbol (its C interface: _mlir_ciface_<symbol>)
    in_types: list       # TensorTypes of the arguments (static shapes)
    out_types: list      # TensorTypes of the compiled function's results
    outputs: list        # per C output, the index of the result it receives, or an ndarray: a constant output
    in_names: list       # C identifiers of the arguments
    has_errors: bool     # whether the code has the error channel
    messages: list       # runtime/aot.error_messages
    function_name: str   # the traced function's name
    target: str          # the target the code was generated for, in words
    threads: bool = False  # whether big kernels run on worker threads (the async runtime linked in)


def c_string(text):
    """A C string literal holding `text` (UTF-8), every byte that is not plain printable ASCII escaped."""
    out = []
    for b in text.encode():
        c = chr(b)
        if c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c in '"\\?':
            out.append("\\" + c)
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def output_types(spec):
    """The TensorType of each C output."""
    return [spec.out_types[r] if isinstance(r, int) else TensorType(r.shape, dtypes.as_dtype(r.dtype))
            for r in spec.outputs]


def _elements(t):
    n = 1
    for d in t.shape:
        n *= d
    return n


def _shape_text(t):
    return "[" + ", ".join(map(str, t.shape)) + "]"


def _prototype(spec):
    args = [f"const {C_TYPES[t.dtype.name]} *{n}" for t, n in zip(spec.in_types, spec.in_names)]
    args += [f"{C_TYPES[t.dtype.name]} *out{i}" for i, t in enumerate(output_types(spec))]
    return f"int {spec.name}({', '.join(args) or 'void'})"


def header_source(spec):
    """The text of <name>.h."""
    guard = f"TFN_AOT_{spec.name.upper()}_H"
    upper = spec.name.upper()
    lines = [
        f"/* {spec.name}.h: the C entry point of tfn.function '{spec.function_name}', compiled ahead of time by tfn.",
        " *",
        f" * Link with lib{spec.name}.so (it needs libc and libm only, not Python), e.g.",
        f" *   cc prog.c -I DIR -L DIR -l{spec.name} -Wl,-rpath,DIR",
        " *",
        " * Buffers: every argument and output is a dense row-major (C order) array of the element type, with the",
        " * static shape stated below; the caller owns all of them. Arguments are only read. Outputs are written",
        " * only when the call succeeds. bool is one byte (0 or 1); float16 is passed as its IEEE bits (uint16_t).",
        " * Variables the function captured are constants of the library: their values when it was compiled.",
        " *",
        f" * {spec.name}() returns 0 on success; otherwise a TensorFlow status code (3: INVALID_ARGUMENT,",
        " * 8: RESOURCE_EXHAUSTED, 11: OUT_OF_RANGE, ...) and " + f"{spec.name}_last_error() describes the error",
        " * (the failing op and the line of the Python source it was traced from). Threads may call it at once",
        " * (the message is the calling thread's); " + ("a library that checks run-time values runs one call at a time."
                                                        if spec.has_errors else "calls run in parallel.")
        + ("" if spec.threads else " The code runs on the calling thread only."),
        *([" * Big kernels also run on worker threads of the library's own: as many as the process's CPUs less one,",
           " * started by the first call that needs them; idle, they sleep."] if spec.threads else []),
        " *",
        f" * Code generated for: {spec.target}.",
        " */",
        f"#ifndef {guard}", f"#define {guard}", "", "#include <stdbool.h>", "#include <stdint.h>", "",
        "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    for t, n in zip(spec.in_types, spec.in_names):
        lines += _tensor_macros(f"{upper}_{n.upper()}", f"argument {n}", t)
    for i, t in enumerate(output_types(spec)):
        lines += _tensor_macros(f"{upper}_OUT{i}", f"output {i}", t)
    lines += [f"{_prototype(spec)};", "",
              f"/* The message of the calling thread's last failed call of {spec.name}() (\"\" after a success). */",
              f"const char *{spec.name}_last_error(void);", "",
              "#ifdef __cplusplus", "}", "#endif", "", f"#endif  /* {guard} */", ""]
    return "\n".join(lines)


def _tensor_macros(prefix, what, t):
    out = [f"/* {what}: {t.dtype.name} {_shape_text(t)} ({C_TYPES[t.dtype.name]}) */",
           f"#define {prefix}_RANK {t.rank}", f"#define {prefix}_SIZE {_elements(t)}"]
    out += [f"#define {prefix}_DIM{i} {d}" for i, d in enumerate(t.shape)]
    return out + [""]


def _descriptor(rank):
    fields = "char *allocated; char *aligned; int64_t offset;"
    if rank:
        fields += f" int64_t sizes[{rank}]; int64_t strides[{rank}];"
    return f"typedef struct {{ {fields} }} tfn_memref{rank};"


def _strides(shape):
    out, stride = [], 1
    for d in reversed(shape):
        out.append(stride)
        stride *= max(d, 1)
    return list(reversed(out))


_SUPPORT = r"""
static __thread char tfn_message[MESSAGE_LEN];

const char *NAME_last_error(void) { return tfn_message; }

static void tfn_put(size_t *n, const char *s) {
  size_t k = strlen(s);
  if (*n + k >= sizeof tfn_message) k = sizeof tfn_message - 1 - *n;
  memcpy(tfn_message + *n, s, k);
  *n += k;
  tfn_message[*n] = 0;
}

static void tfn_num(size_t *n, int64_t v) {
  char text[32];
  snprintf(text, sizeof text, "%lld", (long long)v);
  tfn_put(n, text);
}

/* Copy a result (its strided view) into a dense row-major output buffer. */
static void tfn_copy_out(char *dst, const char *base, int rank, const int64_t *sizes, const int64_t *strides,
                         size_t item) {
  int64_t count = 1, expect = 1;
  int dense = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expect) dense = 0;
    expect *= sizes[i];
    count *= sizes[i];
  }
  if (count == 0) return;
  if (dense) { memcpy(dst, base, (size_t)count * item); return; }
  int64_t index[64] = {0};
  for (int64_t k = 0; k < count; ++k) {
    int64_t at = 0;
    for (int i = 0; i < rank; ++i) at += index[i] * strides[i];
    memcpy(dst + (size_t)k * item, base + (size_t)at * item, item);
    for (int i = rank - 1; i >= 0 && ++index[i] == sizes[i]; --i) index[i] = 0;
  }
}

/* Free a result buffer the compiled code allocated: not a constant, not an argument, not twice. */
static void tfn_release(char *allocated, char *const *args, int n_args, char **freed, int *n_freed) {
  if (allocated == NULL || (uintptr_t)allocated == SENTINEL) return;
  for (int i = 0; i < n_args; ++i) if (args[i] == allocated) return;
  for (int i = 0; i < *n_freed; ++i) if (freed[i] == allocated) return;
  freed[(*n_freed)++] = allocated;
  free(allocated);
}

/* MLIR's runner-utils memrefCopy (CRunnerUtils.cpp), which lowered copies between differently laid out buffers
   call: the library defines it so that it needs no MLIR library at run time. */
typedef struct { int64_t rank; char *descriptor; } tfn_unranked;

void memrefCopy(int64_t item, tfn_unranked *src, tfn_unranked *dst) {
  int64_t rank = src->rank;
  const int64_t *s = (const int64_t *)(src->descriptor + 2 * sizeof(char *));
  const int64_t *d = (const int64_t *)(dst->descriptor + 2 * sizeof(char *));
  char *from = *(char **)(src->descriptor + sizeof(char *)) + s[0] * item;
  char *to = *(char **)(dst->descriptor + sizeof(char *)) + d[0] * item;
  const int64_t *sizes = s + 1, *src_strides = s + 1 + rank, *dst_strides = d + 1 + rank;
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) count *= sizes[i];
  if (count == 0) return;
  int64_t index[64] = {0};
  for (int64_t k = 0; k < count; ++k) {
    int64_t a = 0, b = 0;
    for (int64_t i = 0; i < rank; ++i) { a += index[i] * src_strides[i]; b += index[i] * dst_strides[i]; }
    memcpy(to + b * item, from + a * item, (size_t)item);
    for (int64_t i = rank - 1; i >= 0 && ++index[i] == sizes[i]; --i) index[i] = 0;
  }
}
"""


def wrapper_source(spec):
    """The C source linked into the library: the entry point, its error messages and the support it needs."""
    ranks = sorted({t.rank for t in [*spec.in_types, *spec.out_types]})
    lines = [f"/* The entry point of lib{spec.name}.so (generated by tfn: runtime/aot_c.py). */",
             "#include <stdbool.h>", "#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>",
             "#include <string.h>", ""]
    lines += [_descriptor(r) for r in ranks]
    results = [f"tfn_memref{t.rank} r{i};" for i, t in enumerate(spec.out_types)]
    if results:
        lines.append(f"typedef struct {{ {' '.join(results)} }} tfn_results;")
    params = (["tfn_results *"] if results else []) + [f"tfn_memref{t.rank} *" for t in spec.in_types]
    lines.append(f"extern void _mlir_ciface_{spec.symbol}({', '.join(params) or 'void'});")
    if spec.has_errors:
        lines += [f"extern int32_t *{SLOT_FUNCTIONS[ERROR_FLAG]}(void);",
                  f"extern int64_t *{SLOT_FUNCTIONS[ERROR_DETAIL]}(void);"]
    lines.append(_SUPPORT.replace("MESSAGE_LEN", str(MESSAGE_LEN)).replace("NAME", spec.name)
                 .replace("SENTINEL", hex(_GLOBAL_SENTINEL)))
    if spec.has_errors:
        lines += _describe_source(spec)
    lines += _entry_source(spec)
    return "\n".join(lines) + "\n"


def _describe_source(spec):
    """`int tfn_describe(code, details)`: writes the message of error `code`, returns its TF status code."""
    out = ["static int tfn_describe(int32_t code, const int64_t *d) {", "  size_t n = 0;", "  tfn_message[0] = 0;",
           "  switch (code) {"]
    for code, variants in enumerate(spec.messages, 1):
        out.append(f"  case {code}:")
        for when, status, parts in variants:  # the first whose conditions on the details hold
            body = [f"tfn_put(&n, {c_string(p)});" if isinstance(p, str) else f"tfn_num(&n, d[{p}]);"
                    for p in parts if p != ""]
            body.append(f"return {status};")
            if not when:
                out += [f"    {line}" for line in body]
                break
            out.append(f"    if ({' && '.join(f'd[{i}] == {v}' for i, v in sorted(when.items()))}) {{")
            out += [f"      {line}" for line in body]
            out.append("    }")
    fallback = c_string(f"compiled function '{spec.function_name}' reported an unknown run-time error (code ")
    out += ["  }", f"  tfn_put(&n, {fallback});", "  tfn_num(&n, code);", '  tfn_put(&n, ")");', "  return 13;",
            "}", ""]
    return out


def _entry_source(spec):
    n_in = len(spec.in_types)
    out = []
    for i, r in enumerate(spec.outputs):  # constant outputs: their bytes
        if not isinstance(r, int) and r.size:
            data = r.tobytes()
            rows = [", ".join(f"0x{b:02x}" for b in data[k:k + 16]) for k in range(0, len(data), 16)]
            out += [f"static const unsigned char tfn_const{i}[{len(data)}] = {{", *[f"  {row}," for row in rows], "};"]
    out.append(f"{_prototype(spec)} {{")
    checks = [(n, t) for n, t in zip(spec.in_names, spec.in_types)]
    checks += [(f"out{i}", t) for i, t in enumerate(output_types(spec))]
    for n, t in checks:
        if _elements(t):
            message = c_string(f"{spec.name}: {n} is NULL (it needs {_elements(t)} elements)")
            out += [f"  if ({n} == NULL) {{", "    size_t tfn_n = 0;", "    tfn_message[0] = 0;",
                    f"    tfn_put(&tfn_n, {message});", "    return 3;", "  }"]
    for i, (n, t) in enumerate(zip(spec.in_names, spec.in_types)):
        init = f"(char *){n}, (char *){n}, 0"
        if t.rank:
            init += (" , {" + ", ".join(map(str, t.shape)) + "}, {" + ", ".join(map(str, _strides(t.shape))) + "}")
        out.append(f"  tfn_memref{t.rank} tfn_a{i} = {{{init}}};")
    args = ["&tfn_r"] if spec.out_types else []
    args += [f"&tfn_a{i}" for i in range(n_in)]
    if spec.out_types:
        out.append("  tfn_results tfn_r;")
        out.append("  memset(&tfn_r, 0, sizeof tfn_r);")
    if spec.has_errors:
        out += [f"  int32_t *tfn_flag = {SLOT_FUNCTIONS[ERROR_FLAG]}();", "  *tfn_flag = 0;"]
    out.append(f"  _mlir_ciface_{spec.symbol}({', '.join(args)});")
    out.append("  int32_t tfn_code = " + ("*tfn_flag;" if spec.has_errors else "0;"))
    if spec.has_errors:
        out += [f"  int64_t tfn_details[{DETAIL_LEN}];",
                f"  memcpy(tfn_details, {SLOT_FUNCTIONS[ERROR_DETAIL]}(), sizeof tfn_details);", "  *tfn_flag = 0;"]
    out.append("  if (tfn_code == 0) {")
    for i, r in enumerate(spec.outputs):
        item = f"sizeof(*out{i})"
        if not isinstance(r, int):
            if r.size:
                out.append(f"    memcpy(out{i}, tfn_const{i}, sizeof tfn_const{i});")
            continue
        t = spec.out_types[r]
        if t.rank:
            out.append(f"    tfn_copy_out((char *)out{i}, tfn_r.r{r}.aligned + tfn_r.r{r}.offset * {item}, {t.rank}, "
                       f"tfn_r.r{r}.sizes, tfn_r.r{r}.strides, {item});")
        else:
            out.append(f"    memcpy(out{i}, tfn_r.r{r}.aligned + tfn_r.r{r}.offset * {item}, {item});")
    out.append("  }")
    if spec.out_types:
        arg_list = ", ".join(f"(char *){n}" for n in spec.in_names) or "NULL"
        out += [f"  char *const tfn_args[] = {{{arg_list}}};", f"  char *tfn_freed[{len(spec.out_types)}];",
                "  int tfn_n_freed = 0;"]
        out += [f"  tfn_release(tfn_r.r{i}.allocated, tfn_args, {n_in}, tfn_freed, &tfn_n_freed);"
                for i in range(len(spec.out_types))]
    if spec.has_errors:
        out += ["  if (tfn_code != 0) return tfn_describe(tfn_code, tfn_details);"]
    out += ["  tfn_message[0] = 0;", "  return 0;", "}"]
    return out
