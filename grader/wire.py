"""Plain-data wire format between the grader and the student process.

Both sides import this one module: the child gets a copy beside its runner,
because the course root (and so the ``grader`` package) is out of its reach.
It therefore imports nothing from ``grader``.

Values become JSON: numbers, strings, bools, None and lists as themselves;
everything else as a tagged object ``{"$t": tag, ...}``.  Decoding builds
only the types listed here (sympy nodes from a fixed whitelist), so the
trusted side never unpickles, evals or calls anything the child chose.
"""

import base64
import decimal
import json
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

ARRAY_KINDS = "biufc"
MAX_NODES = 200_000
MAX_SYMPY_NODES = 5_000
SYMPY_FUNCTIONS = (
    "Add", "Mul", "Pow", "exp", "log", "sin", "cos", "tan", "tanh", "sinh",
    "cosh", "atan", "Abs", "Max", "Min", "floor", "ceiling", "sign",
    "factorial", "binomial", "Heaviside",
)
SYMPY_CONSTANTS = ("Pi", "Exp1", "ImaginaryUnit", "Infinity",
                   "NegativeInfinity", "ComplexInfinity", "NaN")
SYMBOL_ASSUMPTIONS = ("positive", "negative", "nonnegative", "integer", "real")
# the argument counts sympy takes (one, for a function not listed; any for these four):
# a lazy read, which builds nothing, refuses what building would
ARITY = {"Pow": (2,), "binomial": (2,), "log": (1, 2), "Heaviside": (1, 2),
         "Add": None, "Mul": None, "Max": None, "Min": None}


class WireError(Exception):
    """A value cannot cross the boundary; ``type_name`` names the culprit."""

    def __init__(self, message, type_name=None, where=""):
        super().__init__(message)
        self.type_name = type_name
        self.where = where


# ---------------------------------------------------------------- encoding

def encode(value: Any, _where: str = "answer", _budget: list[int] | None = None) -> Any:
    """Turn a value into JSON-able plain data, or raise WireError."""
    budget = _budget if _budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError("too many nested values", where=_where)
    kind = type(value)
    if value is None or kind in (bool, str):
        return value
    if kind is int:
        return value if abs(value) < 2 ** 53 else {"$t": "int", "v": str(value)}
    if kind is float:
        return _encode_float(value)
    if kind is complex:
        return {"$t": "complex", "re": _encode_float(value.real),
                "im": _encode_float(value.imag)}
    if kind is decimal.Decimal:   # exact as a fraction; NaN and inf as floats
        return encode(Fraction(value) if value.is_finite() else float(value), _where, budget)
    if kind is Fraction:
        return {"$t": "frac", "n": str(value.numerator), "d": str(value.denominator)}
    if kind is list:
        return [encode(v, f"{_where}[{i}]", budget) for i, v in enumerate(value)]
    if kind is tuple:
        return {"$t": "tuple", "items": [encode(v, f"{_where}[{i}]", budget)
                                         for i, v in enumerate(value)]}
    if kind in (set, frozenset):
        items = [encode(v, f"{_where} item", budget) for v in value]
        return {"$t": "set", "items": sorted(items, key=json.dumps)}
    if kind is dict:
        return {"$t": "dict", "items": [[encode(k, f"{_where} key", budget),
                                         encode(v, f"{_where}[{k!r}]", budget)]
                                        for k, v in value.items()]}
    if kind is np.ndarray:
        return _encode_array(value, _where)
    if kind is Lazy:
        return {"$t": "sympy", "tree": value.tree}
    if isinstance(value, np.generic) and type(value).__module__ == "numpy":
        return _encode_numpy_scalar(value, _where, budget)
    if _is_sympy(value):
        return {"$t": "sympy", "tree": _encode_sympy(value, _where, [MAX_SYMPY_NODES])}
    raise WireError(f"unsupported type {kind.__name__}", kind.__name__, _where)


def _encode_float(x):
    if math.isfinite(x):
        return x
    return {"$t": "float", "v": "nan" if x != x else ("inf" if x > 0 else "-inf")}


def _encode_array(arr, where):
    if arr.dtype.kind not in ARRAY_KINDS or arr.dtype.hasobject:
        raise WireError(f"array of dtype {arr.dtype}", f"ndarray[{arr.dtype}]", where)
    data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False)
    return {"$t": "nd", "dtype": data.dtype.str, "shape": list(arr.shape),
            "b64": base64.b64encode(data.tobytes()).decode("ascii")}


def _encode_numpy_scalar(value, where, budget):
    if value.dtype.kind not in ARRAY_KINDS:
        raise WireError(f"numpy scalar of dtype {value.dtype}", type(value).__name__, where)
    return encode(value.item(), where, budget)


def _is_sympy(value):
    module = type(value).__module__ or ""
    return module.startswith("sympy.") and hasattr(value, "func") and hasattr(value, "args")


def _encode_sympy(expr, where, budget):
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError("sympy expression too large", "sympy expression", where)
    if expr.is_Symbol:
        assumptions = {k: True for k in SYMBOL_ASSUMPTIONS if expr.assumptions0.get(k)}
        return ["Symbol", str(expr.name), assumptions]
    if expr.is_Integer:
        return ["Integer", str(int(expr))]
    if expr.is_Rational:
        return ["Rational", str(int(expr.p)), str(int(expr.q))]
    if expr.is_Float:
        return ["Float", str(expr), int(expr._prec)]
    name = type(expr).__name__
    if name in SYMPY_CONSTANTS:
        return [name]
    name = getattr(expr.func, "__name__", name)
    if name not in SYMPY_FUNCTIONS:
        raise WireError(f"sympy {name} is not accepted", f"sympy {name}", where)
    return [name] + [_encode_sympy(a, where, budget) for a in expr.args]


# ---------------------------------------------------------------- lazy sympy

NONFINITE = ("NaN", "ComplexInfinity", "Infinity", "NegativeInfinity")


class Lazy:
    """A sympy value kept as its checked tree (see ``decode(lazy=True)``).

    sympy costs a quarter of a second to import; the grader's side needs it only
    to compare formulas that are not the same tree, or to show one.  Two equal
    trees decode to the same expression.  Never built from unchecked data.
    """

    __slots__ = ("text", "_value")

    def __init__(self, tree: Any):
        self.text = json.dumps(tree, separators=(",", ":"), ensure_ascii=True)
        self._value: Any = None

    @property
    def tree(self) -> Any:
        return json.loads(self.text)

    def value(self) -> Any:
        """The sympy object (imports sympy)."""
        if self._value is None:
            self._value = _sympy_node(self.tree, [MAX_SYMPY_NODES])
        return self._value

    def finite(self) -> bool:
        """Whether the tree has no NaN or infinity in it (those never compare equal)."""
        return not any(f'["{name}"]' in self.text for name in NONFINITE)

    def __eq__(self, other: object) -> bool:
        return self.text == other.text if type(other) is Lazy else NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)

    def __reduce__(self):
        return Lazy, (self.tree,)

    def __str__(self) -> str:
        tree = self.tree
        return tree[1] if tree[0] == "Symbol" else str(self.value())

    __repr__ = __str__


def symbolic(value: Any) -> bool:
    """Whether ``value`` is a sympy object, or one kept as its tree (a Lazy)."""
    return type(value) is Lazy or (type(value).__module__ or "").startswith("sympy")


def materialized(value: Any, read: Callable[[Lazy], Any] = Lazy.value) -> Any:
    """``value`` with every Lazy in it (at any depth of lists, tuples, dicts and sets)
    replaced by ``read`` of it (its sympy object); the same object when it holds none."""
    kind = type(value)
    if kind is Lazy:
        return read(value)
    if kind in (list, tuple, set, frozenset):
        items = [materialized(v, read) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else kind(items)
    if kind is dict:
        pairs = [(materialized(k, read), materialized(v, read)) for k, v in value.items()]
        changed = any(a is not k or b is not v for (a, b), (k, v) in zip(pairs, value.items()))
        return dict(pairs) if changed else value
    return value


# ---------------------------------------------------------------- decoding

def decode(data: Any, lazy: bool = False) -> Any:
    """Rebuild a value from plain data; anything unexpected raises WireError.

    ``lazy``: sympy values become checked ``Lazy`` trees, so that reading an answer
    does not import sympy (the grader's side; see ``Lazy``).
    """
    try:
        return _decode(data, None, lazy)
    except WireError:
        raise
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        raise WireError(f"unreadable data ({type(exc).__name__})") from None


def _decode(data, _budget=None, lazy=False):
    budget = _budget if _budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError("too many nested values")
    if data is None or type(data) in (bool, str, int):
        return data
    if type(data) is float:
        return data
    if type(data) is list:
        return [_decode(v, budget, lazy) for v in data]
    if type(data) is not dict:
        raise WireError(f"unexpected JSON value {type(data).__name__}")
    tag = data.get("$t")
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise WireError(f"unknown tag {tag!r}")
    return decoder(data, budget, lazy)


def _field(data, key, kind):
    value = data.get(key)
    if type(value) is not kind:
        raise WireError(f"field {key!r} should be {kind.__name__}")
    return value


def _decode_int(data, budget, lazy):
    text = _field(data, "v", str)
    if len(text) > 4000:
        raise WireError("integer too long")
    return int(text)


def _decode_float(data, budget, lazy):
    text = _field(data, "v", str)
    if text not in ("nan", "inf", "-inf"):
        raise WireError("bad float")
    return float(text)


def _decode_complex(data, budget, lazy):
    return complex(_as_float(_decode(data.get("re"), budget)),
                   _as_float(_decode(data.get("im"), budget)))


def _as_float(value):
    if type(value) not in (int, float):
        raise WireError("complex parts must be numbers")
    try:
        return float(value)
    except OverflowError:
        raise WireError("complex part out of range") from None


def _decode_frac(data, budget, lazy):
    n, d = _field(data, "n", str), _field(data, "d", str)
    if len(n) > 4000 or len(d) > 4000:
        raise WireError("fraction too long")
    if d.strip("+-0") == "":
        raise WireError("fraction with denominator 0")
    return Fraction(int(n), int(d))


def _decode_tuple(data, budget, lazy):
    return tuple(_decode(v, budget, lazy) for v in _field(data, "items", list))


def _decode_set(data, budget, lazy):
    items = [_decode(v, budget, lazy) for v in _field(data, "items", list)]
    try:
        _spread(items)
        return set(items)
    except TypeError:
        raise WireError("set items must be hashable") from None


def _decode_dict(data, budget, lazy):
    pairs = []
    for pair in _field(data, "items", list):
        if type(pair) is not list or len(pair) != 2:
            raise WireError("dict items must be pairs")
        pairs.append((_decode(pair[0], budget, lazy), _decode(pair[1], budget, lazy)))
    try:
        _spread([key for key, _ in pairs])
        return dict(pairs)
    except TypeError:
        raise WireError("dict keys must be hashable") from None


# items of a set, or keys of a dict, that share their hash with another, at most: ints
# are not hashed at random (i * (2**61 - 1) all hash alike), and a set of n of them is
# built in n**2 steps (40,000: 10 s of the grader's own process)
MAX_SHARED_HASH = 1000


def _spread(keys):
    """Refuse ``keys`` (TypeError: unhashable) when many share a hash."""
    if len(keys) - len({hash(key) for key in keys}) > MAX_SHARED_HASH:
        raise WireError("too many set items or dict keys of one hash")


def _decode_array(data, budget, lazy):
    dtype = np.dtype(_field(data, "dtype", str))
    if dtype.kind not in ARRAY_KINDS or dtype.hasobject:
        raise WireError(f"array dtype {dtype} not accepted")
    shape = _field(data, "shape", list)
    if not all(type(n) is int and n >= 0 for n in shape) or len(shape) > 32:
        raise WireError("bad array shape")
    raw = base64.b64decode(_field(data, "b64", str), validate=True)
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise WireError("array data does not match its shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def _decode_sympy(data, budget, lazy):
    tree = data.get("tree")
    if lazy:
        _sympy_node(tree, [MAX_SYMPY_NODES], build=False)
        return Lazy(tree)
    return _sympy_node(tree, [MAX_SYMPY_NODES])


def _sympy_node(node, budget, build=True):
    """The sympy object of a tree; with ``build`` False, only the checks (no sympy)."""
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError("sympy expression too large")
    if type(node) is not list or not node or type(node[0]) is not str:
        raise WireError("bad sympy node")
    head, args = node[0], node[1:]
    if head == "Symbol":
        return _sympy_symbol(args, build)
    if head in ("Integer", "Rational"):
        numbers = _digits(args, 1 if head == "Integer" else 2)
    elif head == "Float":
        return _sympy_float(args, build)
    elif head in SYMPY_CONSTANTS:
        numbers = []
    elif head in SYMPY_FUNCTIONS:
        if len(args) not in (ARITY.get(head, (1,)) or (len(args),)):
            raise WireError(f"sympy {head} with {len(args)} arguments")
        children = [_sympy_node(a, budget, build) for a in args]
    else:
        raise WireError(f"sympy {head} is not accepted")
    if not build:
        return None
    import sympy

    if head in ("Integer", "Rational"):
        return getattr(sympy, head)(*numbers)
    if head in SYMPY_CONSTANTS:
        return getattr(sympy.S, head)
    return getattr(sympy, head)(*children, evaluate=False)


def _sympy_symbol(args, build):
    if len(args) != 2 or type(args[0]) is not str or type(args[1]) is not dict:
        raise WireError("bad sympy symbol")
    if not args[0].isidentifier() or len(args[0]) > 64:
        raise WireError("bad sympy symbol name")
    if not build:
        return None
    import sympy

    flags = {k: True for k in SYMBOL_ASSUMPTIONS if args[1].get(k) is True}
    return sympy.Symbol(args[0], **flags)


def _digits(args, count):
    if len(args) != count or not all(type(a) is str and len(a) < 4000 for a in args):
        raise WireError("bad sympy number")
    try:
        return [int(a) for a in args]
    except ValueError:
        raise WireError("bad sympy number") from None


def _sympy_float(args, build):
    if len(args) != 2 or type(args[0]) is not str or type(args[1]) is not int:
        raise WireError("bad sympy float")
    try:
        number = float(args[0])
    except ValueError:
        raise WireError("bad sympy float") from None
    if not build:
        return None
    import sympy

    return sympy.Float(number)


_DECODERS = {
    "int": _decode_int, "float": _decode_float, "complex": _decode_complex,
    "frac": _decode_frac, "tuple": _decode_tuple, "set": _decode_set,
    "dict": _decode_dict, "nd": _decode_array, "sympy": _decode_sympy,
}


def digest(*encoded: Any) -> str:
    """A fingerprint of encoded values, to tell whether inputs changed during a call."""
    import hashlib

    text = json.dumps(encoded, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def loads(text: str | bytes, lazy: bool = False) -> Any:
    """Parse wire JSON text; malformed or hostile text raises WireError."""
    try:
        return decode(json.loads(text), lazy)
    except WireError:
        raise
    except (ValueError, RecursionError, TypeError, ArithmeticError) as exc:
        raise WireError(f"unreadable data ({type(exc).__name__})") from None


def dumps(value: Any) -> str:
    """Encode a value to wire JSON text."""
    return json.dumps(encode(value), allow_nan=False, separators=(",", ":"))
