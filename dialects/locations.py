"""Source positions: the user's `(file, line, col)` of a Python frame or inside an MLIR location, and the excerpt
of the user's code that error messages end with (the position, the source line and a caret under the column).

Columns are 1-based and count UTF-8 bytes, as MLIR's and Python's own column offsets do; the caret is placed
under the character that column starts.
"""
import linecache


def file_location(loc):
    """The first `(file, line, col)` inside a location (through name, call-site and fused locations), or None."""
    if loc.is_a_file():
        return loc.filename, loc.start_line, loc.start_col
    if loc.is_a_name():
        return file_location(loc.child_loc)
    if loc.is_a_callsite():
        return file_location(loc.callee)
    if loc.is_a_fused():
        for child in loc.locations:
            if found := file_location(child):
                return found
    return None


def frame_position(frame):
    """`(file, line, col)` of the expression a Python frame is executing (col 1 when Python kept no column)."""
    code = frame.f_code
    positions = _POSITIONS.get(code)
    if positions is None:
        if len(_POSITIONS) >= _POSITIONS_KEPT:
            _POSITIONS.clear()
        positions = _POSITIONS[code] = list(code.co_positions())
    # One entry per 2-byte code unit; f_lasti is the byte offset of the instruction running now.
    index = frame.f_lasti // 2
    found = positions[index] if 0 <= index < len(positions) else None
    if found is None or found[0] is None or found[2] is None:
        return code.co_filename, frame.f_lineno, 1
    return code.co_filename, found[0], found[2] + 1


# code object -> its co_positions() as a list: a trace asks once per op, mostly of the same few frames, and
# walking the generator each time would make tracing a long straight-line function quadratic.
_POSITIONS = {}
_POSITIONS_KEPT = 64


def show_source(text, col, indent=""):
    """One source line and a caret under its 1-based byte column `col`, as two lines prefixed by `indent`."""
    text = text.rstrip("\r\n")
    before = text.encode()[:max(col - 1, 0)].decode("utf-8", "replace")
    pad = "".join(c if c == "\t" else " " for c in before)  # tabs stay tabs so the caret lines up
    return f"{indent}{text}\n{indent}{pad}^"


def excerpt(where):
    """The user's code at `where = (file, line, col)`: `  file:line:col:`, the source line without its
    indentation and a caret under the column; "" when the source line cannot be read."""
    file, line, col = where
    text = linecache.getline(file, line) if file and line > 0 else ""
    body = text.strip()
    if not body:
        return ""
    cut = len(text.encode()) - len(text.lstrip().encode())
    return f"  {file}:{line}:{col}:\n" + show_source(body, col - cut, "    ")


def with_excerpt(message, where):
    """`message` followed by the excerpt of the user's code at `where`; unchanged when there is none (no
    position, no source) or the message already shows it (an error re-raised with more context)."""
    shown = excerpt(where) if where is not None else ""
    return message if not shown or shown in message else f"{message}\n{shown}"
