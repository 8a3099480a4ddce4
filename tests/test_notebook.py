"""Jupyter as a front end (issue 12): the student notebook, check() in a real kernel,
.ipynb submissions graded like the same code in .py files."""

import json
import os
import shutil

import pytest
from conftest import EXERCISES, FULL_DAY3, ROOT, SOLUTIONS, extra_missing, run_cli

pytestmark = pytest.mark.extra("notebook")
WHY = extra_missing("notebook")
nbformat = pytest.importorskip("nbformat", reason=WHY)
nbclient = pytest.importorskip("nbclient", reason=WHY)
pytest.importorskip("ipykernel", reason=WHY)

SOME = ("temperature", "attention", "multihead")   # the exercises these tests fill in
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}       # this worktree's grader, from any folder

MISTAKES = {   # the notes' common mistakes, as a student would write them
    "attention.py": "\nattention = attention_no_mask\n",
    "multihead.py": "\nmulti_head_attention = multi_head_attention_tiled\n",
}
HOSTILE_TEMPERATURE = '''
import os
import numpy as np

class Anything:
    def __eq__(self, other):
        return True
    def __array__(self, *a, **k):
        return np.zeros(3)

def softmax(logits, T=1.0):
    return Anything()

def greedy(logits):
    os._exit(0)
'''
MONKEYPATCH = '''
import numpy as np
np.allclose = lambda *a, **k: True
np.isclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
'''


@pytest.fixture(scope="module")
def blank(tmp_path_factory):
    """The day3 student notebook as ``attn-grade notebook`` writes it."""
    path = tmp_path_factory.mktemp("nb") / "blank.ipynb"
    done = run_cli("notebook", "day3", "-o", path, "--lang", "en")
    assert done.returncode == 0, done.stderr
    return nbformat.read(str(path), as_version=4)


def code_cell(notebook, file):
    return next(c for c in notebook.cells if c.cell_type == "code"
                and c.metadata.get("attn_grade", {}).get("file") == file)


def filled(blank, code):
    """A copy of the blank notebook whose cells for each file hold ``code[file]``."""
    notebook = nbformat.from_dict(json.loads(json.dumps(blank)))
    for file, text in code.items():
        code_cell(notebook, file).source = text
    return notebook


def solution(file, extra=""):
    return (SOLUTIONS / "day3" / file).read_text(encoding="utf-8") + extra


def execute(notebook, folder, name="work.ipynb"):
    """Save ``notebook`` in ``folder`` (check() grades the saved file), run it top to
    bottom in a real kernel, and return the executed notebook."""
    path = folder / name
    nbformat.write(notebook, str(path))
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT)     # the kernel imports this worktree's grader
    try:
        client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                         resources={"metadata": {"path": str(folder)}})
        client.execute()
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old
    return notebook


RESULTS = ("import json\nprint(json.dumps({ex: {'score': list(r.exercises[ex]), 'tags': r.tags}"
           " for r in Out.values() if isinstance(r, ag.Result) for ex in r.exercises}))")


def check_outputs(notebook):
    """{exercise id: {score: [score, max], tags}} of the check cells, as the Results'
    attributes (a last cell, added by ``execute_checked``, prints them from ``Out``)."""
    return json.loads(notebook.cells[-1].outputs[0]["text"])


def execute_checked(notebook, folder):
    """``execute`` with a last cell printing the check cells' Results (``check_outputs``)."""
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    notebook.cells.append(nbformat.v4.new_code_cell(RESULTS))
    return execute(notebook, folder)


def shown(cell, kind):
    """The ``kind`` (text/html, text/plain) of what ``cell`` displayed."""
    return next(o["data"][kind] for o in cell.outputs if kind in o.get("data", {}))


def test_the_notebook_has_a_cell_per_exercise_and_a_check_cell(blank):
    assert blank.metadata["attn_grade"]["set"] == "day3"
    assert "ag.init('day3'" in blank.cells[1].source
    assert "from grader import notebook as ag" in blank.cells[1].source
    checks = [c.source for c in blank.cells if c.source.startswith("ag.check(")]
    assert checks == [f"ag.check({ex!r})" for ex in FULL_DAY3]   # one per exercise, in order
    stub = code_cell(blank, "attention.py").source
    assert "def attention(Q, K, V, causal=True):" in stub and "EN:" in stub
    titles = [c.source for c in blank.cells if c.cell_type == "markdown"]
    assert any(t.startswith("## attention · ") for t in titles)
    nbformat.validate(blank)


def test_without_the_extra_the_cli_says_how_to_install_it(tmp_path):
    (tmp_path / "nbformat.py").write_text("raise ImportError('not installed')\n")
    env = {**ENV, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    done = run_cli("notebook", "day3", "-o", tmp_path / "x.ipynb", "--lang", "en", env=env)
    assert done.returncode == 2
    assert "pip install 'attn-grade[notebook]'" in done.stderr
    assert not (tmp_path / "x.ipynb").exists()
    done = run_cli("list", env=env)     # the rest of the CLI does not need it
    assert done.returncode == 0, done.stderr


@pytest.mark.slow   # a real kernel (or a class): run by .ci/run's `pytest -m slow` step
def test_check_cells_grade_correct_code_and_name_the_notes_mistakes(blank, tmp_path):
    """One kernel: temperature right, attention and multihead with the notes' mistakes,
    numpy monkeypatched in the kernel; then the same cells right in a second kernel."""
    right = {f"{e}.py": solution(f"{e}.py") for e in SOME}
    (tmp_path / "right").mkdir()
    ran = execute_checked(filled(blank, right), tmp_path / "right")
    got = check_outputs(ran)
    for ex_id in SOME:
        score, top = got[ex_id]["score"]
        assert score == top > 0, (ex_id, got[ex_id])
        assert got[ex_id]["tags"] == []
    html = shown(next(c for c in ran.cells if c.source == "ag.check('attention')"), "text/html")
    assert "✓" in html and "<div" in html
    # JupyterLab shows a JSON representation over the HTML: a check offers none
    assert not [o for c in ran.cells for o in c.get("outputs", [])
                if "application/json" in o.get("data", {})]

    wrong = {**right, **{f: solution(f, extra) for f, extra in MISTAKES.items()}}
    notebook = filled(blank, wrong)
    notebook.cells.insert(2, nbformat.v4.new_code_cell(MONKEYPATCH))
    (tmp_path / "wrong").mkdir()
    got = check_outputs(execute_checked(notebook, tmp_path / "wrong"))
    assert "no-causal-mask" in got["attention"]["tags"]
    assert "gqa-tile-grouping" in got["multihead"]["tags"]
    for ex_id in ("attention", "multihead"):
        score, top = got[ex_id]["score"]
        assert score < top, (ex_id, got[ex_id])
    score, top = got["temperature"]["score"]
    assert score == top


@pytest.mark.slow   # a real kernel (or a class): run by .ci/run's `pytest -m slow` step
def test_a_hostile_cell_changes_no_verdict_and_the_kernel_lives(blank, tmp_path):
    notebook = filled(blank, {"temperature.py": HOSTILE_TEMPERATURE})
    notebook.cells.insert(2, nbformat.v4.new_code_cell(MONKEYPATCH))
    notebook.cells.append(nbformat.v4.new_code_cell("print('kernel alive')"))
    ran = execute_checked(notebook, tmp_path)
    got = check_outputs(ran)
    assert got["temperature"]["score"][0] == 0
    assert "kernel alive" in ran.cells[-2].outputs[0]["text"]
    text = shown(next(c for c in ran.cells if c.source == "ag.check('temperature')"),
                 "text/plain")
    assert "✗" in text and "temperature" in text


def test_a_notebook_submission_scores_as_the_same_code_in_py_files(blank, tmp_path):
    code = {"temperature.py": solution("temperature.py"),
            "attention.py": solution("attention.py", MISTAKES["attention.py"]),
            "multihead.py": solution("multihead.py")}
    nbformat.write(filled(blank, code), str(tmp_path / "work.ipynb"))
    folder = tmp_path / "files"
    shutil.copytree(EXERCISES / "day3", folder)
    for file, text in code.items():
        (folder / file).write_text(text, encoding="utf-8")
    only = [arg for e in SOME for arg in ("--exercise", e)]
    docs = []
    for submission in (tmp_path / "work.ipynb", folder):
        done = run_cli("day3", "--submission", submission, "--json", "--lang", "en", *only)
        assert done.returncode == 1, done.stderr
        docs.append(json.loads(done.stdout))
    scores = [{t["name"]: (t["score"], t["status"], t["tags"]) for t in d["tests"]}
              for d in docs]
    assert scores[0] == scores[1]
    assert docs[0]["score"] == docs[1]["score"] > 0


def test_code_that_does_not_parse_names_its_cell_and_line(blank, tmp_path):
    notebook = filled(blank, {"attention.py": "import numpy as np\n\ndef attention(Q, K, V:\n"})
    nbformat.write(notebook, str(tmp_path / "work.ipynb"))
    code = [c for c in notebook.cells if c.cell_type == "code"]
    cell = 1 + next(i for i, c in enumerate(code)
                    if c.metadata.get("attn_grade", {}).get("file") == "attention.py")
    done = run_cli("day3", "--submission", tmp_path / "work.ipynb", "--json",
                   "--exercise", "attention", "--lang", "en")
    assert done.returncode == 1
    output = json.loads(done.stdout)["output"]
    assert f"code cell {cell}, line 3" in output, output


def test_an_upload_holding_a_notebook_is_graded_from_its_cells(blank, tmp_path):
    upload = tmp_path / "upload" / "deep"
    upload.mkdir(parents=True)
    nbformat.write(filled(blank, {"temperature.py": solution("temperature.py")}),
                   str(upload / "mine.ipynb"))
    done = run_cli("day3", "--upload", tmp_path / "upload", "--json", "--exercise",
                   "temperature", "--lang", "en")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["score"] > 0


def test_magics_shell_lines_and_ag_cells_are_left_out():
    from grader.instructor import notebook_cells

    notebook = {"cells": [
        {"cell_type": "code", "source": "from grader import notebook as ag\nag.init('x')"},
        {"cell_type": "code", "source": "%matplotlib inline\n!pip list\nx = 1"},
        {"cell_type": "code", "source": "%%timeit\nnot python at all ("},
        {"cell_type": "markdown", "source": "not code ("},
        {"cell_type": "code", "source": "y = x", "metadata": {"attn_grade": {"file": "b.py"}}},
    ]}
    sources = notebook_cells.stub_sources(notebook, ["a.py", "b.py"])
    assert "x = 1" in sources["a.py"] and "y = x" not in sources["a.py"]
    assert "y = x" in sources["b.py"] and "ag." not in sources["b.py"]
    assert "%" not in sources["a.py"] and "!" not in sources["a.py"]


@pytest.mark.slow   # a real kernel (or a class): run by .ci/run's `pytest -m slow` step
def test_grade_all_takes_a_notebook_per_student(blank, tmp_path):
    code = {"attention.py": solution("attention.py", MISTAKES["attention.py"])}
    (tmp_path / "class" / "bob").mkdir(parents=True)
    nbformat.write(filled(blank, code), str(tmp_path / "class" / "alice.ipynb"))
    nbformat.write(filled(blank, code), str(tmp_path / "class" / "bob" / "work.ipynb"))
    done = run_cli("grade-all", "day3", tmp_path / "class", "-o", tmp_path / "out",
                   "--exercise", "attention", "-j", "2")
    assert done.returncode in (0, 1), done.stderr
    rows = (tmp_path / "out" / "gradebook.csv").read_text().splitlines()
    alice, bob = (row.split(",") for row in rows[1:3])
    assert alice[0] == "alice" and bob[0] == "bob"
    assert alice[1] == bob[1] and 0 < float(alice[1]) < float(alice[2])
    assert alice[-1] == bob[-1] == "graded"


def test_a_submission_file_must_be_a_notebook(tmp_path):
    (tmp_path / "attention.py").write_text("x = 1\n")
    done = run_cli("day3", "--submission", tmp_path / "attention.py", "--exercise", "attention")
    assert done.returncode == 2 and ".ipynb" in done.stderr
