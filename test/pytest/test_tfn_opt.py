"""tfn-opt: exit codes and messages of the CLI, the diagnostics verifier, and lit coverage of ops and passes."""
import os
import re
import subprocess
import sys

import pytest

from tfn.dialects import ops
from tfn.dialects.optable import OPS
from tfn.passes.pipelines import PIPELINES
from tfn.passes.registry import all_passes
from tfn.tools import diagnostics
from tfn.tools.tfn_opt import main, pass_element, split_chunks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIT_PASSES = os.path.join(ROOT, "test", "lit", "passes")

GOOD = """func.func @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "tfn.exp"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
"""
MALFORMED = """func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tfn.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<3xf32>
}
"""
BAD_TYPES = """func.func @f(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  %0 = "tfn.add"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


def tfn_opt(*args, stdin=None):
    """Run tfn-opt in a fresh process; returns (exit status, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def write(tmp_path):
    def write(text, name="input.mlir"):
        path = tmp_path / name
        path.write_text(text)
        return str(path)
    return write


def test_malformed_input_reports_file_line_and_exits_1(write):
    path = write(MALFORMED)
    rc, out, err = tfn_opt(path)
    assert rc == 1 and out == ""
    assert f"{path}:3:10: error: use of value '%0' expects different type" in err
    assert f"{path}:2:3: note: prior use here" in err
    assert "Traceback" not in err


def test_malformed_stdin_is_named_stdin():
    rc, _, err = tfn_opt(stdin=MALFORMED)
    assert rc == 1 and "<stdin>:3:10: error:" in err and "Traceback" not in err


@pytest.mark.parametrize("data", [b"\xff\xfe", b'func.func @f() attributes {a = "\xff"} { return }'])
def test_stdin_that_is_not_utf8_is_an_error_not_a_traceback(data):
    """Read through the locale's text stream, bytes that are not UTF-8 became surrogates, and printing the
    diagnostic's source line raised UnicodeEncodeError (a traceback); stdin is read as a file is."""
    proc = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", "-"], input=data, capture_output=True,
                          timeout=120, env={**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0"})
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1 and "could not open input file '-'" in err and "Traceback" not in err, err


def test_type_rule_violation_exits_1(write):
    rc, out, err = tfn_opt(write(BAD_TYPES), "--tfn-to-linalg")
    assert rc == 1 and out == ""
    assert re.search(r"input\.mlir:2:8: error: 'tfn\.add' op cannot compute AddV2 as input #1", err)


def test_unknown_pass_exits_1_with_clear_message(write):
    rc, out, err = tfn_opt(write(GOOD), "--no-such-pass")
    assert rc == 1 and out == ""
    assert "tfn-opt: error: unknown pass or pipeline 'no-such-pass'" in err
    assert "Traceback" not in err


def test_help_lists_every_tfn_pass_and_pipeline():
    rc, out, _ = tfn_opt("--help")
    assert rc == 0
    for entry in list(all_passes().values()) + list(PIPELINES.values()):
        assert re.search(rf"--{re.escape(entry.name)} +{re.escape(entry.summary)}", out), entry.name


def test_passes_run_in_order_and_output_file(write, tmp_path, capsys):
    out_path = tmp_path / "out.mlir"
    assert main([write(GOOD), "--tfn-to-linalg", "--canonicalize", "-o", str(out_path)]) == 0
    text = out_path.read_text()
    assert "math.exp" in text and "tfn." not in text
    assert capsys.readouterr().out == ""


def test_pass_pipeline_option(write, capsys):
    assert main([write(GOOD), "-p", "builtin.module(tfn-lower-to-linalg, tfn-bufferize)"]) == 0
    assert "memref.alloc" in capsys.readouterr().out


def test_usage_errors_exit_1(write, capsys):
    with pytest.raises(SystemExit) as e:
        main([write(GOOD), "-p", "canonicalize", "--cse"])
    assert e.value.code == 1
    assert "cannot be used with individual pass flags" in capsys.readouterr().err


def test_missing_input_file(tmp_path, capsys):
    assert main([str(tmp_path / "nope.mlir")]) == 1
    assert "could not open input file" in capsys.readouterr().err


def test_split_input_file_keeps_original_line_numbers(write, capsys):
    path = write(GOOD + "// -----\n" + BAD_TYPES + "// -----\n" + GOOD)
    assert main([path, "--split-input-file"]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("func.func @f") == 2 and captured.out.count("// -----") == 1
    assert f"{path}:7:8: error: 'tfn.add' op" in captured.err


def test_python_error_in_a_pass_is_a_diagnostic_not_a_traceback(write, capsys, monkeypatch):
    from tfn.passes import tfn_to_linalg  # noqa: F401  (registers the patterns)
    from tfn.passes.lowering.common import PATTERNS

    def broken(rw):
        raise KeyError("boom")
    monkeypatch.setitem(PATTERNS, ops.exp, broken)
    assert main([write(GOOD), "--tfn-to-linalg"]) == 1
    err = capsys.readouterr().err
    assert "error: internal error: KeyError: 'boom'" in err and "Traceback" not in err


def test_verify_diagnostics_pass_and_fail(write, capsys):
    expected = BAD_TYPES.replace("  %0 = ", "  // expected-error @+1 {{cannot compute Add}}\n  %0 = ")
    assert main([write(expected), "--verify-diagnostics"]) == 0
    wrong = expected.replace("cannot compute Add", "something else")
    assert main([write(wrong), "--verify-diagnostics"]) == 1
    err = capsys.readouterr().err
    assert 'expected error "something else" was not produced' in err
    assert "unexpected error: 'tfn.add' op cannot compute Add" in err


def test_expected_designators():
    lines = ["a", "// expected-error @+2 {{two}}", "b", "c", "// expected-note @above {{up}}",
             "// expected-warning @below {{down}}", "d", "// expected-remark @unknown {{nowhere}}",
             "// expected-error-re {{x{{[0-9]+}}y}}"]
    got = [(e.kind, e.line, e.text) for e in diagnostics.parse_expected(lines, 10)]
    assert got == [("error", 13, "two"), ("note", 13, "up"), ("warning", 16, "down"),
                   ("remark", 0, "nowhere"), ("error", 18, "x{{[0-9]+}}y")]
    assert diagnostics.parse_expected(lines, 10)[-1].match("a x42y b")


def test_split_chunks_and_pass_elements():
    assert split_chunks("a\n// -----\nb\nc", True) == [(1, ["a"]), (3, ["b", "c"])]
    assert split_chunks("a\n// -----\nb", False) == [(1, ["a", "// -----", "b"])]
    assert pass_element("--canonicalize") == "canonicalize"
    assert pass_element("--one-shot-bufferize=bufferize-function-boundaries") == \
        "one-shot-bufferize{bufferize-function-boundaries}"


def test_every_op_is_covered_by_the_tfn_to_linalg_lit_test():
    with open(os.path.join(LIT_PASSES, "tfn_to_linalg.mlir")) as f:
        text = f.read()
    missing = sorted(name for name in OPS if f'"tfn.{name}"(' not in text)
    assert not missing, f"ops without a case in test/lit/passes/tfn_to_linalg.mlir: {missing}"


def test_every_pass_and_pipeline_has_a_lit_test_named_like_it():
    names = list(all_passes()) + list(PIPELINES)
    missing = [n for n in names if not os.path.exists(os.path.join(LIT_PASSES, n.replace("-", "_") + ".mlir"))]
    assert not missing, f"passes/pipelines without test/lit/passes/<name>.mlir: {missing}"


def test_aliases_in_front_of_an_implicit_module(write):
    """Attribute and type aliases at the top of a file of bare ops stay outside the implicit module (they may not
    be inside one), and diagnostics keep the file's own line numbers."""
    text = ("#map = affine_map<(d0) -> (d0)>\n// a comment\n!t = tensor<4xf32>\n"
            "func.func @f(%a: !t) -> !t {\n  %0 = \"tfn.exp\"(%a) : (!t) -> !t\n  return %0 : !t\n}\n")
    rc, out, err = tfn_opt(write(text))
    assert rc == 0, err
    assert "tfn.exp" in out and "tensor<4xf32>" in out
    rc, out, err = tfn_opt(write(text.replace("return %0 : !t", "return %0 : tensor<3xf32>")))
    assert rc == 1 and ":6:10: error: use of value '%0' expects different type" in err
