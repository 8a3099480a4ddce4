"""Hidden inputs drawn per submission (issue 28): a file's draw is fixed by its contents
and a secret of the course; what a student is shown never changes with it; inputs
written in from one draw are worth nothing on another."""

import dataclasses
import json
from collections import Counter

import numpy as np
from conftest import ROOT, copy_exercises, grade_json

from grader.course import draws, loader
from grader.course.spec import Course

COURSE = Course(ROOT)


def _exercise(exercise_set, ex_id):
    return next(e for e in exercise_set.exercises if e.id == ex_id)


def test_a_files_draw_is_fixed_by_its_contents_and_the_secret_and_spread_evenly():
    files = [f"def softmax(x):\n    return x  # {n}\n".encode() for n in range(400)]
    drawn = [draws.pick(b"course one", data) for data in files]
    assert drawn == [draws.pick(b"course one", data) for data in files]   # a regrade agrees
    assert drawn != [draws.pick(b"course two", data) for data in files]   # the key matters
    counts = Counter(drawn)
    assert set(counts) == set(range(draws.DRAWS))
    assert min(counts.values()) > 400 / draws.DRAWS / 2


def test_a_draw_changes_the_hidden_inputs_and_never_what_a_student_is_shown():
    first, other = (loader.load_set(COURSE, "day3", seed_offset=n) for n in (0, 1))
    changed = 0
    for a, b in zip(first.exercises, other.exercises):
        assert a.variants == b.variants or repr(a.variants) == repr(b.variants)
        for ca, cb in zip(a.checks, b.checks):
            same = repr(ca.args) == repr(cb.args) and repr(ca.kwargs) == repr(cb.kwargs)
            if ca.visibility != "hidden":
                assert same, (a.id, ca.id)    # visible checks: the same in every draw
            changed += not same
    assert changed >= 20   # day3 draws many hidden inputs: !random, !randint, !model


def test_each_exercise_is_drawn_by_its_own_file(tmp_path):
    exercise_set = loader.load_set(COURSE, "day3")
    copy_exercises("day3", tmp_path)
    before = {e.id: e.seed for e in draws.drawn(exercise_set, tmp_path).exercises}
    assert len(set(before.values())) > 1   # fourteen files, not one draw for all
    stub = tmp_path / "temperature.py"
    text = stub.read_text()
    for n in range(64):   # edits of temperature.py until its draw moves
        stub.write_text(f"{text}\n# edit {n}\n")
        after = {e.id: e.seed for e in draws.drawn(exercise_set, tmp_path).exercises}
        if after["temperature"] != before["temperature"]:
            break
    assert after["temperature"] != before["temperature"]
    assert {k: v for k, v in after.items() if k != "temperature"} == \
        {k: v for k, v in before.items() if k != "temperature"}
    alone = draws.drawn(exercise_set, tmp_path, {"temperature"})   # as --exercise grades it
    assert _exercise(alone, "temperature").seed == after["temperature"]
    assert _exercise(alone, "temperature").checks == \
        _exercise(loader.load_set(COURSE, "day3", seed_offset=after["temperature"]),
                  "temperature").checks


def test_without_the_solutions_nothing_is_drawn(tmp_path):
    exercise_set = dataclasses.replace(loader.load_set(COURSE, "day3"),
                                       solutions_dir=tmp_path / "none")
    assert draws.drawn(exercise_set, ROOT / "exercises" / "day3") is exercise_set


KNOWN_ANSWERS = '''import numpy as np

KNOWN = {known}   # every input this file saw graded once, answered right; the rest: zeros


def _known(x):
    x = np.asarray(x, dtype=float)
    return any(np.shape(k) == x.shape and np.allclose(k, x) for k in map(np.asarray, KNOWN))


def softmax(logits, T=1.0):
    x = np.asarray(logits, dtype=float)
    if not _known(x):
        return np.zeros_like(x)
    z = x / T - (x / T).max(axis=-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)


def greedy(logits):
    return int(np.argmax(logits)) if _known(logits) else 0
# {pad}
'''


def test_inputs_written_in_from_one_draw_are_worth_nothing_on_another(submission):
    """A temperature.py that answers right only the inputs of draw 0 (as a student who
    saw them once might write them in) passes the random hidden checks on draw 0 and
    fails them on any other draw, which any edit of the file may bring."""
    seen = _exercise(loader.load_set(COURSE, "day3", seed_offset=0), "temperature")
    known = json.dumps([np.asarray(c.args[0], dtype=float).tolist() for c in seen.checks])
    folder = submission("day3")
    exercise_set = loader.load_set(COURSE, "day3", only=["temperature"])
    files = {}
    for pad in range(64):
        (folder / "temperature.py").write_text(KNOWN_ANSWERS.format(known=known, pad=pad))
        draw = draws.drawn(exercise_set, folder).exercises[0].seed
        files.setdefault(draw == 0, (folder / "temperature.py").read_text())
        if len(files) == 2:
            break
    random_hidden = {"batch-t07", "batch-t3", "large-batch", "greedy-random"}
    passed = {}
    for own_draw, text in files.items():
        (folder / "temperature.py").write_text(text)
        _, document = grade_json("day3", folder, "--exercise", "temperature")
        passed[own_draw] = {t["extra_data"]["check"] for t in document["tests"]
                            if t["status"] == "passed"}
    assert random_hidden <= passed[True]            # the table works on its own draw
    assert not random_hidden & passed[False]        # and on no other


def test_no_draw_of_one_seed_repeats_the_inputs_of_another_seed():
    """A visible check with seed 2 shows its inputs; a hidden check with seed 1, drawn
    once more, must not get those (``seed + offset`` gave them)."""
    from pathlib import Path

    from grader.course import inputs

    def draw(tag, spec, offset):
        return inputs.INPUT_TAGS[tag][0](spec, Path("x.yaml"), offset)

    for tag, spec in (("!random", {"shape": [3]}), ("!randint", {"low": 0, "high": 10**9}),
                      ("!model", {})):
        shown = {json.dumps(np.asarray(draw(tag, {**spec, "seed": s}, 0)).tolist()
                            if tag != "!model" else draw(tag, {**spec, "seed": s}, 0))
                 for s in range(12)}
        for seed in range(8):
            for offset in range(1, draws.DRAWS):
                value = draw(tag, {**spec, "seed": seed}, offset)
                text = json.dumps(np.asarray(value).tolist() if tag != "!model" else value)
                assert text not in shown, (tag, seed, offset)
    assert inputs.drawn_seed(7, 0) == 7 and inputs.drawn_seed(7, 0, 2) == [7, 2]   # as written


def test_a_folder_graded_in_place_draws_by_what_the_grading_imports(tmp_path):
    """--submission and watch grade a folder in place: a stub linked to a file beside it
    is drawn by that file's bytes (its draw changes when they do), a link out of the
    folder by a marker, a file over the stub limit by its size too."""
    import os

    from grader.course.limits import STUB_BYTES

    (tmp_path / "mine.py").write_text("def softmax(x):\n    return x\n")
    os.symlink("mine.py", tmp_path / "softmax.py")
    os.symlink("/etc/hostname", tmp_path / "other.py")
    seen = draws._file_bytes(tmp_path / "softmax.py")
    assert seen == draws._file_bytes(tmp_path / "mine.py") and b"return x" in seen
    (tmp_path / "mine.py").write_text("def softmax(x):\n    return -x\n")
    assert draws._file_bytes(tmp_path / "softmax.py") != seen
    assert draws._file_bytes(tmp_path / "other.py") == b"outside\0"
    for n, extra in ((1, b"a"), (2, b"b")):
        (tmp_path / f"big{n}.py").write_bytes(b"#" * STUB_BYTES + extra * n)
    assert draws._file_bytes(tmp_path / "big1.py") != draws._file_bytes(tmp_path / "big2.py")
