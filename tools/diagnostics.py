"""MLIR diagnostics for tfn-opt: capture, print like mlir-opt, and check `expected-*` annotations."""
import re
from dataclasses import dataclass, field

from mlir import ir

from tfn.dialects.locations import file_location, show_source

SEVERITY = {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
            ir.DiagnosticSeverity.NOTE: "note", ir.DiagnosticSeverity.REMARK: "remark"}

# The note MLIR's verifier attaches to every error; mlir-opt turns it off under --verify-diagnostics.
CURRENT_OP_NOTE = "see current operation:"


@dataclass
class Diag:
    """One diagnostic copied out of MLIR (MLIR's own objects die with their callback)."""

    severity: str
    message: str
    file: str | None
    line: int
    col: int
    loc_text: str
    notes: list = field(default_factory=list)


def copy(diag):
    """A Diag from an ir.Diagnostic or ir.DiagnosticInfo, notes included."""
    where = file_location(diag.location) or (None, 0, 0)
    return Diag(SEVERITY.get(diag.severity, "error"), str(diag.message), *where, str(diag.location),
                [copy(n) for n in diag.notes])


class Collector:
    """Gathers every diagnostic the context emits outside an MLIRError capture."""

    def __init__(self, ctx):
        self.diags = []
        self.handle = ctx.attach_diagnostic_handler(self._on_diag)

    def _on_diag(self, diag):
        self.diags.append(copy(diag))
        return True

    def take(self):
        out, self.diags = self.diags, []
        return out

    def detach(self):
        self.handle.detach()


def render(diag, sources):
    """mlir-opt's text for a diagnostic: `file:line:col: severity: message`, the source line and a caret."""
    out = []
    for d, kind in [(diag, diag.severity)] + [(n, n.severity) for n in diag.notes]:
        if d.file is None:
            where = "<unknown>:0" if d.loc_text == "loc(unknown)" else d.loc_text
            out.append(f"{where}: {kind}: {d.message}")
            continue
        out.append(f"{d.file}:{d.line}:{d.col}: {kind}: {d.message}")
        lines = sources.get(d.file)
        if lines and 0 < d.line <= len(lines):
            out.append(show_source(lines[d.line - 1], d.col))
    return "\n".join(out)


EXPECTED = re.compile(r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *"
                      r"\{\{(.*)\}\}$")


@dataclass
class Expected:
    """One `expected-<kind>` annotation: the line it applies to (0 = unknown location) and its text."""

    kind: str
    line: int
    text: str
    pattern: object
    written_at: int
    col: int
    matched: bool = False

    def match(self, message):
        return bool(self.pattern.search(message)) if self.pattern else self.text in message


def _regex(text):
    """The regex of an `expected-*-re` text: `{{re}}` parts are regexes, the rest is literal."""
    parts = re.split(r"\{\{(.*?)\}\}", text)
    return re.compile("".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def parse_expected(lines, first_line):
    """The annotations in `lines`, numbered from `first_line` (mlir-opt's rules for @+N, @-N, @above, @below)."""
    found, below, last_plain = [], [], first_line - 1
    for i, raw in enumerate(lines):
        lineno = first_line + i
        m = EXPECTED.search(raw.rstrip())
        if not m:
            for e in below:
                e.line = lineno
            below, last_plain = [], lineno
            continue
        kind, is_re, _, offset, text = m.groups()
        e = Expected(kind, lineno, text, _regex(text) if is_re else None, lineno, m.start() + 1)
        if offset is None:
            pass
        elif offset[0] in "+-":
            e.line += int(offset)
        elif offset == "unknown":
            e.line = 0
        elif offset == "above":
            e.line = last_plain
        else:
            e.line = first_line + len(lines)
            below.append(e)
        found.append(e)
    return found


def check(expected, diags, name):
    """Match diagnostics against annotations; returns mlir-opt style failure messages (empty when all agree)."""
    failures = []
    for d in diags:
        for one in [d] + [n for n in d.notes if not n.message.startswith(CURRENT_OP_NOTE)]:
            failures += _match_one(expected, one, name)
    for e in expected:
        if not e.matched:
            failures.append(f'{name}:{e.written_at}:{e.col}: error: expected {e.kind} "{e.text}" was not produced')
    return failures


def _match_one(expected, d, name):
    line = 0 if d.file is None else d.line if d.file == name else -1
    near = None
    for e in expected:
        if e.line != line or not e.match(d.message):
            continue
        if e.kind == d.severity:
            e.matched = True
            return []
        near = e
    if near:
        return [f"{name}:{near.written_at}:{near.col}: error: '{d.severity}' diagnostic emitted "
                f"when expecting a '{near.kind}'"]
    where = f"{d.file}:{d.line}:{d.col}" if d.file is not None else "<unknown>:0"
    return [f"{where}: error: unexpected {d.severity}: {d.message}"]
