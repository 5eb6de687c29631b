"""Control flow on tensors while tracing: an `if` becomes one scf.if (cond.py), a `while` one scf.while
(while_loop.py, with loop_state.py); values.py flattens the values they carry into tensors, pending.py holds
values a later assignment defines, statement.py what both ops need at every step (graph, user line, state).

The public forms are `tfn.cond` / `tfn.while_loop` (tfn.ops.control_flow) and AutoGraph's operators, which
call `build_if` / `build_while`.
"""
