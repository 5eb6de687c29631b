"""Every package folder is listed in pyproject.toml, mapped onto its tfn.* name."""
import os
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _config():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def test_every_package_folder_is_packaged():
    cfg = _config()["tool"]["setuptools"]
    dirs = {v.rstrip("/"): k for k, v in cfg["package-dir"].items()}
    found = set()
    for top in ("frontend", "dialects", "passes", "runtime", "tools"):
        for here, _subdirs, files in os.walk(os.path.join(ROOT, top)):
            if "__init__.py" in files and "__pycache__" not in here:
                found.add(os.path.relpath(here, ROOT))
    missing = sorted(d for d in found if d not in dirs or dirs[d] not in cfg["packages"])
    assert not missing, f"package folders missing from pyproject.toml: {missing}"


def test_dependencies_pinned_to_one_llvm_release():
    deps = _config()["project"]["dependencies"]
    pins = [d for d in deps if d.startswith("xtc-")]
    assert len(pins) == 3 and all("==22.1.8" in d for d in pins), pins


def test_console_script():
    assert _config()["project"]["scripts"]["tfn-opt"] == "tfn.tools.tfn_opt:main"
