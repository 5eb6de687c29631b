"""TensorBoard's event files, written without TensorFlow: TFRecord framing around `Event` protocol buffers.

A record is its length (uint64, little-endian), the length's masked CRC-32C, the bytes, and their masked CRC-32C
(the CRC rotated right by 15 bits plus 0xa282ead8). An Event (tensorflow/core/util/event.proto) holds wall_time
(field 1, double), step (2, int64) and either file_version (3, "brain.Event:2", the first record) or a Summary (5):
repeated values (1) of tag (1) and simple_value (2, float), a histogram (5: min, max, num, sum, sum_squares, bucket
limits and counts) or an image (4: height, width, colorspace, PNG bytes); text is a string tensor (8) whose metadata
(9) names the text plugin. Only the fields written here are encoded (varints, doubles, floats, length-delimited).
"""
import os
import socket
import struct
import threading
import time
import zlib

import numpy as np

# --- CRC-32C (Castagnoli), table driven ---------------------------------------------------------------------

def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    """One TFRecord holding `data`."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


# --- protocol buffer fields ---------------------------------------------------------------------------------

def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1  # negative int64s as their two's complement
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def varint_field(field, n):
    return _key(field, 0) + _varint(int(n))


def double_field(field, x):
    return _key(field, 1) + struct.pack("<d", float(x))


def float_field(field, x):
    return _key(field, 5) + struct.pack("<f", float(x))


def bytes_field(field, data):
    data = data.encode() if isinstance(data, str) else bytes(data)
    return _key(field, 2) + _varint(len(data)) + data


def packed_doubles(field, values):
    return bytes_field(field, b"".join(struct.pack("<d", float(v)) for v in values))


def event(step, summary=None, file_version=None, wall_time=None):
    out = double_field(1, time.time() if wall_time is None else wall_time) + varint_field(2, step)
    if file_version is not None:
        out += bytes_field(3, file_version)
    if summary is not None:
        out += bytes_field(5, summary)
    return out


def scalar_value(tag, value):
    return bytes_field(1, bytes_field(1, tag) + float_field(2, value))


def histogram_value(tag, values, buckets):
    values = np.asarray(values, np.float64).ravel()
    if values.size == 0:
        lo = hi = 0.0
        limits, counts = [0.0], [0.0]
    else:
        lo, hi = float(values.min()), float(values.max())
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, buckets + 1)
        counts, _ = np.histogram(values, bins=edges)
        limits = list(edges[1:])
    histo = (double_field(1, lo) + double_field(2, hi) + double_field(3, values.size) + double_field(4, values.sum())
             + double_field(5, float(np.square(values).sum())) + packed_doubles(6, limits)
             + packed_doubles(7, counts))
    return bytes_field(1, bytes_field(1, tag) + bytes_field(5, histo))


def text_value(tag, text):
    """A string tensor (TensorProto: dtype DT_STRING = 7, an empty shape, string_val) with the text plugin."""
    tensor = varint_field(1, 7) + bytes_field(2, b"") + bytes_field(8, text)
    metadata = bytes_field(1, bytes_field(1, "text"))  # SummaryMetadata.plugin_data.plugin_name
    return bytes_field(1, bytes_field(1, tag) + bytes_field(9, metadata) + bytes_field(8, tensor))


def png(image):
    """PNG bytes of a uint8 image [height, width, channels] (1 grey, 3 RGB, 4 RGBA)."""
    h, w, c = image.shape
    colour = {1: 0, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + image[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def image_value(tag, image):
    h, w, c = image.shape
    img = varint_field(1, h) + varint_field(2, w) + varint_field(3, c) + bytes_field(4, png(image))
    return bytes_field(1, bytes_field(1, tag) + bytes_field(4, img))


# --- the file -----------------------------------------------------------------------------------------------

_COUNTER = [0]
_COUNTER_LOCK = threading.Lock()


class EventFile:
    """An events.out.tfevents.* file in `logdir`, opened on the first write, its first record the file version."""

    def __init__(self, logdir, filename_suffix=""):
        self.logdir = os.fspath(logdir)
        with _COUNTER_LOCK:
            _COUNTER[0] += 1
            n = _COUNTER[0]
        self.path = os.path.join(self.logdir, f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}."
                                              f"{os.getpid()}.{n}.v2{filename_suffix}")
        self._file = None
        self._lock = threading.Lock()

    def write(self, data):
        with self._lock:
            if self._file is None:
                os.makedirs(self.logdir, exist_ok=True)
                self._file = open(self.path, "ab")
                self._file.write(record(event(0, file_version="brain.Event:2")))
            self._file.write(record(data))

    def flush(self):
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def close(self):
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def read_records(path):
    """The data of each record of a TFRecord file, both CRCs checked (ValueError on a damaged record)."""
    out = []
    with open(path, "rb") as f:
        blob = f.read()
    i = 0
    while i < len(blob):
        length_bytes = blob[i:i + 8]
        (length,) = struct.unpack("<Q", length_bytes)
        (crc,) = struct.unpack("<I", blob[i + 8:i + 12])
        data = blob[i + 12:i + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[i + 12 + length:i + 16 + length])
        if crc != masked_crc(length_bytes) or data_crc != masked_crc(data):
            raise ValueError(f"{path}: a damaged record at byte {i}")
        out.append(data)
        i += 16 + length
    return out
