"""Input values written in YAML with tags, built into real Python values.

  !array [[1, 2], [3, 4]]              float64 ndarray (or {data:, dtype:})
  !random {shape: [4, 8], seed: 1}     reproducible uniform floats in [low, high)
  !tuple [4096, 128]                   a tuple (YAML has only lists)
  !set [k, v]                          a set
  !symbol n                            a positive sympy Symbol (or {name:, integer:})
  !expr "exp(1/sqrt(2))"               a sympy expression (instructor text only)
  !json models/llama2-7b.json          a JSON file beside the YAML file
"""

import json

import numpy as np

from .errors import CourseError
from .yaml_source import Tagged

TAGS = ("!array", "!random", "!tuple", "!set", "!symbol", "!expr", "!json")


def build(value, path, seed_offset=0):
    """Replace every Tagged value inside ``value`` by what it stands for."""
    if isinstance(value, Tagged):
        return _build_tagged(value, path, seed_offset)
    if isinstance(value, list):
        return [build(v, path, seed_offset) for v in value]
    if isinstance(value, dict):
        return {k: build(v, path, seed_offset) for k, v in value.items()}
    return value


def _build_tagged(tagged, path, seed_offset):
    builder = _BUILDERS.get(tagged.tag)
    if builder is None:
        from .schema import did_you_mean

        raise CourseError(f"unknown tag {tagged.tag}; expected one of {', '.join(TAGS)}",
                          path, tagged.line, did_you_mean(tagged.tag, TAGS))
    try:
        return builder(build(tagged.value, path, seed_offset), path, seed_offset)
    except CourseError:
        raise
    except (TypeError, ValueError, KeyError, OSError) as exc:
        raise CourseError(f"cannot build {tagged.tag} value: {exc}", path, tagged.line,
                          _USAGE[tagged.tag]) from None


def _array(value, path, seed_offset):
    if isinstance(value, dict):
        return np.array(value["data"], dtype=value.get("dtype", "float64"))
    return np.array(value, dtype=float)


def _random(spec, path, seed_offset):
    unknown = set(spec) - {"shape", "seed", "low", "high", "dtype"}
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    rng = np.random.default_rng(int(spec["seed"]) + seed_offset)
    shape = tuple(int(n) for n in spec["shape"])
    values = rng.uniform(float(spec.get("low", -1.0)), float(spec.get("high", 1.0)), shape)
    return values.astype(spec.get("dtype", "float64"))


def _tuple(value, path, seed_offset):
    return tuple(value)


def _set(value, path, seed_offset):
    return set(value)


def _symbol(value, path, seed_offset):
    import sympy

    if isinstance(value, str):
        return sympy.Symbol(value, positive=True)
    flags = {k: value[k] for k in ("positive", "integer", "real") if k in value}
    return sympy.Symbol(value["name"], **({"positive": True} | flags))


def _expr(text, path, seed_offset):
    import sympy

    if not isinstance(text, str):
        raise ValueError("expected the expression as a string")
    return sympy.sympify(text, rational=True)


def _json(name, path, seed_offset):
    target = (path.parent / name).resolve()
    with open(target, encoding="utf-8") as f:
        return json.load(f)


_BUILDERS = {"!array": _array, "!random": _random, "!tuple": _tuple, "!set": _set,
             "!symbol": _symbol, "!expr": _expr, "!json": _json}
_USAGE = {
    "!array": "write !array [[1, 2], [3, 4]] or !array {data: [...], dtype: int64}",
    "!random": "write !random {shape: [4, 8], seed: 1, low: -1, high: 1}",
    "!tuple": "write !tuple [4096, 128]",
    "!set": "write !set [k, v]",
    "!symbol": "write !symbol n or !symbol {name: n, integer: true}",
    "!expr": 'write !expr "exp(1/sqrt(2))"',
    "!json": "write !json path/to/file.json, relative to this YAML file",
}
