"""State: tfn.Variable, tfn.init_scope and tfn.Module."""
