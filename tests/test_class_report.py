"""The class report: a small class graded with grade-all, its aggregates checked
against the known mistakes and the CSV, and the page opened in a headless browser."""

import csv
import io
import json
import shutil
import subprocess
import sys

import pytest
from conftest import EXERCISES, ROOT, SOLUTIONS, run_here

from grader.instructor import class_page, class_report
from grader.report import render as report

CHARTS = class_page.report_extra_available()
needs_charts = pytest.mark.extra("report")   # matplotlib, for the page's charts


def _student(folder, temperature=None, attention=None):
    """A copy of exercises/day3 with the two graded files as given (None: the stub)."""
    shutil.copytree(EXERCISES / "day3", folder)
    for name, text in (("temperature.py", temperature), ("attention.py", attention)):
        if text is not None:
            (folder / name).write_text(text)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Eight students graded with ``grade-all --report``: two correct, two without the
    causal mask, one multiplying by T, one with a syntax error (and the attention stub),
    one who handed in the stubs as they were and one who handed in nothing."""
    root = tmp_path_factory.mktemp("class")
    temperature = (SOLUTIONS / "day3" / "temperature.py").read_text()
    attention = (SOLUTIONS / "day3" / "attention.py").read_text()
    no_mask = attention.replace(
        "def attention(Q, K, V, causal=True):\n    return _attend(Q, K, V, causal, np.sqrt)",
        "def attention(Q, K, V, causal=True):\n    return _attend(Q, K, V, False, np.sqrt)")
    times_t = temperature.replace("z = np.asarray(logits, dtype=float) / T\n    z = z - z.max",
                                  "z = np.asarray(logits, dtype=float) * T\n    z = z - z.max", 1)
    assert no_mask != attention and times_t != temperature
    submissions = root / "submissions"
    submissions.mkdir()
    for name in ("ada", "bob"):
        _student(submissions / name, temperature, attention)
    for name in ("cy", "dee"):
        _student(submissions / name, temperature, no_mask)
    _student(submissions / "eve", times_t, attention)
    _student(submissions / "fay", "def softmax(logits, T=1.0:\n    return logits\n")
    _student(submissions / "gus")
    (submissions / "hal").mkdir()
    out = root / "out"
    proc = run_here("grade-all", "day3", submissions, "-o", out, "--course", ROOT, "--jobs",
                    "2", "--exercise", "temperature", "--exercise", "attention", "--lang", "en",
                    *(["--report"] if CHARTS else []))
    assert proc.returncode == 0, proc.stderr
    assert ("report.html" in proc.stdout) == CHARTS
    data_file = root / "report.json"
    proc = run_here("report", out, "--format", "json", "-o", data_file, "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(data_file.read_text())


def _gradebook(out):
    return {r["student"]: r for r in csv.DictReader(io.StringIO(
        (out / "gradebook.csv").read_text()))}


def test_the_aggregates_count_the_known_mistakes(graded_class):
    _, data = graded_class
    assert data["students"] == 8 and data["max_score"] == 24.0
    assert data["course"]["set"] == "day3" and data["course"]["isolation"]
    assert data["course"]["grader_version"] and data["course"]["graded_at"]
    tags = {m["tag"]: m for m in data["misconceptions"]}
    assert data["misconceptions"][0]["tag"] == "no-causal-mask"
    assert tags["no-causal-mask"]["students"] == 2
    assert tags["no-causal-mask"]["exercises"] == ["attention"]
    assert "causal mask" in tags["no-causal-mask"]["message"]["en"]
    assert tags["no-causal-mask"]["message"]["zh"]
    assert {"exercise": "attention", "check": "seed-weights", "students": 2} in \
        tags["no-causal-mask"]["checks"]
    assert tags["temperature-multiplied"]["students"] == 1
    assert tags["temperature-multiplied"]["exercises"] == ["temperature"]
    assert set(tags) == {"no-causal-mask", "temperature-multiplied"}
    errors = {e["kind"]: e for e in data["errors"]}
    assert errors["syntax-error"]["students"] == 1
    assert errors["syntax-error"]["exercises"] == [{"exercise": "temperature", "students": 1}]
    assert errors["not-implemented"]["exercises"] == [{"exercise": "attention", "students": 2},
                                                      {"exercise": "temperature", "students": 1}]
    assert set(errors) == {"syntax-error", "not-implemented", "empty"}
    # the failed checks count only those who attempted the exercise: not fay's attention
    # stub, nor gus's stubs, nor hal's nothing
    failed = {(c["exercise"], c["check"]): c["students"] for c in data["failed_checks"]}
    assert failed[("attention", "seed-weights")] == 2          # cy, dee
    assert failed[("temperature", "table-t05")] == 2           # eve, fay (a syntax error)
    exercises = {x["exercise"]: x for x in data["exercises"]}
    assert (exercises["attention"]["attempted"], exercises["attention"]["not_attempted"]) \
        == (5, 3)                                              # ada bob cy dee eve
    assert (exercises["temperature"]["attempted"], exercises["temperature"]["full_marks"]) \
        == (6, 4)                                              # ada bob cy dee eve fay
    assert data["not_attempted"] == {"students": 2, "empty": 1, "stubs": 1, "not_graded": 0}
    need_help = [s["student"] for s in data["need_help"]]
    assert need_help[:4] == ["fay", "gus", "hal", "cy"]       # lowest score, then most tags
    assert "ada" not in need_help and data["need_help"][0]["file"] == "results/fay.json"


def test_the_numbers_match_the_gradebook(graded_class):
    out, data = graded_class
    rows = _gradebook(out)
    assert {s["student"]: s["score"] for s in data["roster"]} == \
        {name: float(r["score"]) for name, r in rows.items()}
    assert data["gradebook_differs"] == []
    tried = {s["student"]: s["attempted"] for s in data["roster"]}
    for exercise in data["exercises"]:
        column = [float(r[exercise["exercise"]]) for name, r in rows.items()
                  if exercise["exercise"] in tried[name]]
        assert exercise["mean"] == round(sum(column) / len(column), 4)
        assert exercise["full_marks"] == sum(v == exercise["max_score"] for v in column)
    assert sum(data["scores"]["histogram"]["counts"]) == 8     # the totals: every student
    assert data["scores"]["full_marks"] == 2
    assert data["scores"]["histogram"]["counts"][-1] == 2 and \
        data["scores"]["histogram"]["counts"][0] == 3


@needs_charts
def test_the_page_is_one_file_with_charts_and_folded_details(graded_class):
    out, _ = graded_class
    page = (out / "report.html").read_text()
    assert page.count("<svg") == 3                      # scores, exercises, misconceptions
    for fetch in ("src=", "<link", "url(http", "<script", "<img", "@import"):   # no fetch
        assert fetch not in page, fetch
    assert "<metadata>" not in page
    assert '<a href="results/fay.json">' in page
    assert "<details>" in page and "no-causal-mask" in page
    assert page.index("no-causal-mask") < page.index("temperature-multiplied")


@needs_charts
def test_chinese_page(graded_class, tmp_path):
    out, data = graded_class
    page = class_page.page(data, "zh", class_page.href_to(out, tmp_path / "zh.html"))
    assert "全班的常见误解" in page and "缺少因果掩码" in page
    assert "Misconceptions" not in page
    import re
    from urllib.parse import unquote

    links = re.findall(r'<a href="([^"]+)">', page)
    assert links and all((tmp_path / unquote(link)).resolve().is_file() for link in links)


@needs_charts
def test_the_page_renders_in_a_browser(graded_class, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    out, _ = graded_class
    proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                           (out / "report.html").as_uri()],
                          capture_output=True, text=True, timeout=60)
    dom = proc.stdout
    assert "<svg" in dom, proc.stderr[-2000:]
    assert "<rect" in dom or "<path" in dom
    first = dom.index("Misconceptions across the class")
    assert dom.index("no-causal-mask", first) < dom.index("temperature-multiplied", first)
    # those who attempted nothing apart, and a column of who did not attempt each exercise
    assert "Attempted nothing: 2 (no file handed in: 1; every stub unchanged: 1;" in dom
    assert "<th class=\"n\">Not attempted</th>" in dom


# ------------------------------------------------------------------ pure functions

def _doc(student, score, tests=(), status="graded"):
    return {"score": score, "max_score": 10.0, "tests": list(tests),
            "extra_data": {"set": "s", "isolation": "process", "grader_version": "0.1.0",
                           "status": status, "student": student,
                           "exercises": [{"exercise": "e", "score": score, "max_score": 10.0}]}}


def _test(check, status, tags=(), output=""):
    return {"name": f"e: {check}", "status": status, "tags": list(tags), "output": output,
            "extra_data": {"exercise": "e", "check": check, "kind": "case", "hidden": False}}


@needs_charts
def test_student_strings_are_escaped_and_errors_classified_in_both_languages():
    evil = '<script>alert("x")</script>'
    entries = [
        {"file": "results/a.json", "doc": _doc(evil, 0.0, [
            _test("c1", "failed", [evil], "f.py has a syntax error: bad (f.py, line 1)"),
            _test("c2", "failed", [], "f.py 有语法错误"),
            _test("c3", "failed", [], "`f` is not defined in f.py — did you rename it?")])},
        {"file": "results/b.json", "doc": _doc("b", 10.0, [_test("c1", "passed")])},
        {"file": "results/c.json", "doc": report.not_graded("s", [], "error", "bad zip")},
    ]
    data = class_report.aggregate(entries, None, {evil: {"e": {"en": "<b>", "zh": "<b>"}}})
    kinds = {e["kind"]: e["students"] for e in data["errors"]}
    assert kinds == {"syntax-error": 1, "missing-function": 1, "not-graded": 1}
    assert data["misconceptions"][0]["message"] == {"en": "<b>", "zh": "<b>"}
    html = class_page.page(data, "en")
    assert "<script" not in html and "<b>" not in html and "&lt;script&gt;" in html


def test_classify_knows_the_catalogue_phrasings():
    zh = report.render(report.Msg("timeout", function="f", seconds=5), "zh")
    assert class_report.classify(zh) == "timeout"
    assert class_report.classify("importing a.py took longer than 10 s (the time limit)") == \
        "timeout"
    assert class_report.classify("expected 3, not 4") is None


def test_histogram_puts_every_total_in_one_bin():
    hist = class_report.histogram([0, 2.4, 2.39, 23.99, 24, 24], 24)
    assert hist["counts"] == [2, 1, 0, 0, 0, 0, 0, 0, 0, 3]
    assert hist["edges"][0] == 0 and hist["edges"][-1] == 24


def test_without_matplotlib_the_report_says_how_to_install_it(graded_class):
    out, _ = graded_class
    block = ("import sys; sys.modules['matplotlib'] = None; import grader.cli; "
             "grader.cli.main(prog_name='attn-grade')")
    proc = subprocess.run([sys.executable, "-c", block, "report", str(out), "--lang", "en"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "attn-grade[report]" in proc.stderr, proc.stderr
    data = subprocess.run([sys.executable, "-c", block, "report", str(out), "--format", "json",
                           "-o", str(out / "x.json")], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert data.returncode == 0, data.stderr          # the data needs no charts
    listing = subprocess.run([sys.executable, "-c", block, "list", "--lang", "en"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and "day3" in listing.stdout


def test_gradebook_totals_are_compared_by_the_id_the_csv_wrote():
    entries = [{"file": "results/x.json", "doc": _doc("=x", 7.25)},
               {"file": "results/y.json", "doc": _doc("y", 3.0)}]
    rows = [{"student": "'=x", "score": "7.25"}, {"student": "y", "score": "3.5"}]
    assert class_report.aggregate(entries, rows)["gradebook_differs"] == ["y"]


def test_odd_documents_do_not_break_the_report():
    odd = [{"score": "x", "tests": "none", "extra_data": []},
           {"score": 1, "max_score": 2, "tests": [{"tags": "abc", "status": "failed"}, 3],
            "extra_data": {"exercises": [{"exercise": "e", "score": None}, "e"]}}]
    data = class_report.aggregate([{"file": f"r{i}.json", "doc": d} for i, d in enumerate(odd)])
    assert data["students"] == 2 and data["misconceptions"] == []
    json.dumps(data)
    if CHARTS:
        assert "<svg" in class_page.page(data, "zh")
