"""Reverse-mode differentiation: `tfn.GradientTape`, the gradient registry, `stop_gradient`, `custom_gradient`."""
