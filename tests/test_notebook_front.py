"""The notebook where students use it (issue 31, part 1): scratch cells cost nothing,
errors name the cell, an unsaved cell is named, every notebook problem is one sentence
in the student's language, and a failed visible array check is an HTML table."""

import json
import os
import re

import pytest
import test_notebook
from conftest import ROOT, run_cli
from test_notebook import code_cell, filled, solution

pytestmark = pytest.mark.extra("notebook")
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

SCRATCH = "Q = np.eye(3)\nout, w = attention(Q, Q, Q)\nprint(out)\n"
HELPERS = "import numpy as np\nSCALE = 1.0\n\ndef helper(x):\n    return x * SCALE\n"
NO_MASK = "\nattention = attention_no_mask\n"
blank = test_notebook.blank   # the fixture: the day3 notebook as attn-grade writes it


def with_cell_after(notebook, file, source):
    """``notebook`` with an untagged code cell ``source`` right after ``file``'s cell."""
    at = notebook.cells.index(code_cell(notebook, file)) + 1
    notebook.cells.insert(at, nbformat.v4.new_code_cell(source))
    return notebook


def code_number(notebook, file):
    """The cell of ``file`` as the student counts it: its place among the code cells."""
    code = [c for c in notebook.cells if c.cell_type == "code"]
    return 1 + code.index(code_cell(notebook, file))


def test_untagged_cells_give_their_definitions_and_keep_line_numbers():
    from grader.instructor.notebook_cells import definitions_only

    code = ("import numpy as np\nfrom math import pi\nEPS = 1e-9\nX = np.zeros(3)\n"
            "@staticmethod\ndef f(x):\n    return x\nclass A:\n    pass\nprint(f(1))\n"
            "import os; os.remove('x')\n")
    kept = definitions_only(code).split("\n")
    assert len(kept) == len(code.split("\n"))
    assert kept[:3] == ["import numpy as np", "from math import pi", "EPS = 1e-9"]
    assert kept[3] == "" and kept[9] == "" and kept[10] == ""   # a call, a print, a mix
    assert kept[4:9] == code.split("\n")[4:9]                    # decorated def, class
    assert definitions_only("this is not ( python") == ""


def test_a_scratch_cell_calling_attention_leaves_temperature_at_full_marks(blank, tmp_path):
    """Trying one's function below its cell runs in the kernel only; a helper and a
    constant of an untagged cell still reach the exercise that uses them."""
    code = {"temperature.py": solution("temperature.py", "\n_checked = helper(2.0)\n"),
            "attention.py": solution("attention.py")}
    notebook = with_cell_after(filled(blank, code), "attention.py", SCRATCH)
    notebook.cells.insert(2, nbformat.v4.new_code_cell(HELPERS))
    nbformat.write(notebook, str(tmp_path / "work.ipynb"))
    done = run_cli("day3", "--submission", tmp_path / "work.ipynb", "--json", "--lang", "en",
                   "--exercise", "temperature")
    document = json.loads(done.stdout)
    assert document["score"] == document["max_score"] > 0, document["output"]


def test_the_intro_states_the_rule_in_both_languages():
    from grader.judge.msg import Msg
    from grader.report.messages import render

    assert "imports, functions, classes and constants" in render(Msg("notebook-intro"), "en")
    assert "导入语句、函数、类和常量" in render(Msg("notebook-intro"), "zh")


@pytest.fixture
def ag():
    from grader import notebook

    yield notebook
    notebook._state.set_id = None   # the next test starts uninitialised


PROBLEMS = {   # call -> the sentence, in en and zh ({path}: the folder of the test)
    "init_set": ("there is no exercise set 'nope' in this course; its sets are: c3-l2, day3",
                 "这个课程里没有练习集 'nope'；已有的练习集：c3-l2, day3"),
    "init_path": ("there is no notebook {path}/missing.ipynb; give ag.init the path of your "
                  "saved .ipynb file",
                  "找不到笔记本 {path}/missing.ipynb；请把已保存的 .ipynb 文件的路径告诉 ag.init"),
    "check": ("there is no exercise 'nope' in day3; its exercises are: temperature, "
              "attention_by_hand, attention",
              "day3 里没有练习 'nope'；它的练习有：temperature, attention_by_hand, attention"),
    "uninitialised": ('run the first cell first: ag.init("SET")',
                      '请先运行第一个单元格：ag.init("SET")'),
    "not_ipynb": ("{path}/work.py is not a notebook (a .ipynb file); give ag.init the path of "
                  "your saved .ipynb file",
                  "{path}/work.py 不是笔记本（.ipynb 文件）；请把已保存的 .ipynb 文件的路径告诉 "
                  "ag.init"),
    "none": ('cannot tell which notebook to grade (no .ipynb file in {path}); name it: '
             'ag.init("day3", path="work.ipynb")',
             '无法确定要评分的笔记本（{path} 里没有 .ipynb 文件）；请指明它：'
             'ag.init("day3", path="work.ipynb")'),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_notebook_problem_is_one_sentence_in_the_students_language(ag, blank, tmp_path,
                                                                       monkeypatch, lang):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTN_GRADE_LANG", lang)   # before ag.init, the kernel's language
    said = {key: text[lang == "zh"].format(path=tmp_path) for key, text in PROBLEMS.items()}
    ag._state.set_id = None
    assert repr(ag.check("attention")) == said["uninitialised"]
    assert repr(ag.init("nope", path="work.ipynb", course=ROOT, lang=lang)).startswith(
        said["init_set"])
    assert repr(ag.init("day3", path="missing.ipynb", course=ROOT, lang=lang)) == \
        said["init_path"]
    assert "missing.ipynb" in repr(ag.check("attention"))   # said again, not click's words
    (tmp_path / "work.py").write_text("x = 1\n")
    assert repr(ag.init("day3", path="work.py", course=ROOT, lang=lang)) == said["not_ipynb"]
    assert repr(ag.init("day3", course=ROOT, lang=lang)) == said["none"]
    nbformat.write(blank, str(tmp_path / "work.ipynb"))
    assert ag.init("day3", path="work.ipynb", course=ROOT, lang=lang) is None
    for result in (ag.check("nope"), ag.hint("nope")):
        text = repr(result)
        assert text.startswith(said["check"]) and "\n" not in text
        assert "Traceback" not in text and "--" not in text and "hint:" not in text
        assert "<div" in result._repr_html_() and not hasattr(result, "_repr_json_")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_error_at_import_names_the_code_cell_and_its_line(ag, blank, tmp_path, lang):
    broken = "import numpy as np\n\nraise ValueError('boom')\n"
    notebook = filled(blank, {"attention.py": broken})
    nbformat.write(notebook, str(tmp_path / "work.ipynb"))
    ag.init("day3", path=tmp_path / "work.ipynb", course=ROOT, lang=lang)
    text = repr(ag.check("attention"))
    cell = code_number(notebook, "attention.py")
    where = f"code cell {cell}, line 3" if lang == "en" else f"第 {cell} 个代码单元格第 3 行"
    assert where in text and "attention.py, line" not in text, text


def test_the_stubs_group_as_in_the_terminal_with_the_hint_nudge(ag, blank, tmp_path):
    nbformat.write(blank, str(tmp_path / "work.ipynb"))
    ag.init("day3", path=tmp_path / "work.ipynb", course=ROOT, lang="en")
    result = ag.check("attention")
    lines = repr(result).split("\n")
    assert sum("not implemented yet" in line for line in lines) == 1, lines
    assert "3 hint(s) available: ag.hint('attention')" in repr(result)
    assert "3 hint(s) available" in result._repr_html_()
    assert result.exercises == {"attention": (0.0, 14.0)} and not result.passed


def test_a_failed_visible_array_check_is_an_html_table_with_its_cells_marked(ag, blank,
                                                                            tmp_path):
    notebook = filled(blank, {"attention.py": solution("attention.py", NO_MASK)})
    nbformat.write(notebook, str(tmp_path / "work.ipynb"))
    ag.init("day3", path=tmp_path / "work.ipynb", course=ROOT, lang="en")
    page = ag.check("attention")._repr_html_()
    weights = page[page.index("seed-weights"):]
    weights = weights[:weights.index("decode-step")]
    tables = re.findall(r"<table class='attn-grade-array'.*?</table>", weights)
    assert len(tables) == 2 and "your answer" in tables[0] and "expected" in tables[1]
    rows = [re.findall(r"<td class='(\w+)'", row) for row in tables[1].split("<tr>")[2:]]
    assert rows == [["differs"] * 3, ["differs"] * 3, ["same"] * 3]
    assert "1.0000" in tables[1] and "0.5035" in tables[0]
    hidden = page[page.index("hidden: random-causal"):]
    assert "attn-grade-array" not in hidden        # hidden checks show no values


def run_unsaved(saved, ran, folder):
    """The check cell's text when the file holds ``saved`` and the kernel ran ``ran``."""
    nbformat.write(saved, str(folder / "work.ipynb"))
    os.environ["PYTHONPATH"] = str(ROOT)
    client = nbclient.NotebookClient(ran, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(folder)}})
    client.execute()
    cell = next(c for c in ran.cells if c.source == "ag.check('temperature')")
    return next(o["data"]["text/plain"] for o in cell.outputs if "data" in o)


@pytest.mark.slow   # a real kernel: run by .ci/run's `pytest -m "extra or slow"` step
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_cell_run_but_not_saved_is_named(blank, tmp_path, monkeypatch, lang):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    right = filled(blank, {"temperature.py": solution("temperature.py")})
    right.cells[1].source = right.cells[1].source.replace("lang='en'", f"lang={lang!r}")
    saved = nbformat.from_dict(json.loads(json.dumps(right)))
    code_cell(saved, "temperature.py").source = code_cell(blank, "temperature.py").source
    cell = code_number(saved, "temperature.py")
    text = run_unsaved(saved, right, tmp_path)
    said = (f"differs from what you ran in code cell {cell}: save it (Ctrl+S)" if lang == "en"
            else f"与你在第 {cell} 个代码单元格中运行的代码不同：请先保存（Ctrl+S）")
    assert said in text, text
    if lang == "en":   # saved as run: nothing to say
        text = run_unsaved(right, nbformat.from_dict(json.loads(json.dumps(right))), tmp_path)
        assert "Ctrl+S" not in text and "10 / 10" in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ag_hint_shows_what_was_revealed_and_reveals_only_when_asked(ag, blank, tmp_path, lang):
    """Looking again costs nothing: only next=True reveals (and counts) a hint."""
    from grader.report.progress import Progress

    nbformat.write(blank, str(tmp_path / "work.ipynb"))
    ag.init("day3", path=tmp_path / "work.ipynb", course=ROOT, lang=lang)
    counted = lambda: Progress(tmp_path).record("day3", "attention").hints   # noqa: E731
    first = repr(ag.hint("attention"))
    assert counted() == 0 and "ag.hint('attention', next=True)" in first
    revealed = repr(ag.hint("attention", next=True))
    assert counted() == 1 and ("hint 1 of 3" if lang == "en" else "第 1") in revealed
    again = repr(ag.hint("attention"))
    assert counted() == 1 and again.split("\n")[:2] == revealed.split("\n")[:2]


def test_a_notebook_check_is_an_attempt_in_progress(ag, blank, tmp_path):
    from grader.report.progress import Progress

    nbformat.write(blank, str(tmp_path / "work.ipynb"))
    ag.init("day3", path=tmp_path / "work.ipynb", course=ROOT, lang="en")
    ag.check("attention")
    ag.check("attention")
    assert Progress(tmp_path).record("day3", "attention").attempts == 2
