"""Generate the IRDL module of the `tfn` dialect from the op table."""
from tfn.dialects.optable import OPS


def _op_irdl(opdef):
    lines = [f"  irdl.operation @{opdef.name} {{"]
    operands, results, attrs = [], [], []
    n = 0
    for name in opdef.operands:
        # One constraint value per operand: IRDL binds a constraint to one type wherever it is used.
        lines.append(f'    %c{n} = irdl.base "!builtin.tensor"')
        if name.startswith("*"):
            operands.append(f"{name[1:]}: variadic %c{n}")
        else:
            operands.append(f"{name}: %c{n}")
        n += 1
    result_count = 1 if opdef.results == "*" else opdef.results
    for i in range(result_count):
        lines.append(f'    %c{n} = irdl.base "!builtin.tensor"')
        results.append(f"{'outs: variadic' if opdef.results == '*' else f'out{i}:'} %c{n}")
        n += 1
    for name in opdef.attrs:
        lines.append(f"    %c{n} = irdl.any")
        attrs.append(f'"{name}" = %c{n}')
        n += 1
    if operands:
        lines.append(f"    irdl.operands({', '.join(operands)})")
    if results:
        lines.append(f"    irdl.results({', '.join(results)})")
    if attrs:
        lines.append(f"    irdl.attributes {{{', '.join(attrs)}}}")
    lines.append("  }")
    return "\n".join(lines)


def generate():
    """The IRDL source of the whole dialect: its types and one irdl.operation per table entry."""
    body = ["  irdl.type @string {\n  }"] + [_op_irdl(OPS[name]) for name in sorted(OPS)]
    return "irdl.dialect @tfn {\n" + "\n".join(body) + "\n}\n"
