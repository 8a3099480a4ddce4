"""The course teaches: question 7 as the notes round it, the notes' KV slip named,
the common mistakes of the notes tagged, hints as ladders, no answer in an example."""

import json
import re
import shutil

import pytest
from conftest import (
    EXERCISES,
    ROOT,
    SOLUTIONS,
    engine_grade,
    grade_in_workers,
    run_here,
)

from grader.course import loader
from grader.course.spec import Course

COURSE = Course(ROOT)


def _with(set_id, module, extra):
    return (SOLUTIONS / set_id / f"{module}.py").read_text() + "\n\n" + extra


CASES = {   # name -> (set, exercise, module, text appended to the reference)
    "q7 weights rounded to two decimals": ("day3", "attention_by_hand", "attention_by_hand",
                                           "def selftest_q7_output():\n"
                                           "    return [0.66, 2.02]\n"),
    "q7 scaled": ("day3", "attention_by_hand", "attention_by_hand",
                  "def selftest_q7_output():\n    return selftest_q7_output_scaled()\n"),
    "notes' KV formula on GQA": ("day3", "kv_cache", "kv_cache",
                                 "def kv_cache_bytes(config, n_tokens, bytes_per_elem=2):\n"
                                 "    return 2 * config['num_hidden_layers'] * "
                                 "config['hidden_size'] * bytes_per_elem * n_tokens\n"),
    "concept slips": ("day3", "concepts", "concepts",
                      "def why_separate_wq_wk():\n    return 'fewer_params'\n\n"
                      "def decode_recomputes_all():\n    return True\n"),
    "examples typed in": ("day3", "kv_cache", "kv_cache",
                          "def llama2_7b_kv_per_token():\n    return '3 MiB'\n\n"
                          "def llama3_8b_kv_per_token():\n    return '1.5 MiB'\n"),
    "same key, same value": ("day3", "same_key", "same_key",
                             "def q7_contributions():\n"
                             "    return [[0.21, 0], [0, 1.57], [0.21, 0]]\n"),
    "MLA page figures": ("c3-l2", "mla_savings", "mla_savings",
                         "def deepseek_v2_reductions():\n    return (82.2, 93.3)\n"),
    "c3-l2 examples typed in": ("c3-l2", "kv_variants", "kv_variants",
                                "def anchor_mha_per_token():\n    return '3 MiB'\n\n"
                                "def anchor_gqa_full_context():\n    return '40 GiB'\n"),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    jobs = []
    for set_id, exercise, module, extra in CASES.values():
        folder = tmp_path_factory.mktemp("content")
        shutil.copytree(EXERCISES / set_id, folder, dirs_exist_ok=True)
        for stub in (EXERCISES / set_id).glob("*.py"):
            shutil.copy(SOLUTIONS / set_id / stub.name, folder / stub.name)
        (folder / f"{module}.py").write_text(_with(set_id, module, extra), encoding="utf-8")
        jobs.append([set_id, "--submission", folder, "--json", "--lang", "en",
                     "--exercise", exercise])
    out = {}
    for name, (code, doc) in zip(CASES, grade_in_workers(jobs)):
        assert code in (0, 1), doc
        out[name] = {t["extra_data"]["check"]: t for t in doc["tests"]}
    return out


def test_question_7_accepts_weights_rounded_as_the_notes_do(runs):
    assert runs["q7 weights rounded to two decimals"]["q7"]["status"] == "passed"


def test_question_7_scaled_is_named(runs):
    q7 = runs["q7 scaled"]["q7"]
    assert q7["status"] == "failed" and q7["tags"] == ["q7-scaled"]
    assert "not to scale" in q7["output"] and "0.639" not in q7["output"]


def test_the_notes_kv_slip_is_named_with_the_formulas_condition(runs):
    gqa = runs["notes' KV formula on GQA"]["cache-tinyllama-gqa"]
    assert gqa["status"] == "failed" and gqa["tags"] == ["kv-used-query-heads"]
    assert "holds only without GQA" in gqa["output"]
    assert runs["notes' KV formula on GQA"]["cache-llama2-4096"]["status"] == "passed"


def test_the_notes_common_mistakes_are_tagged(runs):
    checks = runs["concept slips"]
    assert checks["separate-wq-wk"]["tags"] == ["qk-same-matrix"]
    assert checks["decode-recompute"]["tags"] == ["decode-recomputes-all"]


def test_same_key_is_not_same_value(runs):
    check = runs["same key, same value"]["q7-contributions"]
    assert check["status"] == "failed" and check["tags"] == ["same-key-same-value"]
    assert "v3" in check["output"]


def test_the_pages_rounded_mla_figures_earn_nothing(runs):
    check = runs["MLA page figures"]["v2-reductions"]
    assert check["status"] == "failed" and check["score"] == 0
    assert check["tags"] == ["page-figures-typed-in"]


TYPED_IN = {"examples typed in": ("llama2-by-hand", "llama3-by-hand"),
            "c3-l2 examples typed in": ("anchor-mha-by-hand", "anchor-gqa-full-by-hand")}


@pytest.mark.parametrize("name", TYPED_IN)
def test_typing_in_the_examples_of_prompts_and_docstrings_scores_nothing(runs, name):
    by_hand = [runs[name][c] for c in TYPED_IN[name]]
    assert by_hand and all(t["score"] == 0 for t in by_hand), \
        [(t["name"], t["status"]) for t in by_hand]


def test_every_hint_ladder_climbs_and_gives_no_code_line():
    for set_id in ("day3", "c3-l2"):
        for exercise in loader.load_set(COURSE, set_id).exercises:
            assert len(exercise.hints) >= 2, f"{set_id}/{exercise.id}: a nudge, then a method"
            for hint in exercise.hints:
                for text in (hint.en, hint.zh):
                    assert not re.search(r"np\.\w+\(", text), (exercise.id, text)


def test_no_example_in_a_prompt_or_stub_is_a_checked_answer():
    sizes = re.compile(r"['\"](\d+(?:\.\d+)? ?[KMG]i?B)['\"]")
    for set_id in ("day3", "c3-l2"):
        from grader.course.units import parse_bytes
        from grader.run.references import Reference

        exercise_set = loader.load_set(COURSE, set_id)
        answers = set()
        for exercise in exercise_set.exercises:
            for check in exercise.checks:
                if check.compare.kind == "bytes":
                    try:
                        answers.add(parse_bytes(Reference(exercise).call(
                            check.function, check.args, check.kwargs, check)))
                    except Exception:
                        pass
        texts = [p.read_text() for p in (EXERCISES / set_id).glob("*.py")]
        texts += [e.prompt.en + e.prompt.zh for e in exercise_set.exercises]
        for text in texts:
            for example in sizes.findall(text):
                assert parse_bytes(example) not in answers, (set_id, example)


ENGLISH_SENTENCE = re.compile(r"\b[A-Za-z]{2,}(?: [A-Za-z]{2,}){3,}\b")   # four English words


def test_the_day3_mistakes_in_chinese_show_no_english_sentence(tmp_path):
    """Typical mistakes graded with --lang zh: every line is Chinese apart from code,
    identifiers and the student's own exception text."""
    mistakes = {
        "attention": (SOLUTIONS / "day3" / "attention.py").read_text().replace(
            "causal=True):\n", "causal=True):\n    causal = False\n", 1),
        "temperature": "import numpy as np\n\ndef softmax(logits, T=1.0):\n"
                       "    z = np.asarray(logits, dtype=float) * T\n"
                       "    e = np.exp(z - z.max(axis=-1, keepdims=True))\n"
                       "    return e / e.sum(axis=-1, keepdims=True)\n\n"
                       "def greedy(logits):\n    return 0\n",
        "kv_cache": (SOLUTIONS / "day3" / "kv_cache.py").read_text() +
                    "\n\ndef llama3_8b_kv_per_token():\n    return '512 Kb'\n",
    }
    work = tmp_path / "work"
    shutil.copytree(EXERCISES / "day3", work, ignore=shutil.ignore_patterns(".*"))
    for stub in (EXERCISES / "day3").glob("*.py"):
        shutil.copy(SOLUTIONS / "day3" / stub.name, work / stub.name)
    for module, text in mistakes.items():
        (work / f"{module}.py").write_text(text, encoding="utf-8")
    jobs = [["day3", "--submission", work, "--lang", "zh", *sum((["--exercise", m]
                                                                 for m in mistakes), [])],
            ["day3", "--submission", work, "--lang", "zh", "--json",
             *sum((["--exercise", m] for m in mistakes), [])]]
    terminal, as_json = (run_here(*job) for job in jobs)
    doc = json.loads(as_json.stdout)
    texts = terminal.stdout.splitlines() + [line for t in doc["tests"]
                                            for line in t["output"].splitlines()]
    assert any("可能的错误" in line for line in texts)
    english = [line for line in texts if ENGLISH_SENTENCE.search(line)]
    assert not english, english[:5]


def test_show_says_what_every_hidden_check_checks_in_both_languages():
    """Each hidden YAML check has a description and each hidden test a docstring in each
    language, so ``show`` lists as many in Chinese as in English, none empty."""
    from grader.course import loader
    from grader.course.spec import Course
    from grader.report.student_view import hidden_checks

    course = Course(ROOT)
    for set_id in course.set_ids():
        for exercise in loader.load_set(course, set_id).exercises:
            said = {lang: hidden_checks(exercise, lang) for lang in ("en", "zh")}
            assert len(said["en"]) == len(said["zh"]), exercise.id
            assert all(said["en"]) and all(said["zh"]), (exercise.id, said)


def _per_student(set_id, exercise_id):
    """The exercise, a student whose numbers are not the notes', and the functions
    that take the numbers (the reference's, at the notes' and at the student's)."""
    from grader.run.references import Reference

    exercise = loader.load_set(COURSE, set_id).exercise(exercise_id)
    student = next(s for s in (f"s{i}@example.org" for i in range(100))
                   if exercise.for_student(s).variant)
    reference = Reference(exercise)
    mine = exercise.for_student(student).params
    functions = {f: (reference.function(f)(**reference.takes(f, exercise.variants[0])),
                     reference.function(f)(**reference.takes(f, mine)))
                 for f in exercise.functions if reference.takes(f, exercise.variants[0])}
    return exercise, student, functions


def _answering(tmp_path, set_id, exercise, answers):
    folder = tmp_path / "student"
    folder.mkdir(exist_ok=True)
    source = (SOLUTIONS / set_id / exercise.file).read_text() + "".join(
        f"\n\ndef {f}():\n    return {getattr(v, 'tolist', lambda v=v: v)()!r}\n"
        for f, v in answers.items())
    (folder / exercise.file).write_text(source, encoding="utf-8")
    return folder, lambda student: [c for c in engine_grade(
        loader.load_set(COURSE, set_id), folder, only={exercise.id},
        student=student).exercises[0].checks if c.function in answers]


@pytest.mark.parametrize("set_id,exercise_id", [("day3", "attention_by_hand"),
                                                ("c3-l2", "dot_by_hand")])
def test_the_notes_numbers_worked_out_instead_of_ones_own_are_named(
        tmp_path, set_id, exercise_id):
    from grader.report.messages import render

    exercise, student, functions = _per_student(set_id, exercise_id)
    assert functions   # every exercise with variants has a per-student check
    _, checks = _answering(tmp_path, set_id, exercise,
                           {f: notes for f, (notes, _) in functions.items()})
    graded = checks(student)
    assert graded and all(not c.passed and c.tags == ("notes-numbers",) for c in graded)
    line = next(m for m in graded[0].lines if m.code == "misconception")
    assert "the notes' own numbers" in render(line, "en")
    assert "按笔记里的数算出" in render(line, "zh")
    assert all(c.passed for c in checks(None))   # the notes' numbers are right for the notes
    _, checks = _answering(tmp_path, set_id, exercise,
                           {f: mine for f, (_, mine) in functions.items()})
    assert all(c.passed and not c.tags for c in checks(student))
    _, checks = _answering(tmp_path, set_id, exercise, {f: 7 for f in functions})
    assert all(not c.passed and "notes-numbers" not in c.tags for c in checks(student))
