"""Fuzz tests (Hypothesis) over what the grader reads from a student (issue 28):
notebooks, progress files, upload trees, zips, and the answer frames and wire values a
child sends.  Each reader either returns what it read or raises the error that becomes
that student's row or check (SubmissionError, WireError, a BAD_ANSWER outcome); nothing
else, and nothing written outside the folder it was given.

The budget is fixed and the draws are derandomized (the same inputs on every run), so
CI is repeatable: 50 inputs a test in the README's command, and .ci/run's own step
(``HYPOTHESIS_PROFILE=ci``) 2,000 a test; ``HYPOTHESIS_PROFILE=explore`` draws 1,500 a
test afresh, for a developer hunting new cases.
"""

import io
import json
import os
import string
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="needs the [test] extra: "
                                 "python3 -m pip install -e '.[test]'")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from grader import wire  # noqa: E402
from grader.instructor import gradebook, notebook_cells  # noqa: E402
from grader.instructor.uploads import SubmissionError, find_stub_files  # noqa: E402
from grader.report.progress import Progress  # noqa: E402
from grader.run.channel import Channel  # noqa: E402
from grader.run.outcome import CallOutcome, Status  # noqa: E402

EXAMPLES = 50   # the README's command; .ci/run's fuzz step runs the ci profile's 2,000
settings.register_profile("default", max_examples=EXAMPLES, derandomize=True, database=None,
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=2000, derandomize=True, database=None,
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", max_examples=1500, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# JSON values of every kind, nested a little, with the keys a reader looks for
KEYS = st.sampled_from(["cells", "cell_type", "source", "metadata", "attn_grade", "file",
                        "version", "sets", "day3", "temperature", "hints", "best",
                        "attempts", "solved_at", "max_score", "$t", "n", "d", "tree",
                        "shape", "dtype", "b64", "items", "status", "value", "output"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
                    st.floats(allow_nan=False), st.text(max_size=30),
                    st.sampled_from(["code", "markdown", "temperature.py", "ok", "int",
                                     "sympy", "tuple", "array", "frac", "float64"]))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.one_of(KEYS, st.text(max_size=8)),
                                                 inner, max_size=5)), max_leaves=25)


def _cell():
    return st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown", 3])},
                                 optional={"source": st.one_of(
                                     st.text(max_size=60), st.lists(st.one_of(
                                         st.text(max_size=20), JSON), max_size=4), JSON),
                                     "metadata": st.one_of(JSON, st.fixed_dictionaries(
                                         {"attn_grade": st.one_of(JSON, st.fixed_dictionaries(
                                             {"file": st.one_of(st.sampled_from(
                                                 ["temperature.py", "attention.py"]),
                                                 JSON)}))}))})


NOTEBOOKS = st.one_of(JSON, st.fixed_dictionaries({"cells": st.lists(st.one_of(_cell(), JSON),
                                                                     max_size=5)}))
NAMES = ("temperature.py", "attention.py")


@given(st.one_of(NOTEBOOKS.map(lambda v: json.dumps(v).encode()), st.binary(max_size=200)))
def test_a_notebook_of_any_content_is_read_or_refused(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "work.ipynb"
        path.write_bytes(data)
        try:
            written = notebook_cells.collect(path, NAMES, Path(tmp) / "out")
        except SubmissionError as exc:
            assert exc.said("zh") and exc.said("en")
            return
        assert set(written) <= set(NAMES)
        for name in written:
            compile((Path(tmp) / "out" / name).read_text(), name, "exec")


@given(st.one_of(JSON.map(lambda v: json.dumps(v).encode()), st.binary(max_size=200)))
def test_a_progress_file_of_any_content_gives_counts_or_a_fresh_start(data):
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / ".attn-grade").mkdir()
        (Path(tmp) / ".attn-grade" / "progress.json").write_bytes(data)
        mine = Progress(tmp)
        for set_id in ("day3", "temperature"):
            used = mine.hints_used(set_id)
            assert all(type(k) is str and type(v) is int and v >= 0 for k, v in used.items())
            for exercise in used:
                record = mine.record(set_id, exercise)
                assert type(record.attempts) is int and type(record.best) in (int, float)
        mine.hint_shown("day3", "temperature")
        mine.save()
        assert Progress(tmp).hints_used("day3")["temperature"] >= 1


# an upload: entries by relative path, each a file, a folder or a link (inside or out)
ENTRY_NAMES = st.sampled_from(["temperature.py", "attention.py", "a", "b", ".hidden",
                               "grader", "solutions", "__MACOSX", "x y", "ü.py"])
TREES = st.lists(st.tuples(st.lists(ENTRY_NAMES, min_size=1, max_size=3),
                           st.sampled_from(["file", "dir", "link-in", "link-out", "fifo"])),
                 max_size=8)


def _build(root: Path, tree, outside: Path) -> None:
    for parts, kind in tree:
        path = root.joinpath(*parts)
        if os.path.lexists(path):   # taken already (a student's second entry of one name)
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file":
                path.write_text("def softmax(x):\n    return x\n")
            elif kind == "dir":
                path.mkdir(exist_ok=True)
            elif kind == "link-in":
                path.symlink_to(root / "a")
            elif kind == "link-out":
                path.symlink_to(outside)
            else:
                os.mkfifo(path)
        except OSError:   # a name already taken by another kind: as a student's would be
            pass


@given(TREES)
def test_an_upload_tree_of_any_shape_is_collected_or_refused_never_through_a_link(tree):
    with tempfile.TemporaryDirectory() as tmp:
        root, outside = Path(tmp) / "upload", Path(tmp) / "outside.py"
        outside.write_text("SECRET = 1\n")
        root.mkdir()
        _build(root, tree, outside)
        try:
            found = find_stub_files(root, NAMES)
            written = notebook_cells.collect(root, NAMES, Path(tmp) / "out")
        except SubmissionError:
            return
        for path in found.values():
            assert not path.is_symlink() and root in path.parents
        for name in written:
            assert "SECRET" not in (Path(tmp) / "out" / name).read_text()


MEMBERS = st.lists(st.tuples(
    st.one_of(st.sampled_from(["temperature.py", "../up.py", "/abs.py", "a/../../x.py",
                               "d/temperature.py", "./", "a//b.py", "ü/é.py"]),
              st.text(alphabet=string.ascii_letters + "./_-", min_size=1, max_size=12)),
    st.binary(max_size=64)), max_size=6)


@pytest.mark.filterwarnings("ignore:Duplicate name")   # two members of one name, on purpose
@given(MEMBERS, st.booleans())
def test_a_zip_of_any_members_unpacks_inside_its_folder_or_is_refused(members, corrupt):
    with tempfile.TemporaryDirectory() as tmp:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, data in members:
                archive.writestr(name, data)
        raw = buffer.getvalue()
        if corrupt and len(raw) > 30:
            raw = raw[:len(raw) // 2] + raw[len(raw) // 2 + 7:]
        (Path(tmp) / "ana.zip").write_bytes(raw)
        into = Path(tmp) / "class" / "into"
        into.parent.mkdir()
        try:
            gradebook.unpack(Path(tmp) / "ana.zip", into)
        except SubmissionError:
            pass
        outside = [p for p in Path(tmp).rglob("*")
                   if into not in p.parents and p != into
                   and p not in (Path(tmp) / "ana.zip", into.parent)]
        assert outside == []


# ------------------------------------------------------------ what a child sends

def _containers(inner):
    """Lists, tagged tuples and sets, and dicts of wire values."""
    return st.one_of(st.lists(inner, max_size=4),
                     st.fixed_dictionaries({"$t": st.sampled_from(["tuple", "set"]),
                                            "items": st.lists(inner, max_size=4)}),
                     st.dictionaries(st.text(max_size=5), inner, max_size=3))


WIRE_TREES = st.recursive(
    st.one_of(SCALARS, st.fixed_dictionaries({"$t": st.sampled_from(
        ["int", "float", "complex", "frac", "tuple", "set", "dict", "array", "sympy", "x"])},
        optional={"v": SCALARS, "n": SCALARS, "d": SCALARS, "re": SCALARS, "im": SCALARS,
                  "dtype": st.sampled_from(["<f8", "<i8", "|b1", "O", "<c16", "x"]),
                  "shape": st.lists(st.integers(-1, 4), max_size=3),
                  "b64": st.sampled_from(["", "AAAAAAAAAAA=", "!!", "AAAAAAAAAAAAAAAAAAAAAA=="]),
                  "tree": JSON})),
    lambda inner: _containers(inner), max_leaves=20)


@given(WIRE_TREES, st.booleans())
def test_wire_values_of_any_shape_decode_or_are_refused(tree, lazy):
    try:
        value = wire.decode(tree, lazy=lazy)
    except wire.WireError:
        return
    wire.encode(wire.materialized(value))   # what was read can be written back


ANSWERS = st.fixed_dictionaries({"status": st.sampled_from(
    ["ok", "error", "missing", "unsupported", "too_large", "bogus", 3])},
    optional={"value": WIRE_TREES, "error": JSON, "output": JSON, "output_dropped": JSON,
              "inputs_digest": JSON, "function": JSON, "type_name": JSON, "size": JSON})


def _frames(answer_texts, rid_shift):
    out = b""
    for n, text in enumerate(answer_texts, 1):
        out += f"{n + rid_shift:06d} {len(text)}\n".encode() + text
    return out


@given(st.lists(st.one_of(ANSWERS.map(lambda a: json.dumps(a).encode()),
                          st.binary(max_size=40)), min_size=1, max_size=3),
       st.sampled_from([0, 0, 0, 1]), st.binary(max_size=30))
def test_answer_frames_of_any_content_are_outcomes_never_errors(texts, shift, junk):
    """The bytes a child writes on its answer pipe: well-framed answers of any content,
    frames of the wrong id, and junk after them."""
    with tempfile.TemporaryDirectory() as tmp:
        channel = Channel(tmp)
        try:
            data = _frames(texts, shift) + junk
            os.write(channel.answers_w, data[:60000])
            os.close(channel.answers_w)
            channel.answers_w = None
            for n in range(1, len(texts) + 1):
                channel.wait(time.monotonic() + 1, lambda: True, 1 << 20)
                outcome = channel.read_answer(f"{n:06d}", 1 << 20)
                assert isinstance(outcome, CallOutcome) and isinstance(outcome.status, Status)
                if channel.broken:
                    break
        finally:
            channel.close()

