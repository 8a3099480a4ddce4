"""Input values written in YAML with tags, built into real Python values.

  !array [[1, 2], [3, 4]]              float64 ndarray (or {data:, dtype:})
  !random {shape: [4, 8], seed: 1}     reproducible uniform floats in [low, high)
                                       (no shape: one Python float)
  !randint {seed: 1, low: 100, high: 5000}   a reproducible int in [low, high]
  !model {seed: 3}                     a reproducible model whose sizes agree with each
                                       other (head_dim never 128); format: hf for
                                       config.json keys, field: d_model for one size,
                                       drop: [head_dim] to leave keys out
  !tuple [4096, 128]                   a tuple (YAML has only lists)
  !set [k, v]                          a set
  !symbol n                            a positive sympy Symbol (or {name:, integer:})
  !expr "exp(1/sqrt(2))"               a sympy expression (instructor text only)
  !json models/llama2-7b.json          a JSON file beside the YAML file
"""

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CourseError
from .yaml_source import Tagged


def build(value: Any, path: Path, seed_offset: int = 0) -> Any:
    """Replace every Tagged value inside ``value`` by what it stands for."""
    if isinstance(value, Tagged):
        return _build_tagged(value, path, seed_offset)
    if isinstance(value, list):
        return [build(v, path, seed_offset) for v in value]
    if isinstance(value, dict):
        return {k: build(v, path, seed_offset) for k, v in value.items()}
    return value


def _build_tagged(tagged, path, seed_offset):
    builder = INPUT_TAGS.get(tagged.tag, (None,))[0]
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
                          INPUT_TAGS[tagged.tag][1]) from None


def _array(value, path, seed_offset):
    if isinstance(value, dict):
        return np.array(value["data"], dtype=value.get("dtype", "float64"))
    return np.array(value, dtype=float)


def drawn_seed(seed: int, seed_offset: int, *stream: int) -> int | list[int]:
    """The generator's seed for a tag's ``seed`` in draw ``seed_offset`` (``course.draws``):
    draw 0 as the course wrote it; any other a stream of its own, so that no draw of one
    seed repeats another seed's inputs (seed 1 drawn once more is not seed 2, which a
    visible check may show)."""
    if not seed_offset:
        return [seed, *stream] if stream else seed
    return [seed, *stream, DRAW_STREAM, seed_offset]


DRAW_STREAM = 0x5EED


def _random(spec, path, seed_offset):
    unknown = set(spec) - {"shape", "seed", "low", "high", "dtype"}
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    rng = np.random.default_rng(drawn_seed(int(spec["seed"]), seed_offset))
    low, high = float(spec.get("low", -1.0)), float(spec.get("high", 1.0))
    if "shape" not in spec:   # one number, a Python float
        return float(rng.uniform(low, high))
    shape = tuple(int(n) for n in spec["shape"])
    values = rng.uniform(low, high, shape)
    return values.astype(spec.get("dtype", "float64"))


def _randint(spec, path, seed_offset):
    unknown = set(spec) - {"seed", "low", "high"}
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    rng = np.random.default_rng(drawn_seed(int(spec["seed"]), seed_offset, 1))
    return int(rng.integers(int(spec["low"]), int(spec["high"]), endpoint=True))


# a model's sizes, and their names in a Hugging Face config.json
MODEL_FIELDS = {"d_model": "hidden_size", "n_heads": "num_attention_heads",
                "n_kv_heads": "num_key_value_heads", "n_layers": "num_hidden_layers",
                "head_dim": "head_dim", "full_attention_layers": "full_attention_layers",
                "context": "max_position_embeddings", "kv_lora_rank": "kv_lora_rank",
                "qk_rope_head_dim": "qk_rope_head_dim"}


def model_sizes(seed: int, seed_offset: int = 0) -> dict[str, int]:
    """A made-up model whose sizes agree: d_model = n_heads * head_dim, n_kv_heads
    divides n_heads, head_dim is never 128 (the size every real model uses)."""
    rng = np.random.default_rng(drawn_seed(seed, seed_offset, 2))
    pick = lambda options: int(options[rng.integers(len(options))])  # noqa: E731
    head_dim = pick([40, 48, 64, 80, 96, 112, 160, 192, 256])
    n_kv_heads = pick([1, 2, 3, 4, 5, 6, 8])
    n_heads = n_kv_heads * pick([2, 3, 4, 5, 6, 7])
    n_layers = int(rng.integers(6, 90))
    return {"d_model": n_heads * head_dim, "n_heads": n_heads, "n_kv_heads": n_kv_heads,
            "n_layers": n_layers, "head_dim": head_dim,
            "full_attention_layers": max(1, n_layers // pick([2, 3, 4, 6])),
            "context": pick([3000, 6144, 10240, 24576, 40960, 98304, 163840]),
            "kv_lora_rank": pick([192, 320, 384, 448, 640]),
            "qk_rope_head_dim": pick([16, 32, 48, 96])}


def _model(spec, path, seed_offset):
    unknown = set(spec) - {"seed", "format", "field", "drop"}
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    sizes = model_sizes(int(spec["seed"]), seed_offset)
    if spec.get("field") is not None:
        return sizes[spec["field"]]
    fmt = spec.get("format", "sizes")
    if fmt not in ("sizes", "hf"):
        raise ValueError(f"format {fmt!r}: expected sizes or hf")
    drop = spec.get("drop", [])
    for key in drop:
        if key not in sizes:
            raise KeyError(key)
    if fmt == "hf":
        return {MODEL_FIELDS[k]: v for k, v in sizes.items() if k not in drop}
    return {k: v for k, v in sizes.items() if k not in drop}


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


INPUT_TAGS = {   # tag -> (builder, how to write it): the one table of input tags
    "!array": (_array, "write !array [[1, 2], [3, 4]] or !array {data: [...], dtype: int64}"),
    "!random": (_random, "write !random {shape: [4, 8], seed: 1, low: -1, high: 1} (no "
                         "shape: one float)"),
    "!randint": (_randint, "write !randint {seed: 1, low: 100, high: 5000}"),
    "!model": (_model, "write !model {seed: 3}, !model {seed: 3, format: hf, drop: "
                       "[head_dim]} or !model {seed: 3, field: d_model} (fields: "
                       + ", ".join(MODEL_FIELDS) + ")"),
    "!tuple": (_tuple, "write !tuple [4096, 128]"),
    "!set": (_set, "write !set [k, v]"),
    "!symbol": (_symbol, "write !symbol n or !symbol {name: n, integer: true}"),
    "!expr": (_expr, 'write !expr "exp(1/sqrt(2))"'),
    "!json": (_json, "write !json path/to/file.json, relative to this YAML file"),
}
TAGS = tuple(INPUT_TAGS)
