"""tfn.summary: event files TensorBoard reads (TFRecord framing with CRC-32C, Event protos), written eagerly and from
inside tfn.functions when they run; nothing is written without a default writer. (The files were also read back by
TensorFlow 2.21's TFRecordDataset and event_pb2 when this was written.)"""
import glob
import os
import struct

import numpy as np
import pytest

import tfn as tf
from tfn.summary import events


def _fields(data):
    """{field number: [values]} of a protobuf message (varints as ints, 64/32-bit as bytes, length-delimited as
    bytes)."""
    out, i = {}, 0
    while i < len(data):
        key, i = _varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            n, i = _varint(data, i)
            value, i = data[i:i + n], i + n
        out.setdefault(field, []).append(value)
    return out


def _varint(data, i):
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


def _summaries(logdir):
    """[(step, tag, kind, value)] of every summary value in the logdir's event files."""
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    records = events.read_records(path)
    assert _fields(records[0])[3] == [b"brain.Event:2"]
    out = []
    for rec in records[1:]:
        ev = _fields(rec)
        for value in _fields(ev[5][0])[1]:
            v = _fields(value)
            tag = v[1][0].decode()
            if 2 in v:
                out.append((ev[2][0], tag, "scalar", struct.unpack("<f", v[2][0])[0]))
            elif 5 in v:
                out.append((ev[2][0], tag, "histogram", struct.unpack("<d", _fields(v[5][0])[3][0])[0]))
            elif 4 in v:
                img = _fields(v[4][0])
                out.append((ev[2][0], tag, "image", (img[1][0], img[2][0], img[4][0][:8])))
            else:
                out.append((ev[2][0], tag, "text", _fields(v[8][0])[8][0]))
    return out


def test_scalars_histograms_text_and_images(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        for step in range(3):
            assert tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
        tf.summary.histogram("weights", np.arange(1000.0), step=2)
        tf.summary.text("note", "hello", step=0)
        tf.summary.image("img", np.zeros((1, 4, 5, 3), np.float32), step=1)
    writer.close()
    got = _summaries(tmp_path)
    assert got[:3] == [(0, "loss", "scalar", 1.0), (1, "loss", "scalar", 0.5),
                       (2, "loss", "scalar", pytest.approx(1 / 3))]
    assert got[3] == (2, "weights", "histogram", 1000.0)
    assert got[4] == (0, "note", "text", b"hello")
    assert got[5] == (1, "img", "image", (4, 5, b"\x89PNG\r\n\x1a\n"))


def test_summaries_inside_a_function_are_written_when_it_runs(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    step = tf.Variable(0, dtype=tf.int64)
    tf.summary.experimental.set_step(step)

    @tf.function
    def train(x):
        tf.summary.scalar("sum", tf.reduce_sum(x))
        step.assign_add(1)
        return x * 2

    try:
        with writer.as_default():
            for values in ([1.0, 2.0], [3.0, 4.0]):
                train(tf.constant(values))
    finally:
        tf.summary.experimental.set_step(None)
    writer.close()
    assert _summaries(tmp_path) == [(0, "sum", "scalar", 3.0), (1, "sum", "scalar", 7.0)]


def test_nothing_is_written_without_a_writer_or_under_record_if_false(tmp_path):
    assert tf.summary.scalar("x", 1.0, step=0) is False
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(), tf.summary.record_if(False):
        assert tf.summary.scalar("x", 1.0, step=0) is False
    assert glob.glob(os.path.join(tmp_path, "events*")) == []  # opened on the first write only
    with writer.as_default():
        with pytest.raises(ValueError, match="no step was given"):
            tf.summary.scalar("x", 1.0)


def test_records_are_checked_when_read(tmp_path):
    path = tmp_path / "r"
    path.write_bytes(events.record(b"abc") + events.record(b"defg"))
    assert events.read_records(str(path)) == [b"abc", b"defg"]
    data = bytearray(path.read_bytes())
    data[13] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged record"):
        events.read_records(str(path))
    assert events.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
