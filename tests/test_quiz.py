"""The quiz: typed answers judged at once, only right ones written (typed as the
question expects), a way to skip and a way out at every prompt, and a summary on leaving.

Driven as a student drives it: on a pseudo-terminal, and through piped input.
"""

import shutil

import pytest
from conftest import EXERCISES, grade_in_workers, run_here
from terminal import CTRL_C, CTRL_D, through_a_terminal

from grader.quiz import ANSWER, OWN, STUB, current


@pytest.fixture
def work(tmp_path):
    folder = tmp_path / "quiz"
    shutil.copytree(EXERCISES / "day3", folder, ignore=shutil.ignore_patterns(".*"))
    return folder


def quiz(work, *args, lang="en"):
    return ["quiz", "day3", *args, "--submission", work, "--lang", lang]


def test_right_answers_are_saved_typed_a_wrong_one_is_not_and_grading_reads_them(work):
    # v; {k, v}; False; own_v; fewer_params (a slip the notes name); kv_params+kv_cache;
    # False; sharper; (skipped); q_values+k_values
    answers = ["3", "2, 3", "2", "1", "3", "2 3", "2", "1", "", "1 2"]
    code, out = through_a_terminal(quiz(work, "concepts"), ["x9"] + answers)
    assert code == 1, out                                      # an answer was wrong
    assert "please type 1-4" in out                            # a bad answer is asked again
    assert "empty line: skip; q, Ctrl-D or Ctrl-C: stop" in out
    assert "'fewer_params' is not right" in out and "qk-same-matrix" in out
    assert "asymmetry" not in out.split("'fewer_params' is not right")[1].split("question")[0]
    assert "not saved: concepts.py keeps what it had" in out and "skipped" in out
    assert "9 answered (8 right, 1 wrong), 8 saved in concepts.py, 1 left" in out
    path = work / "concepts.py"
    assert current(path, "cached_during_decode") == (ANSWER, {"k", "v"})
    assert "return {'k', 'v'}" in path.read_text()              # a set, as the reference's
    assert current(path, "multihead_adds_parameters") == (ANSWER, False)
    assert current(path, "why_separate_wq_wk") == (STUB, None)   # the wrong answer: not kept
    assert current(path, "rope_adds_parameters") == (STUB, None)  # skipped
    [(_, doc)] = grade_in_workers([["day3", "--submission", work, "--exercise", "concepts",
                                    "--json"]])
    failed = {t["extra_data"]["check"] for t in doc["tests"] if t["status"] == "failed"}
    assert failed == {"separate-wq-wk", "rope-params"}


@pytest.mark.parametrize("leave", ["q", CTRL_D, CTRL_C])
def test_every_way_out_says_what_was_kept_and_never_aborts(work, leave):
    code, out = through_a_terminal(quiz(work, "kv_cache"), ["524288", leave])
    assert code == 0, out
    assert "Aborted" not in out and "Traceback" not in out
    assert "1 answered (1 right, 0 wrong), 1 saved in kv_cache.py, 1 left" in out
    text = (work / "kv_cache.py").read_text()
    assert "    return 524288\n" in text                        # a number, not '524288'
    assert current(work / "kv_cache.py", "llama3_8b_kv_per_token") == (STUB, None)


def test_piped_input_ends_with_a_summary_and_a_second_quiz_asks_what_is_left_first(work):
    proc = run_here(*quiz(work, "kv_cache", lang="zh"), input="524288\n524288\n")
    assert proc.returncode == 1 and "Aborted" not in proc.stderr + proc.stdout
    assert "作答 2 题（对 1 题，错 1 题），1 题保存在 kv_cache.py，还剩 0 题" in proc.stdout
    assert "没有保存：kv_cache.py 保持原样" in proc.stdout
    proc = run_here(*quiz(work, "kv_cache"), input="")           # the end of input at once
    assert proc.returncode == 0 and "Aborted" not in proc.stderr + proc.stdout
    assert "1 question(s) already answered right in your files come last" in proc.stdout
    first = proc.stdout.split("question 1 of 2")[1]
    assert first.split("\n")[1].strip().startswith("Llama-3-8B")  # not yet right: first
    assert "0 answered (0 right, 0 wrong), none saved, 2 left" in proc.stdout


def test_code_of_ones_own_is_replaced_only_when_the_student_says_yes(work):
    path = work / "kv_cache.py"
    head, tail = path.read_text().split("def llama2_7b_kv_per_token", 1)
    path.write_text(head + "def llama2_7b_kv_per_token" + tail.replace(
        "raise NotImplementedError", "return kv_cache_bytes(CONFIG, 1)", 1))
    assert current(path, "llama2_7b_kv_per_token")[0] == OWN
    proc = run_here(*quiz(work, "kv_cache"), input="524288\n")      # piped: never asked
    assert "keeps your own code" in proc.stdout
    assert current(path, "llama2_7b_kv_per_token")[0] == OWN
    code, out = through_a_terminal(quiz(work, "kv_cache"), ["524288", "n", "q"])
    assert "replace it with \"return 524288\"? [y/N]" in out and "keeps your own code" in out
    assert current(path, "llama2_7b_kv_per_token")[0] == OWN
    code, out = through_a_terminal(quiz(work, "kv_cache"), ["524288", "y", "q"])
    assert code == 0 and "saved: llama2_7b_kv_per_token in kv_cache.py now returns 524288" \
        in out
    assert current(path, "llama2_7b_kv_per_token") == (ANSWER, 524288)
    path.write_text(path.read_text().replace("return 524288", "return 1"))
    proc = run_here(*quiz(work, "kv_cache"), input="524288\n")   # an answer of one's own
    assert "keeps your own code" in proc.stdout
    assert current(path, "llama2_7b_kv_per_token") == (ANSWER, 1)


QUESTION = """\
format_version: 1
id: demo
title: {zh: 演示, en: Demo}
prompt:
  zh: 一个 12 层的模型（见 config.json），每层有几个头就有几组 KV。
  en: A model of 12 layers (see config.json), with one KV group per head in each layer.
functions: [kv_groups]
points: 2
misconceptions:
  - tag: one-layer
    message: {zh: '只算了一层：要乘 12 层。', en: 'One layer was counted: multiply by 12.'}
    when: {ratio: 0.0833333333333333}
  - tag: query-heads
    message:
      zh: '%(zh)s'
      en: '%(en)s'
    when: {ratio: 4}
checks:
  - id: groups
    call: kv_groups
    compare: number
"""


@pytest.mark.parametrize("message,given_away", [
    ({"en": "This model has only 8 KV heads in a layer.", "zh": "这个模型每层只有 8 个 KV 头。"},
     True),
    ({"en": "You counted the query heads; see num_key_value_heads in the config.",
      "zh": "你数的是 query 头；见 config 的 num_key_value_heads。"}, False)])
def test_dev_check_fails_a_message_that_gives_away_a_number_to_find(tmp_path, message,
                                                                     given_away):
    from conftest import make_course, run_here

    make_course(tmp_path, QUESTION % message)
    (tmp_path / "exercises/demo/demo.py").write_text(
        'def kv_groups():\n    """KV groups of the whole model.\n\n    中文：整个模型的 KV 组数。\n'
        '    """\n    raise NotImplementedError\n')
    (tmp_path / "solutions/demo/demo.py").write_text("def kv_groups():\n    return 12 * 8\n")
    proc = run_here("dev", "check", "--course", tmp_path, "--lang", "en")
    said = [line for line in proc.stdout.splitlines() if "states" in line]
    if given_away:
        assert proc.returncode == 1
        assert said == [
            f"✗ demo/demo: exercises/demo/demo.yaml:{n}: the {lang} message of misconception "
            "query-heads states 8, a number the answer to kv_groups depends on and its "
            "question does not state: name the mistake, not the number"
            for lang, n in (("en", 16), ("zh", 15))], proc.stdout
    else:   # 12 is in the question: a message may say it
        assert said == [], proc.stdout
