"""The artifact cache trusts no one: a folder others may write is refused, an entry is loaded from the descriptor
it was verified through, a planted or odd file is a miss (never a hang), the key names the host, memos are hashed,
and the folder's size is capped with least-recently-used eviction."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tfn
from tfn.runtime import cache, cachedir, toolchain


def _artifacts(folder):
    return sorted(p for p in folder.glob("*.so") if not p.name.startswith("fastcall-"))


def _compile_once(body=7.0):
    f = tfn.function(lambda x: x * body - 1.0)
    return f(tfn.constant([1.0])).numpy().tolist()


def test_the_folder_is_created_private(tmp_path, monkeypatch):
    folder = tmp_path / "new" / "cache"
    monkeypatch.setenv("TFN_CACHE_DIR", str(folder))
    assert _compile_once() == [6.0]
    assert folder.stat().st_mode & 0o777 == 0o700
    assert len(_artifacts(folder)) == 1


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_folder_others_may_write_is_refused_with_one_warning(tmp_path, monkeypatch, mode):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    monkeypatch.setenv("TFN_CACHE_DIR", str(folder))
    with pytest.warns(RuntimeWarning, match="others may write to it"):
        assert cache.cache_dir() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: the second look is silent
        assert cache.cache_dir() is None
        assert _compile_once(3.0) == [2.0]
    assert list(folder.iterdir()) == []  # nothing was written there


def test_a_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    try:
        os.chown(folder, 65534, 65534)
    except PermissionError:
        pytest.skip("changing a folder's owner needs root; the mode checks above still run")
    monkeypatch.setenv("TFN_CACHE_DIR", str(folder))
    with pytest.warns(RuntimeWarning, match="belongs to another user"):
        assert cache.cache_dir() is None


def _one_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    assert _compile_once() == [6.0]
    (so,) = _artifacts(tmp_path)
    artifact = cache.lookup(so.stem)
    assert artifact is not None and artifact.name == str(so)
    artifact.close()
    return so


def _replace(so, make):
    so.unlink()
    make(so)


@pytest.mark.parametrize("kind", ["fifo", "dev_zero_link", "link_to_valid_copy", "writable_by_others", "huge"])
def test_odd_entries_are_misses_never_hangs(tmp_path, monkeypatch, kind):
    so = _one_entry(tmp_path, monkeypatch)
    content = so.read_bytes()
    if kind == "fifo":
        _replace(so, os.mkfifo)
    elif kind == "dev_zero_link":
        _replace(so, lambda p: p.symlink_to("/dev/zero"))
    elif kind == "link_to_valid_copy":  # the right bytes, but through a link: not followed
        (tmp_path / "copy").write_bytes(content)
        _replace(so, lambda p: p.symlink_to(tmp_path / "copy"))
    elif kind == "writable_by_others":  # what another user could have changed after it was hashed
        so.chmod(0o666)
    else:
        monkeypatch.setattr(cache, "ARTIFACT_MAX_BYTES", len(content) - 1)
    assert cache.lookup(so.stem) is None
    # A new process finds the entry unusable, rebuilds it and gets the right answer, within seconds.
    code = "import tfn\nprint(tfn.function(lambda x: x * 7.0 - 1.0)(tfn.constant([1.0])).numpy().tolist())\n"
    if kind == "huge":
        return
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, TFN_CACHE_DIR=str(tmp_path)))
    assert out.returncode == 0 and out.stdout == "[6.0]\n", out.stderr
    assert so.is_file() and not so.is_symlink() and so.read_bytes() == content


def test_an_entry_of_another_user_is_a_miss(tmp_path, monkeypatch):
    """A planted library with a matching hash, owned by someone else: never loaded (its constructor never runs)."""
    so = _one_entry(tmp_path, monkeypatch)
    try:
        os.chown(so, 65534, 65534)
        os.chown(so.with_suffix(".sha256"), 65534, 65534)
    except PermissionError:
        pytest.skip("changing a file's owner needs root; the mode and link checks above still run")
    assert cache.lookup(so.stem) is None


def test_what_is_loaded_is_what_was_hashed(tmp_path, monkeypatch):
    """The entry is replaced after lookup verified it (a race once open-by-path): the verified bytes load."""
    so = _one_entry(tmp_path, monkeypatch)
    artifact = cache.lookup(so.stem)
    good = so.read_bytes()
    (tmp_path / "other").write_bytes(b"\x7fELF not a library")
    os.replace(tmp_path / "other", so)
    with artifact:
        with open(artifact.path, "rb") as f:
            assert f.read() == good
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".load-")]  # its load name is gone


def test_the_key_names_the_host(monkeypatch):
    assert cache.host() and cache.host().startswith(sys.platform)
    k = cache.key("module {}", "p")
    monkeypatch.setattr(cache, "host", lambda: "linux-x86_64;avx512f")
    assert cache.key("module {}", "p") != k


def test_memos_carry_their_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    cachedir.write_memo("m", '["/bin/ld", "/lib/libgcc.a"]')
    assert cachedir.read_memo("m") == '["/bin/ld", "/lib/libgcc.a"]'
    path = tmp_path / "m.memo"
    digest = path.read_bytes().partition(b"\n")[0]
    path.write_bytes(digest + b'\n["/tmp/evil", "/lib/libgcc.a"]')  # pointed elsewhere, hash not updated
    assert cachedir.read_memo("m") is None
    path.unlink()
    os.symlink("/dev/zero", path)
    assert cachedir.read_memo("m") is None


def test_a_planted_linker_memo_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    stamp = toolchain._link_stamp(toolchain.linker())
    if stamp is None:
        pytest.skip("no C compiler on PATH: there is no linker memo")
    (tmp_path / (stamp + ".memo")).write_text('["/tmp/evil-ld", "/tmp/evil-libgcc.a"]')
    assert toolchain._lean_linker(toolchain.linker()) != ("/tmp/evil-ld", "/tmp/evil-libgcc.a")


def _fake_entry(folder, k, size, used):
    (folder / (k + ".so")).write_bytes(b"x" * size)
    sig = folder / (k + ".sha256")
    sig.write_text("0" * 64)
    os.utime(sig, ns=(used, used))


def test_least_recently_used_entries_are_evicted_first(tmp_path):
    for k, used in (("a", 1), ("b", 3), ("c", 2)):
        _fake_entry(tmp_path, k, 100, used * 10**9)
    assert cache._evict(str(tmp_path), 250) == 200
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.sha256", "b.so", "c.sha256", "c.so"]
    assert cache._evict(str(tmp_path), 100) == 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.sha256", "b.so"]


def test_the_cache_stays_under_its_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_sizes", {})
    monkeypatch.setenv("TFN_CACHE_MAX_BYTES", "1")
    for body in (2.0, 3.0, 4.0):  # each store evicts down to the cap, its own entry included once loaded
        f = tfn.function(lambda x, body=body: x * body)
        assert f(tfn.constant(np.ones(2, np.float32))).numpy().tolist() == [body, body]
    assert sum(p.stat().st_size for p in tmp_path.glob("*.so")) <= 1
    monkeypatch.setenv("TFN_CACHE_MAX_BYTES", "not a number")
    assert cache.max_bytes() == cache.DEFAULT_MAX_BYTES
