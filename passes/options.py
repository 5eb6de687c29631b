"""Declared options of tfn passes, parsed from pipeline text (`tfn-parallelize{workers=4}`) as upstream MLIR does.

An option has a name as written in pipeline text, a help line, a default computed from the target
(passes/target.py) and an optional check of its value; every option so far is an integer. An unknown option or a
bad value is an OptionError (a ValueError) in upstream's words, naming the pass and the option.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Option:
    name: str              # as written in pipeline text: `vector-bits`
    help: str
    default: object        # fn(Target) -> the value when the pipeline does not give one
    check: object = None   # fn(value) -> None, or the text saying what a valid value is
    signed: bool = False   # whether negative values are meaningful (shown as <int> rather than <uint>)

    @property
    def keyword(self):
        """The pass function's keyword argument: the name with `_` for `-`."""
        return self.name.replace("-", "_")

    def usage(self):
        """`name=<uint>` as tfn-opt --help shows it."""
        return f"{self.name}=<int>" if self.signed else f"{self.name}=<uint>"


def positive(value):
    return None if value >= 1 else "a positive integer"


def power_of_two(value):
    return None if value >= 1 and value & (value - 1) == 0 else "a power of two"


def one_of(*choices):
    def check(value):
        return None if value in choices else "one of " + ", ".join(map(str, choices))
    return check


# Options several passes share: the machine facts (defaults from the target)
WORKERS = Option("workers", "worker threads a big kernel is split across (default: the cores available)",
                 lambda t: t.cores, positive)
# A big kernel is cut into more tasks than there are workers: the calling thread and the async runtime's pool
# threads take them one at a time from a shared counter (tfn-async-parallel), so a thread held up by another process
# leaves its share to the others instead of the whole call waiting for it (a static two-way split waits for the
# slower half).
TASKS_PER_WORKER = Option("tasks-per-worker", "parallel tasks per worker thread a big kernel is cut into (default: "
                          "4, dynamic load balance; 1 = one static part per worker)", lambda t: 4, positive)
VECTOR_BITS = Option("vector-bits", "width of a vector register in bits (default: the target's)",
                     lambda t: t.vector_bits, one_of(128, 256, 512))
VECTOR_REGISTERS = Option("vector-registers", "number of vector registers (default: the target's)",
                          lambda t: t.vector_registers, one_of(16, 32))
LANES = Option("lanes", "f32 lanes of one vector op, four registers' worth (default: 4 x vector-bits / 32)",
               lambda t: 4 * t.vector_bits // 32, power_of_two)
# tfn-to-linalg verifies the tfn ops it lowers (tfn-opt may run it alone); a pipeline where tfn-verify ran just
# before says verify=0 (the second check of a 1,000-op function cost ~40 ms).
VERIFY = Option("verify", "1: verify the tfn ops first; 0: tfn-verify ran just before (default: 1)", lambda t: 1,
                one_of(0, 1))


class OptionError(ValueError):
    """A pass was given an unknown option or a bad value."""


def _words(text):
    """Split option text at spaces outside braces and quotes (upstream's `a=1 b={x y} c="p q"`)."""
    words, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch.isspace() and depth == 0:
            if cur:
                words.append(cur)
            cur = ""
            continue
        cur += ch
    return words + [cur] if cur else words


def _value(option, text):
    """The option's value written as text; a ValueError saying what is wrong with it (the pass not named)."""
    if text is None:
        raise ValueError(f"for the --{option.name} option: requires a value!")
    text = text.strip("\"'")
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"for the --{option.name} option: '{text}' value invalid for uint argument!") from None
    problem = option.check(value) if option.check else None
    if problem:
        raise ValueError(f"for the --{option.name} option: '{text}' is not {problem}")
    return value


def parse(pass_name, text, declared):
    """{keyword: value} of the options `text` gives pass `pass_name` (declared: its Options); a later repeat wins."""
    by_name = {o.name: o for o in declared}
    values = {}
    for word in _words(text):
        name, eq, raw = word.partition("=")
        option = by_name.get(name)
        try:
            if option is None:
                raise ValueError(f"no such option {name}")
            values[option.keyword] = _value(option, raw if eq else None)
        except ValueError as e:
            raise OptionError(f"<Pass-Options-Parser>: {e}\n\nfailed to add `{pass_name}` with options `{text}`") \
                from None
    return values


def resolve(declared, values, target):
    """Every declared option's value: the given ones, else the target's defaults."""
    return {o.keyword: values[o.keyword] if o.keyword in values else o.default(target) for o in declared}


def render(declared, values):
    """Option text naming every declared option's value in `values` (keywords), in declaration order."""
    return " ".join(f"{o.name}={values[o.keyword]}" for o in declared)


def split_element(element):
    """(name, option text) of one pipeline element `name{options}` (text '' when it has none)."""
    name, _, rest = element.partition("{")
    return name.strip(), rest.rsplit("}", 1)[0].strip() if rest else ""
