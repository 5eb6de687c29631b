"""tfn.train.Checkpoint and CheckpointManager: a model and its optimizer saved mid-training and restored into fresh
objects train on identically; the manager keeps the newest checkpoints and finds them again; mismatches and damaged
files are errors naming what is wrong."""
import os

import numpy as np
import pytest

import tfn as tf

RNG = np.random.default_rng(2)
X = RNG.random((8, 3)).astype(np.float32)
Y = RNG.random((8, 2)).astype(np.float32)


def _model_and_step():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(2)])
    model(np.zeros((1, 3), np.float32))
    opt = tf.keras.optimizers.Adam(0.01)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(X) - Y) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    return model, opt, step


def test_a_restored_model_and_optimizer_train_on_as_the_saved_ones(tmp_path):
    model, opt, step = _model_and_step()
    step()
    step()
    path = tf.train.Checkpoint(model=model, optimizer=opt).save(tmp_path / "ckpt")
    assert path == str(tmp_path / "ckpt-1") and tf.train.latest_checkpoint(tmp_path) == path
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index"]
    saved = [v.numpy().copy() for v in model.weights]
    next_losses = [float(step()) for _ in range(3)]

    model2, opt2, step2 = _model_and_step()  # fresh: its optimizer has no slots yet
    status = tf.train.Checkpoint(model=model2, optimizer=opt2).restore(path)
    status.assert_consumed()
    for a, b in zip(saved, model2.weights):
        np.testing.assert_array_equal(a, b.numpy())
    assert int(opt2.iterations.numpy()) == 2
    assert [float(step2()) for _ in range(3)] == next_losses  # Adam's moments came back too


def test_list_variables_and_the_reader(tmp_path):
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    module = tf.Module()
    module.weights_list = [tf.Variable(1.5), v]
    prefix = tf.train.Checkpoint(net=module).write(str(tmp_path / "w"))
    assert prefix == str(tmp_path / "w") and tf.train.latest_checkpoint(tmp_path) is None  # write records nothing
    assert tf.train.list_variables(prefix) == [("net/weights_list/0", []), ("net/weights_list/1", [2, 3]),
                                               ("save_counter", [])]
    reader = tf.train.load_checkpoint(prefix)
    np.testing.assert_array_equal(reader.get_tensor("net/weights_list/1"), v.numpy())
    assert reader.get_variable_to_shape_map()["net/weights_list/1"] == [2, 3]
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found"):
        reader.get_tensor("nope")


def test_mismatches_are_reported(tmp_path):
    small = tf.Module()
    small.w = tf.Variable(np.zeros((2, 2), np.float32))
    prefix = tf.train.Checkpoint(m=small).write(str(tmp_path / "s"))
    other = tf.Module()
    other.w = tf.Variable(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"incompatible tensor with shape \[2, 2\] when attempting to restore "
                                         r"variable with shape \[3, 2\] and name m/w"):
        tf.train.Checkpoint(m=other).restore(prefix)
    extra = tf.Module()
    extra.w = tf.Variable(np.ones((2, 2), np.float32))
    extra.b = tf.Variable(5.0)
    status = tf.train.Checkpoint(m=extra).restore(prefix)
    np.testing.assert_array_equal(extra.w.numpy(), np.zeros((2, 2)))  # what matched is restored
    with pytest.raises(AssertionError, match=r"no value in the checkpoint: \['m/b'\]"):
        status.assert_consumed()
    status.expect_partial()
    with pytest.raises(ValueError, match="was expecting a trackable object"):
        tf.train.Checkpoint(m=3)


def test_damaged_or_missing_files(tmp_path):
    m = tf.Module()
    m.w = tf.Variable(1.0)
    prefix = tf.train.Checkpoint(m=m).write(str(tmp_path / "c"))
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.Checkpoint(m=m).restore(str(tmp_path / "missing"))
    with open(prefix + ".index", "w") as f:
        f.write("{ not json")
    with pytest.raises(tf.errors.DataLossError, match="Unable to read the checkpoint index"):
        tf.train.Checkpoint(m=m).restore(prefix)
    assert m.w.numpy() == 1.0  # nothing assigned


def test_the_manager_keeps_the_newest_and_a_new_one_finds_them(tmp_path):
    m = tf.Module()
    m.w = tf.Variable(0.0)
    ckpt = tf.train.Checkpoint(m=m)
    manager = tf.train.CheckpointManager(ckpt, tmp_path, max_to_keep=2)
    assert manager.restore_or_initialize() is None
    for i in range(1, 4):
        m.w.assign(float(i))
        assert manager.save() == str(tmp_path / f"ckpt-{i}")
    assert manager.checkpoints == [str(tmp_path / "ckpt-2"), str(tmp_path / "ckpt-3")]
    assert not os.path.exists(tmp_path / "ckpt-1.index")
    m.w.assign(4.0)
    assert manager.save(checkpoint_number=10) == str(tmp_path / "ckpt-10")
    again = tf.train.CheckpointManager(tf.train.Checkpoint(m=m), tmp_path, max_to_keep=2)
    assert again.checkpoints == [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-10")]
    m.w.assign(-1.0)
    assert again.restore_or_initialize() == str(tmp_path / "ckpt-10") and m.w.numpy() == 4.0
