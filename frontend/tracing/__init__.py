"""tfn.function: trace types, polymorphic and concrete functions, and their compiled code."""
