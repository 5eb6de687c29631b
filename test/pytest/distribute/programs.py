"""Programs the distribute tests run under `mpiexec -n 2` (and in one process): `python programs.py MODE OUT`."""
import sys

import numpy as np

import tfn


def model(kind):
    tfn.random.set_seed(3)
    if kind == "cnn":
        layers = [tfn.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
                  tfn.keras.layers.Flatten(), tfn.keras.layers.Dense(10)]
    else:
        layers = [tfn.keras.layers.Dense(16, activation="relu", input_shape=(12,)), tfn.keras.layers.Dense(10)]
    m = tfn.keras.Sequential(layers)
    m.compile(optimizer=tfn.keras.optimizers.SGD(0.1),
              loss=tfn.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def data(kind):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 8, 8, 1) if kind == "cnn" else (100, 12)).astype(np.float32)
    y = rng.integers(0, 10, 100).astype(np.int32)
    return x, y


def train(kind, out):
    """fit under the strategy's scope (or without one, in one process); each rank saves its weights and losses."""
    if tfn.distribute.MultiWorkerMirroredStrategy().num_replicas_in_sync > 1 or "--strategy" in sys.argv:
        strategy = tfn.distribute.MultiWorkerMirroredStrategy()
        with strategy.scope():
            m = model(kind)
        rank = strategy.rank
    else:
        m, rank = model(kind), 0
    x, y = data(kind)
    history = m.fit(x, y, batch_size=25, epochs=2, verbose=0)  # 100 rows: 4 global batches of 25 (13 + 12 rows)
    from tfn.runtime import shared_allreduce

    np.savez(f"{out}.{rank}.npz", loss=np.array(history.history["loss"]),
             **{f"w{i}": w.numpy() for i, w in enumerate(m.weights)})
    np.save(f"{out}.{rank}.shared.npy", np.array(shared_allreduce.stats()))  # (tried, done) shared-memory sums
    if rank == 0:
        step = m._steps["train_step"]
        print(step.experimental_get_compiler_ir(*[tfn.constant(a[:13]) for a in data(kind)])("tfn"))


def custom_loop(out):
    """strategy.run / reduce / replica context / distributed dataset, eagerly and in a tfn.function."""
    strategy = tfn.distribute.MultiWorkerMirroredStrategy()
    r, n = strategy.rank, strategy.num_replicas_in_sync
    with strategy.scope():
        v = tfn.Variable(np.full(3, 10.0 * (r + 1), np.float32))  # replica 0's value everywhere
    x = tfn.constant(np.arange(6, dtype=np.float32).reshape(2, 3) + r)

    def step(x):
        ctx = tfn.distribute.get_replica_context()
        return ctx.all_reduce(tfn.distribute.ReduceOp.SUM, x), ctx.all_reduce("MEAN", {"a": x * 2.0})["a"]

    eager = strategy.run(step, (x,))
    compiled = strategy.run(tfn.function(step), (x,))
    # broadcast / all_gather move bit patterns: -0.0 and NaN arrive as sent
    from tfn.ops.collective_ops import all_gather, broadcast

    z = tfn.constant(np.array([-0.0, np.nan, 1.5 * (r + 1)], np.float32))
    exchange = tfn.function(lambda z: (broadcast(z, 1), all_gather(tfn.reshape(z, [1, 3]))))
    bits = {f"compiled_{k}": v.numpy() for k, v in zip(("bcast", "gather"), exchange(z))}
    bits.update(eager_bcast=broadcast(z, 1).numpy(), eager_gather=all_gather(tfn.reshape(z, [1, 3])).numpy())
    # the compiled all-reduce sums in place: an argument and a temporary read again afterwards keep their values
    from tfn.ops.collective_ops import all_reduce

    def reread(x):
        y = x * 3.0
        return all_reduce(y), all_reduce(x), y + 0.0, x + 0.0
    bits.update({f"reread_{k}": t.numpy() for k, t in zip(("sum3", "sum", "y", "x"), tfn.function(reread)(x))})
    ds = tfn.data.Dataset.from_tensor_slices(np.arange(20, dtype=np.float32).reshape(10, 2)).batch(5)
    shards = [s.numpy().tolist() for s in strategy.experimental_distribute_dataset(ds)]
    np.savez(f"{out}.{r}.npz", v=v.numpy(), eager_sum=eager[0].numpy(), eager_mean=eager[1].numpy(),
             compiled_sum=compiled[0].numpy(), compiled_mean=compiled[1].numpy(),
             reduce_sum=strategy.reduce("SUM", x, axis=None).numpy(),
             reduce_mean0=strategy.reduce(tfn.distribute.ReduceOp.MEAN, x, axis=0).numpy(),
             n=np.array(n), shards=np.array(shards, dtype=object), **bits)


def mismatch(out):
    """Replicas all-reduce tensors of different shapes, compiled and eagerly: both report it."""
    strategy = tfn.distribute.MultiWorkerMirroredStrategy()
    x = tfn.constant(np.ones(3 + strategy.rank, np.float32))
    ctx = tfn.distribute.ReplicaContext(strategy)
    with open(f"{out}.{strategy.rank}.txt", "w") as f:  # one file per replica: their stdout lines interleave
        for how, fn in (("compiled", tfn.function(lambda x: ctx.all_reduce("SUM", x))),
                        ("eager", lambda x: ctx.all_reduce("SUM", x))):
            try:
                fn(x)
            except tfn.errors.InvalidArgumentError as e:
                f.write(f"{how}: {e}\n")


def fail(how):
    """Replica 1 fails (raises, dies, hangs) before the first collective; replica 0 waits in it."""
    strategy = tfn.distribute.MultiWorkerMirroredStrategy(collective_timeout=5 if how == "hang" else None)
    if strategy.rank == 1:
        if how == "raise":
            raise RuntimeError("replica 1 cannot read its data")
        if how == "hang":
            import time

            time.sleep(600)
        import os

        os._exit(3)
    step = tfn.function(lambda x: tfn.distribute.get_replica_context().all_reduce("SUM", x))
    strategy.run(step, (tfn.constant(np.ones(4, np.float32)),))
    print("replica 0 finished: not expected", flush=True)


def constant(out):
    """A compiled all-reduce of a constant that differs by replica: each replica saves what the call returned."""
    strategy = tfn.distribute.MultiWorkerMirroredStrategy()
    value = np.array([strategy.rank + 1.0], np.float32)
    ctx = tfn.distribute.ReplicaContext(strategy)
    step = tfn.function(lambda: ctx.all_reduce("SUM", tfn.constant(value)))
    np.save(f"{out}.{strategy.rank}.npy", step().numpy())


if __name__ == "__main__":
    mode, out = sys.argv[1], sys.argv[2]
    if mode in ("mlp", "cnn"):
        train(mode, out)
    elif mode == "custom":
        custom_loop(out)
    elif mode == "mismatch":
        mismatch(out)
    elif mode == "constant":
        constant(out)
    else:
        fail(mode)
