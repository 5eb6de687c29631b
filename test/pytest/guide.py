"""Runs the guide's programs of `examples/sections/` in this process, once each, for the tests that check them.

`run(name)` gives a section's printed output (stdout and stderr in the order written, with what varies from run
to run normalised) and its module namespace, so a test can assert more about the objects a program made without
writing the program again."""
import contextlib
import functools
import io
import os
import re
import runpy
import sys
import warnings
from types import SimpleNamespace

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECTIONS_DIR = os.path.join(REPO, "examples", "sections")
EXPECTED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guide_output")
WALKTHROUGH = os.path.join(REPO, "examples", "walkthrough.py")

# What varies from run to run: object ids (FuncGraph ids, the ids naming captures), variable alias ids (a
# process-wide counter) and addresses. (Timings are printed by the walkthrough only.)
_VARYING = [
    (re.compile(r"\bid=\d+"), "id=<id>"),
    (re.compile(r"^(\s+)\d{6,}:", re.M), r"\1<id>:"),
    (re.compile(r"\balias_id=\d+"), "alias_id=<n>"),
    (re.compile(r"\b0x[0-9a-f]{6,}\b"), "0x<address>"),
]


def sections():
    """The section files, in name order (common.py is their shared helper, not a section)."""
    return sorted(n for n in os.listdir(SECTIONS_DIR) if n.endswith(".py") and n != "common.py")


def normalise(text):
    """`text` with the repository's path made relative and what varies from run to run replaced by a marker."""
    text = text.replace(REPO + os.sep, "")
    for pattern, marker in _VARYING:
        text = pattern.sub(marker, text)
    return text


def _show_warning(out):
    def show(message, category, filename, lineno, file=None, line=None):
        out.write(f"{category.__name__}: {message}\n")
    return show


@functools.cache
def run(name):
    """SimpleNamespace(output, namespace) of the section file `name`, run here as `__main__` (once per process)."""
    out = io.StringIO()
    sys.path.insert(0, SECTIONS_DIR)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = _show_warning(out)
            namespace = runpy.run_path(os.path.join(SECTIONS_DIR, name), run_name="__main__")
    finally:
        sys.path.remove(SECTIONS_DIR)
    return SimpleNamespace(output=normalise(out.getvalue()), namespace=namespace)


def expected(name):
    """The output the section `name` must print (test/pytest/guide_output/<name without .py>.txt)."""
    with open(os.path.join(EXPECTED_DIR, name[:-3] + ".txt")) as f:
        return f.read()


def update():
    """Rewrite every expected output from a run of its section (review the diff before committing it)."""
    for name in sections():
        with open(os.path.join(EXPECTED_DIR, name[:-3] + ".txt"), "w") as f:
            f.write(run(name).output)
        print("wrote", name[:-3] + ".txt")


if __name__ == "__main__":
    update()
