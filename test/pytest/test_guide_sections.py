"""The guide's programs, written once in examples/sections/: each section prints what its expected output in
guide_output/ holds (regenerate with `python test/pytest/guide.py` and review the diff), and the README's main
job, examples/walkthrough.py, runs them all."""
import os
import re
import subprocess
import sys

import guide
import pytest


@pytest.mark.parametrize("name", guide.sections())
def test_section_prints_its_expected_output(name):
    assert guide.run(name).output == guide.expected(name)


def test_every_section_has_an_expected_output_and_the_walkthrough_runs_every_section():
    expected = sorted(n[:-4] + ".py" for n in os.listdir(guide.EXPECTED_DIR) if n.endswith(".txt"))
    assert expected == guide.sections()
    with open(guide.WALKTHROUGH) as f:
        source = f.read()
    assert [n for n in guide.sections() if f'"{n}"' not in source] == []


def _titles(text):
    """The section titles of printed output: the line after each `====` rule that opens a section."""
    return re.findall(r"^=+\n(.+)\n=+$", text, re.M)


def test_the_walkthrough_runs_and_prints_every_section():
    proc = subprocess.run([sys.executable, guide.WALKTHROUGH], capture_output=True, text=True, timeout=300,
                          cwd=guide.REPO)
    assert proc.returncode == 0, proc.stderr
    out = guide.normalise(proc.stdout)
    assert "Traceback" not in proc.stderr
    titles = _titles(out)
    for name in guide.sections():
        for title in _titles(guide.expected(name)):
            assert title in titles, f"{name}: {title}"
    assert "Basics / Speed: many small ops run faster as one compiled function" in titles
    assert re.search(r"^Function small ops: \d+\.\d+(e-\d+)?$", out, re.M)
    assert "Same answer: True" in out
    assert re.search(r"^Function conv: \d+\.\d+(e-\d+)?$", out, re.M)
    assert "fizzbuzz" in proc.stderr  # tf.print writes to stderr
