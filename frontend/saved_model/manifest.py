"""The folder a saved model is: its manifest (format, versions, target, what each file holds, the SHA-256 of every
file) and reading those files back checked.

    manifest.json          this folder's description (JSON), written last
    manifest.json.sha256   the manifest's own SHA-256
    variables/<i>.npy      each variable's value
    constants/<i>.npy      large tensors a function closed over (inputs of its compiled code, as variables are)
    functions/<i>.mlirbc   each concrete function's traced IR (tfn dialect, MLIR bytecode, with source locations)
    functions/<i>.so       its native code, built for the target the manifest names
"""
import hashlib
import json
import os
import re

from tfn.dialects.errors import DataLossError, NotFoundError
from tfn.runtime import stored
from tfn.runtime.cachedir import write_atomic

FORMAT = "tfn.saved_model"
VERSION = 1  # the layout and manifest schema this tfn writes and reads
MANIFEST = "manifest.json"
MANIFEST_HASH = MANIFEST + ".sha256"
_MANIFEST_MAX = 64 << 20
_FILE_NAME = re.compile(r"(variables|constants)/\d+\.npy|functions/\d+\.(mlirbc|so)")


def write(export_dir, files, manifest):
    """Write `files` ({relative path: bytes}) into export_dir, then the manifest naming each file's SHA-256."""
    os.makedirs(export_dir, exist_ok=True)
    digests = {}
    for rel, data in files.items():
        os.makedirs(os.path.join(export_dir, os.path.dirname(rel)), exist_ok=True)
        _write(export_dir, rel, data)
        digests[rel] = hashlib.sha256(data).hexdigest()
    manifest = dict(manifest, format=FORMAT, version=VERSION, files=digests)
    text = json.dumps(manifest, indent=1, sort_keys=True).encode()
    _write(export_dir, MANIFEST, text)
    _write(export_dir, MANIFEST_HASH, hashlib.sha256(text).hexdigest().encode() + b"\n")


def _write(folder, rel, data):
    """Write by rename: a reader sees the old file or the new one, never part of one."""
    write_atomic(os.path.join(folder, os.path.dirname(rel)), os.path.basename(rel), data)


def read(export_dir):
    """The manifest of the saved model in export_dir, checked against its hash and its format version.

    OSError when there is no saved model there; DataLossError when the manifest is damaged; ValueError when it
    was written in a format this tfn does not read."""
    path = os.path.join(export_dir, MANIFEST)
    if not os.path.isdir(export_dir) or not os.path.lexists(path):
        raise OSError(f"SavedModel file does not exist at: {path}")
    try:
        digest = stored.read_checked(os.path.join(export_dir, MANIFEST_HASH), None, 256)
    except stored.StoredFileError as e:
        raise _error(export_dir, e) from None
    try:
        text = stored.read_checked(path, digest.decode("ascii", "replace").strip(), _MANIFEST_MAX)
        manifest = json.loads(text)
    except stored.StoredFileError as e:
        raise _error(export_dir, e) from None
    except ValueError as e:
        raise DataLossError(f"the saved model at {export_dir} is damaged: {MANIFEST} is not valid JSON ({e})") \
            from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{path} is not a tfn saved model manifest (format {FORMAT!r} expected)")
    version = manifest.get("version")
    if version != VERSION:
        raise ValueError(f"the saved model at {export_dir} has format version {version!r}; this tfn reads version "
                         f"{VERSION} (it was written by tfn {manifest.get('tfn_version', '?')}): save it again with "
                         "this tfn")
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise DataLossError(f"the saved model at {export_dir} is damaged: its manifest lists no files")
    foreign = sorted(str(rel) for rel in files if not isinstance(rel, str) or not _FILE_NAME.fullmatch(rel))
    if foreign:  # never a path outside the folder (`../`, absolute) nor a name this format does not write
        raise DataLossError(f"the saved model at {export_dir} is damaged: its manifest names files it cannot hold: "
                            f"{', '.join(foreign[:3])}")
    return manifest


def read_file(export_dir, manifest, rel):
    """The bytes of file `rel` of the saved model, checked against the SHA-256 its manifest names."""
    digest = manifest["files"].get(rel)
    if digest is None:
        raise DataLossError(f"the saved model at {export_dir} is damaged: its manifest names no hash for {rel}")
    try:
        return stored.read_checked(os.path.join(export_dir, rel), digest)
    except stored.StoredFileError as e:
        raise _error(export_dir, e) from None


def _error(export_dir, e):
    rel = os.path.relpath(e.path, export_dir)
    if e.kind == "missing":
        return NotFoundError(f"the saved model at {export_dir} is incomplete: {rel} is missing")
    return DataLossError(f"the saved model at {export_dir} is damaged: {rel} {e.reason}")
