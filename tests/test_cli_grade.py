"""End to end: real submission folders graded through the CLI, as a student would."""

import json
import re
import shutil

import pytest
from conftest import (
    FULL_DAY3,
    ROOT,
    SOLUTIONS,
    checks_of,
    copy_exercises,
    full_marks,
    grade_in_workers,
    grade_json,
    grade_many,
    run_cli,
    run_here,
    scores_by_exercise,
)

FULL = {"day3": FULL_DAY3, "c3-l2": full_marks("c3-l2")}


# the one whole-set grading through a CLI process of its own (the JSON contract of the
# README's command); the others in this test process's grade-all worker (the same command)
THROUGH_THE_CLI = ("day3", "solutions")


@pytest.fixture(scope="module")
def whole_set_docs():
    """Each set's stubs and reference solutions, graded whole; (exit code, document) by
    (set, "stubs"/"solutions")."""
    keys = [(set_id, kind) for set_id in sorted(FULL) for kind in ("stubs", "solutions")]
    jobs = {key: [key[0], "--submission", (ROOT / "exercises" if key[1] == "stubs"
                                           else SOLUTIONS) / key[0], "--json", "--lang", "en"]
            for key in keys}
    (proc, _), = grade_many([jobs[THROUGH_THE_CLI]])
    assert proc.returncode in (0, 1), proc.stderr
    out = {THROUGH_THE_CLI: (proc.returncode, json.loads(proc.stdout))}
    others = [key for key in keys if key != THROUGH_THE_CLI]
    for key, (code, doc) in zip(others, grade_in_workers([jobs[key] for key in others])):
        assert code in (0, 1), doc
        out[key] = code, doc
    return out


@pytest.mark.parametrize("set_id", sorted(FULL))
def test_unfilled_stubs_score_zero_with_not_implemented(whole_set_docs, set_id):
    code, doc = whole_set_docs[set_id, "stubs"]
    assert code == 1 and doc["score"] == 0 and doc["max_score"] == sum(FULL[set_id].values())
    for test in doc["tests"]:
        assert test["status"] == "failed"
        if test["visibility"] == "visible":
            assert "not implemented yet" in test["output"]
    assert {t["extra_data"]["exercise"] for t in doc["tests"]} == set(FULL[set_id])


@pytest.fixture(scope="module")
def solution_docs(whole_set_docs):
    return {set_id: whole_set_docs[set_id, "solutions"] for set_id in FULL}


@pytest.mark.parametrize("set_id", sorted(FULL))
def test_reference_solutions_get_full_marks(solution_docs, set_id):
    code, doc = solution_docs[set_id]
    assert code == 0, [t for t in doc["tests"] if t["status"] != "passed"]
    assert doc["score"] == doc["max_score"] == sum(FULL[set_id].values())
    assert doc["extra_data"]["isolation"] in ("none", "process", "bubblewrap") or \
        doc["extra_data"]["isolation"].startswith("process")


def test_report_follows_the_gradescope_shape(solution_docs):
    _, doc = solution_docs["day3"]
    assert {"score", "max_score", "tests", "extra_data"} <= set(doc)
    for test in doc["tests"]:
        assert {"name", "score", "max_score", "status", "visibility", "output", "tags",
                "extra_data"} <= set(test)
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in ("visible", "hidden")
        assert {"exercise", "file"} <= set(test["extra_data"])
    assert abs(sum(t["score"] for t in doc["tests"]) - doc["score"]) < 1e-6


TEMPERATURE_BASE = (SOLUTIONS / "day3" / "temperature.py").read_text()
ATTENTION_BASE = (SOLUTIONS / "day3" / "attention.py").read_text()


def solution(name, set_id="day3"):
    return (SOLUTIONS / set_id / f"{name}.py").read_text()


def patched(name, *pairs, set_id="day3"):
    """The reference of ``name`` with text replaced: one deliberate mistake."""
    text = solution(name, set_id)
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


ATTENTION_WRONG = '''
import numpy as np

def attention(Q, K, V, causal=True):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    n_q, n_k, d = Q.shape[0], K.shape[0], Q.shape[1]
    scores = Q @ K.T / {scale}
    if causal and {masked}:
        scores = np.where(np.triu(np.ones((n_q, n_k), bool), k={offset}), -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w
'''


def attention_with(scale="np.sqrt(d)", masked="True", offset="n_k - n_q + 1"):
    return ATTENTION_WRONG.format(scale=scale, masked=masked, offset=offset)


TEMPERATURE_WRONG = '''
import numpy as np

def softmax(logits, T=1.0):
    z = np.asarray(logits, dtype=float) {op} T
    {shift}
    e = np.exp(z)
    return e / e.sum(axis={axis}, keepdims=True)

def greedy(logits):
    return int(np.argmax(logits))
'''


def temperature_with(op="/", shift="z = z - z.max(axis=-1, keepdims=True)", axis="-1"):
    return TEMPERATURE_WRONG.format(op=op, shift=shift, axis=axis)


BY_HAND_WEIGHTS_AS_OUTPUT = solution("attention_by_hand") + '''

def seed_example_output():
    return [[1, 0, 0], [0.5, 0.5, 0], [0.40, 0.20, 0.40]]


def selftest_q7_output():
    return [0.107, 0.787, 0.107]
'''

KV_TIMES = "    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_elem\n"
def by_hand_kv(llama2, llama3):
    return solution("kv_cache") + (f"\n\ndef llama2_7b_kv_per_token():\n    return {llama2!r}\n"
                                   f"\n\ndef llama3_8b_kv_per_token():\n    return {llama3!r}\n")


# tag -> (exercise whose file carries the mistake, the file's text)
MISTAKES = {
    "temperature-multiplied": ("temperature", temperature_with(op="*")),
    "softmax-overflow": ("temperature", temperature_with(shift="pass")),
    "softmax-wrong-axis": ("temperature", temperature_with(
        shift="z = z - z.max(axis=0, keepdims=True)", axis="0")),
    "no-causal-mask": ("attention", attention_with(masked="False")),
    "no-scaling": ("attention", attention_with(scale="1.0")),
    "scaled-by-d": ("attention", attention_with(scale="d")),
    "mask-misaligned": ("attention", attention_with(offset="1")),
    "weights-not-values": ("attention_by_hand", BY_HAND_WEIGHTS_AS_OUTPUT),
    "gqa-tile-grouping": ("multihead", patched(
        "multihead", ("return h // (n_heads // n_kv_heads)", "return h % n_kv_heads"))),
    "vector-as-matrix": ("shapes", patched(
        "shapes", ("    return d_model // n_heads\n",
                   "    return (d_model // n_heads, d_model // n_heads)\n"))),
    "shape-transposed": ("shapes", patched(
        "shapes", ("return (d_model, d_model // n_heads)",
                   "return (d_model // n_heads, d_model)"))),
    "multihead-adds-params": ("shapes", patched(
        "shapes", ("    return 2 * d_model * d_model + 2 * d_model * kv_width",
                   "    return n_heads * (2 * d_model * d_model + 2 * d_model * kv_width)"))),
    "gqa-fewer-heads": ("concepts", patched(
        "concepts", ('return {"kv_params", "kv_cache"}', 'return {"q_heads", "kv_cache"}'))),
    "q-is-cached": ("concepts", patched(
        "concepts", ('return {"k", "v"}', 'return ["q", "k", "v"]'))),
    "kv-missing-factor-2": ("kv_cache", patched(
        "kv_cache", (KV_TIMES, "    return n_layers * n_kv_heads * head_dim * bytes_per_elem\n"))),
    "bits-not-bytes": ("kv_cache", patched(
        "kv_cache", (KV_TIMES,
                     "    return 16 * n_layers * n_kv_heads * head_dim * bytes_per_elem\n"))),
    "kv-missing-layers": ("kv_cache", patched(
        "kv_cache", (KV_TIMES, "    return 2 * n_kv_heads * head_dim * bytes_per_elem\n"))),
    "kv-used-query-heads": ("kv_cache", patched(
        "kv_cache", ('kv_heads = config.get(kv_key, heads)', 'kv_heads = heads'))),
    "kb-vs-kib": ("kv_cache", by_hand_kv("512 KB", "128 KB")),
    "growth-linear": ("growth", patched(
        "growth", ("    return (n_to / n_from) ** 2\n", "    return n_to / n_from\n"))),
    # only the smallest probability rounded to 0 (the other two right)
    "probability-rounded-to-zero": ("low_temperature", patched(
        "low_temperature", ("    return _softmax(LOGITS / T)\n",
                            "    return [0.99995, 4.5e-05, 0.0]\n"))),
    "same-key-same-value": ("same_key", patched(
        "same_key", ("    return _weights(q, K) @ np.asarray(V, dtype=float)\n",
                     "    return _weights(q, K) @ _first_value_per_key(K, V)\n"))),
}


def c3(name, *pairs):
    return patched(name, *pairs, set_id="c3-l2")


def by_hand(name, set_id, **answers):
    return solution(name, set_id) + "".join(
        f"\n\ndef {func}():\n    return {value!r}\n" for func, value in answers.items())


# The C3-L2 set is YAML, stubs and solutions only: its tags come from no grader code.
C3_MISTAKES = {
    "kb-vs-kib": ("memory", by_hand("memory", "c3-l2", additive_example="8 GB")),
    "bits-not-bytes": ("memory", by_hand("memory", "c3-l2", scores_example=268435456)),
    "million-is-decimal": ("kv_variants", by_hand("kv_variants", "c3-l2",
                                                  deepseek_67b_million_tokens=389120 * 10 ** 6)),
    "mla-missing-rope": ("kv_variants", c3(
        "kv_variants", ('width = config["kv_lora_rank"] + config["qk_rope_head_dim"]',
                        'width = config["kv_lora_rank"]'))),
    "kv-counted-linear-layers": ("kv_variants", c3(
        "kv_variants", ('return config.get("full_attention_layers", config["num_hidden_layers"])',
                        'return config["num_hidden_layers"]'))),
    "softmax-is-proportion": ("proportion", c3(
        "proportion", ("    e = np.exp(s - s.max())\n", "    e = s\n"))),
    "std-is-variance": ("scaling", by_hand("scaling", "c3-l2", anchor_dot_std=256)),
    "scores-linear-in-t": ("dot_by_hand", c3("dot_by_hand", ("    return T * T\n",
                                                             "    return T\n"))),
    "dot-product-unique": ("quiz", c3("quiz", ("    return False\n", "    return True\n"))),
    # 82.2368 and 93.3388 to two decimals, cut where they should round up
    # the typed-in cosines divided by the sums of squares, to two decimals
    "cosine-no-sqrt": ("length_vs_angle", by_hand("length_vs_angle", "c3-l2",
                                                  doubled_query_scores=(10, 20, 0.1, 0.05))),
    # one masked forward per token over its own prefix: prefix feeding's cost again
    "masked-forward-per-token": ("prefix_feeding", c3(
        "prefix_feeding", ("def masked_forward_cost(T):\n    return (1, T)",
                           "def masked_forward_cost(T):\n    return (T, T * (T + 1) // 2)"))),
    "truncated-not-rounded": ("mla_savings", by_hand("mla_savings", "c3-l2",
                                                     deepseek_v2_reductions=(82.23, 93.33))),
}
# The core tags are graded with one other file (concepts.py, the cheapest to grade), to
# show that other files keep their marks; the rest over their own exercise (separate
# processes keep the others apart). The whole set would show the same at 4 times the cost.
WITNESS = "concepts"
WITH_WITNESS = {"temperature-multiplied", "softmax-overflow", "softmax-wrong-axis",
             "no-causal-mask", "no-scaling", "scaled-by-d", "mask-misaligned",
             "weights-not-values"}
ALL_MISTAKES = {("day3", tag): value for tag, value in MISTAKES.items()}
ALL_MISTAKES.update({("c3-l2", tag): value for tag, value in C3_MISTAKES.items()})


@pytest.fixture(scope="module")
def mistake_results(tmp_path_factory):
    """Every mistake submission graded by the CLI's grade command, in grade-all's workers."""
    jobs = []
    for (set_id, tag), (exercise, code) in sorted(ALL_MISTAKES.items()):
        folder = tmp_path_factory.mktemp(tag)
        copy_exercises(set_id, folder)
        for stub in (ROOT / "exercises" / set_id).glob("*.py"):
            (folder / stub.name).write_text(solution(stub.stem, set_id))
        (folder / f"{exercise}.py").write_text(code)
        only = ["--exercise", exercise] + (["--exercise", WITNESS] if tag in WITH_WITNESS else [])
        jobs.append([set_id, "--submission", folder, "--json", "--lang", "en", *only])
    return dict(zip(sorted(ALL_MISTAKES), grade_in_workers(jobs)))


@pytest.mark.parametrize("set_id,tag", sorted(ALL_MISTAKES))
def test_each_mistake_is_named_and_costs_only_its_exercise(mistake_results, set_id, tag):
    exercise = ALL_MISTAKES[set_id, tag][0]
    exit_code, doc = mistake_results[set_id, tag]
    assert exit_code == 1, doc
    scores = scores_by_exercise(doc)
    assert set(scores) == ({exercise, WITNESS} if tag in WITH_WITNESS else {exercise})
    for other in set(scores) - {exercise}:
        assert scores[other] == pytest.approx((FULL[set_id][other],) * 2), other
    assert scores[exercise][0] < FULL[set_id][exercise]
    tagged = [t for t in checks_of(doc, exercise) if tag in t["tags"]]
    assert tagged, [(t["name"], t["tags"], t["output"]) for t in checks_of(doc, exercise)
                    if t["status"] == "failed"]
    assert all(t["status"] == "failed" for t in tagged)
    assert all(t["status"] == "passed" or t["extra_data"]["exercise"] == exercise
               for t in doc["tests"])


def test_a_tag_declared_for_two_functions_is_named_by_a_hidden_test_of_either(
        mistake_results):
    """same_key declares same-key-same-value for attend and for q7_contributions, each with
    its own wrong version; the hidden pytest test marked with it calls attend only."""
    _, doc = mistake_results["day3", "same-key-same-value"]
    hidden = [t for t in checks_of(doc, "same_key") if t["extra_data"]["kind"] == "pytest"
              and "same-key-same-value" in t["tags"]]
    assert hidden, [(t["name"], t["tags"]) for t in checks_of(doc, "same_key")]
    assert all("own value" in t["output"] for t in hidden)   # attend's message, not q7's


EXACT_BY_HAND = '''
import sympy as sp

r = sp.exp(1 / sp.sqrt(2))
w3 = [r / (2 * r + 1), 1 / (2 * r + 1), r / (2 * r + 1)]

def seed_example_weights():
    return [[1, 0, 0], [sp.Rational(1, 2), sp.Rational(1, 2), 0], w3]

def seed_example_output():
    return [[10, 0], [5, 5], [10 * w3[0] + 5 * w3[2], 10 * w3[1] + 5 * w3[2]]]

def selftest_q7_output():
    e2 = sp.exp(2)
    return [6 / (2 + e2), (2 * e2 + 4) / (2 + e2)]
'''


def test_the_notes_rounded_hand_answers_pass(submission):
    rounded = '''
def seed_example_weights():
    return [[1, 0, 0], [.5, .5, 0], [.40, .20, .40]]

def seed_example_output():
    return [[10, 0], [5, 5], [6, 4]]

def selftest_q7_output():
    return [0.64, 2.00]
'''
    numeric = rounded.replace("[6, 4]", "[6.0171, 3.9829]").replace("[0.64, 2.00]",
                                                                     "[0.6390, 2.0]")
    for code in (rounded, numeric, EXACT_BY_HAND):
        _, doc = grade_json("day3", submission("day3", attention_by_hand=code),
                            "--exercise", "attention_by_hand")
        assert doc["score"] == doc["max_score"] == 6.0


def test_the_notes_slips_do_not_leak_into_the_grader(submission):
    """The notes print [6, 4] where numpy gives [6.02, 3.98], and size the KV cache as
    2 x layers x d x 2 bytes, which holds only without GQA."""
    rounded_numpy = ATTENTION_BASE + '''

_exact = attention

def attention(Q, K, V, causal=True):
    out, w = _exact(Q, K, V, causal)
    return np.round(out), w
'''
    slip_kv = by_hand_kv("512 KiB", "512 KiB")
    _, doc = grade_json("day3", submission("day3", attention=rounded_numpy, kv_cache=slip_kv),
                        "--exercise", "attention", "--exercise", "kv_cache")
    seed = next(t for t in doc["tests"] if t["name"] == "attention: seed-output")
    assert seed["status"] == "failed" and "(expected 3.983, got 4)" in seed["output"]
    by_hand = {t["name"]: t for t in doc["tests"]}
    assert by_hand["kv_cache: llama2-by-hand"]["status"] == "passed"
    assert by_hand["kv_cache: llama3-by-hand"]["status"] == "failed"
    assert by_hand["kv_cache: llama3-by-hand"]["tags"] == ["kv-used-query-heads"]


def test_hidden_checks_show_no_inputs_or_expected_values(submission):
    folder = submission("day3", attention=attention_with(masked="False"))
    _, doc = grade_json("day3", folder, "--exercise", "attention")
    hidden = [t for t in doc["tests"] if t["visibility"] == "hidden" and t["status"] == "failed"]
    assert hidden
    for test in hidden:
        lines = test["output"].split("\n")
        fixed = lines.index("A hidden check failed; its inputs and expected answer are not shown.")
        for line in lines[fixed + 1:]:
            assert line.startswith(("likely mistake [", "hint: ", "this property counts once")), \
                test["output"]
            assert not re.search(r"expected|\d\.\d|\[\[", line), test["output"]


def test_visible_failure_says_expected_not_got_with_tolerance(submission):
    folder = submission("day3", temperature=temperature_with(op="*"))
    _, doc = grade_json("day3", folder, "--exercise", "temperature")
    test = next(t for t in doc["tests"] if t["name"] == "temperature: table-t05")
    assert "elements differ" in test["output"] and "tolerance:" in test["output"]
    assert "softmax([2, 1, 0], T=0.5)" in test["output"]
    assert "likely mistake [temperature-multiplied]" in test["output"]


def test_student_exception_shows_their_file_and_line(submission):
    broken = ATTENTION_BASE.replace("    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))",
                                    "    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))"
                                    "\n    raise ValueError('my bug')")
    folder = submission("day3", attention=broken)
    _, doc = grade_json("day3", folder, "--exercise", "attention")
    test = next(t for t in doc["tests"] if t["name"] == "attention: seed-output")
    assert "attention raised ValueError: my bug (attention.py, line 14)" in test["output"]
    assert "grader" not in test["output"] and "Traceback" not in test["output"]


def test_printing_student_keeps_stdout_pure_json(submission):
    noisy = "print('{\"score\": 100}')\nimport sys\nprint('junk', file=sys.stderr)\n" + \
        TEMPERATURE_BASE.replace("    z = np.asarray(logits, dtype=float) / T",
                                 "    print('hello ' * 10000)\n    z = np.asarray(logits, "
                                 "dtype=float) / T")
    folder = submission("day3", temperature=noisy)
    proc = run_cli("day3", "--submission", folder, "--json", "--exercise", "temperature")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["score"] == doc["max_score"]


def test_one_exercise_and_unknown_exercise():
    code, doc = grade_json("day3", SOLUTIONS / "day3", "--exercise", "attention")
    assert code == 0 and {t["extra_data"]["exercise"] for t in doc["tests"]} == {"attention"}
    proc = run_here("day3", "--exercise", "atention")
    assert proc.returncode == 2 and "did you mean 'attention'?" in proc.stderr


def test_terminal_report_in_chinese_and_exit_codes(tmp_path):
    copy_exercises("day3", tmp_path / "stubs")   # a copy: progress is written beside the work
    proc = run_here("day3", "--lang", "zh", "--exercise", "temperature",
                    "--submission", tmp_path / "stubs")
    assert proc.returncode == 1
    assert "还没有实现" in proc.stdout and "温度与 softmax" in proc.stdout
    # checks that fail for one reason share a line: 14 for softmax, 4 for greedy
    assert re.search(r"✗ 14 项检查（table-t1, table-t05, table-t2，另 11 项）: 还没有实现",
                     proc.stdout), proc.stdout
    assert len(proc.stdout.splitlines()) < 10


def test_course_found_from_subfolder_and_list_command():
    proc = run_here("list", cwd=ROOT / "exercises" / "day3")
    assert proc.returncode == 0
    assert re.search(r"attention\s+attention.py\s+14", proc.stdout)
    assert run_here("nosuchset").returncode == 2


def test_broken_yaml_is_a_course_error_without_traceback(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", course / "exercises")
    shutil.copytree(ROOT / "solutions", course / "solutions")
    path = course / "exercises" / "day3" / "temperature.yaml"
    path.write_text(path.read_text().replace("points: 10", "points: [10"))
    proc = run_here("day3", "--course", course)
    assert proc.returncode == 2
    assert "temperature.yaml:" in proc.stderr and "Traceback" not in proc.stderr


def test_calls_with_large_inputs_that_differ_only_in_the_middle_are_not_confused(tmp_path):
    """Identical calls are made once; 'identical' must mean the exact inputs."""
    from conftest import make_course

    zeros = [0.0] * 3000
    bump = zeros[:1500] + [1.0] + zeros[1501:]
    exercise = ("format_version: 1\nid: demo\ntitle: {zh: 求和, en: Sum}\n"
                "prompt: {zh: 求和, en: Sum the array}\nfunctions: [total]\npoints: 2\n"
                "checks:\n"
                f"  - id: flat\n    args: [!array {zeros}]\n    compare: number\n"
                f"  - id: bump\n    args: [!array {bump}]\n    compare: number\n")
    make_course(tmp_path, exercise=exercise)
    (tmp_path / "solutions/demo/demo.py").write_text(
        "def total(a):\n    return float(sum(a))\n")
    (tmp_path / "exercises/demo/demo.py").write_text(
        "def total(a):\n    raise NotImplementedError\n")
    proc = run_here("demo", "--course", tmp_path, "--submission", tmp_path / "solutions/demo",
                    "--json")
    assert proc.returncode == 0, proc.stdout[-1500:]


@pytest.mark.parametrize("raised, code, said", [
    (None, 0, ""), (3, 3, ""), ("no such set", 1, "no such set\n"),
    (ValueError("odd"), 1, "odd\n")])   # Python's own exit for any other object: 1
def test_entry_point_exits_as_python_would(monkeypatch, capsys, raised, code, said):
    from grader import cli

    def main():
        raise SystemExit(raised)

    class Exited(Exception):
        pass

    def fake_exit(status):
        raise Exited(status)

    monkeypatch.setattr(cli, "main", main)
    monkeypatch.setattr(cli.os, "_exit", fake_exit)
    with pytest.raises(Exited) as exited:
        cli.run()
    assert exited.value.args == (code,)
    assert capsys.readouterr().err == said
