"""The buffer cache of compiled code's large heap blocks (_buffer_cache.c, in runtime/fastcall.py's extension).

A function's temporaries and results of 128 KiB and more are freed into a bounded cache and reused by the next
allocation of about their size, instead of being unmapped and faulted in again on every call. The cache holds at
most `limit()` bytes (by default 1/16 of physical memory, at most 1 GiB; TFN_BUFFER_CACHE_BYTES sets it, 0 turns
caching off). Without the extension (no C compiler, TFN_FASTCALL=0, or while it is built) compiled code uses
malloc and free directly.
"""
import ctypes
import os

from tfn.runtime import fastcall

_READ_ONLY = ctypes.c_size_t(-1).value
_state = {}


def library():
    """The extension's ctypes library with the cache's functions typed, or None (see the module docstring).

    TFN_BUFFER_CACHE_BYTES, when set, is applied the first time it is found."""
    lib = fastcall.c_library()
    if lib is None or _state.get("lib") is lib:
        return lib
    lib.tfn_malloc.restype, lib.tfn_malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    lib.tfn_free.restype, lib.tfn_free.argtypes = None, [ctypes.c_void_p]
    lib.tfn_buffer_cache_limit.restype = ctypes.c_size_t
    lib.tfn_buffer_cache_limit.argtypes = [ctypes.c_size_t]
    lib.tfn_buffer_cache_release.restype, lib.tfn_buffer_cache_release.argtypes = None, []
    lib.tfn_buffer_cache_stats.restype = None
    lib.tfn_buffer_cache_stats.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
    text = os.environ.get("TFN_BUFFER_CACHE_BYTES", "").strip()
    if text:
        try:
            lib.tfn_buffer_cache_limit(max(int(text), 0))
        except ValueError:
            from tfn.dialects.errors import InvalidArgumentError  # start-up cost: only on this bad setting

            raise InvalidArgumentError(f"TFN_BUFFER_CACHE_BYTES must be a byte count, not {text!r}") from None
    _state["lib"] = lib
    return lib


def hooks():
    """(address of tfn_malloc, address of tfn_free) for compiled code's hooks (passes/tfn_cache_large_buffers.py),
    or None without the cache."""
    lib = library()
    if lib is None:
        return None
    return tuple(ctypes.cast(f, ctypes.c_void_p).value for f in (lib.tfn_malloc, lib.tfn_free))


def free_function():
    """The function that frees a buffer compiled code allocated: tfn_free when the cache is loaded (it takes any
    malloc block), else libc's free."""
    lib = library()
    if lib is not None:
        return lib.tfn_free
    libc = ctypes.CDLL(None)
    libc.free.argtypes, libc.free.restype = [ctypes.c_void_p], None
    return libc.free


def stats():
    """{hits, misses, released, blocks, bytes, limit} of the cache, or None without it."""
    lib = library()
    if lib is None:
        return None
    out = (ctypes.c_uint64 * 6)()
    lib.tfn_buffer_cache_stats(out)
    return dict(zip(("hits", "misses", "released", "blocks", "bytes", "limit"), out))


def limit(nbytes=None):
    """The cache's byte limit; with nbytes, set it (blocks past it are released) and return the previous one.
    None without the cache."""
    lib = library()
    if lib is None:
        return None
    if nbytes is not None and (not isinstance(nbytes, int) or nbytes < 0):
        from tfn.dialects.errors import InvalidArgumentError  # start-up cost: only on this bad argument

        raise InvalidArgumentError(f"the buffer cache's limit must be a byte count >= 0, not {nbytes!r}")
    return lib.tfn_buffer_cache_limit(_READ_ONLY if nbytes is None else nbytes)


def release():
    """Give every cached block back to the system."""
    lib = library()
    if lib is not None:
        lib.tfn_buffer_cache_release()
