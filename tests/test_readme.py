"""The README's set-up, as a newcomer types it and as CI runs it (issue 33).

CI (.ci/run) reads the README's venv line and its two opening lines with
.ci/readme_commands.py and types them first, as root, in a fresh virtual environment on
a fresh copy of the checkout.  The slow test here types them as a normal user on
Debian's own Python, which refuses installs outside a virtual environment.
"""

import importlib.util
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, SYSTEM_PYTHON

from grader.run import sandbox

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_commands():
    spec = importlib.util.spec_from_file_location("readme_commands",
                                                  ROOT / ".ci" / "readme_commands.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ci_steps():
    return [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_lines_ci_types_are_the_ones_the_readme_opens_with():
    title, rest = README.split("\n", 1)
    assert title == "# attn-grade"
    assert rest.lstrip("\n").startswith("```sh\n"), "the README opens with its commands"
    opening = rest.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    venv, grade, tests = _readme_commands().commands(README)
    assert [grade, tests] == opening
    assert grade == "python3 -m pip install -e . && attn-grade day3"
    assert tests == "python3 -m pip install -e '.[test]' && python3 -m pytest -q"
    assert venv == "python3 -m venv .venv && . .venv/bin/activate"


def test_a_readme_out_of_shape_is_refused_by_name():
    commands = _readme_commands().commands
    for text, why in (("# x\n```sh\nattn-grade day3\n```\n", "exactly two lines"),
                      ("```sh\npip install .\npytest\n```\n", "grade day3"),
                      ("```sh\na && attn-grade day3\npytest\n```\n", "virtual environment")):
        with pytest.raises(ValueError, match=why):
            commands(text)


def test_ci_types_the_readme_before_it_installs_anything():
    steps = _ci_steps()
    assert "set -euo pipefail" in steps
    read = steps.index("mapfile -t setup < <(python3 .ci/readme_commands.py)")
    typed = [next(i for i, step in enumerate(steps)
                  if step.startswith(f'eval "${{setup[{n}]}}"')) for n in range(3)]
    installs = [i for i, step in enumerate(steps) if "pip install" in step]
    assert read < typed[0] < typed[1] < typed[2] < min(installs)
    later = steps[min(installs):]
    for step in ("python3 -m ruff check .", "python3 -m mypy grader",
                 "python3 -m grader dev check --course .",
                 'python3 -m pytest -q -m "extra or slow"'):
        assert step in later


@pytest.fixture
def newcomer_folder():
    """A home of its own under /tmp (pytest's folders are root's alone, mode 0700)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="attn-grade-newcomer-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _unused_uid():
    for uid in range(4200, 4300):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    pytest.skip("no unused uid in 4200..4299")


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="as root: a normal user's run through setpriv")
@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists() or shutil.which("setpriv") is None,
                    reason="needs Debian's Python and setpriv")
def test_the_readme_as_a_normal_user_on_a_python_that_refuses_installs(newcomer_folder):
    """Debian's Python refuses `pip install` outside a venv; with the README's venv line
    first, its two lines grade the stubs (0 points) and pass the suite, as a normal
    user whose files are their own."""
    externally_managed = list(Path("/usr/lib").glob("python3*/EXTERNALLY-MANAGED"))
    if not externally_managed:
        pytest.skip("Debian's Python here accepts installs outside a venv")
    uid = _unused_uid()
    home = newcomer_folder
    checkout = home / "attn-grade"
    (home / "tmp").mkdir()
    shutil.copytree(ROOT, checkout, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", "*.egg-info", ".attn-grade"))
    for top, dirs, files in os.walk(home):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            os.lchown(name, uid, uid)
    venv, grade, tests = _readme_commands().commands(README)
    script = "\n".join([
        "cd attn-grade",
        "python3 -m pip install -e . > outside.txt 2>&1; echo \"outside: $?\"",
        venv,
        f"{{ {grade}; }} > day3.txt 2>&1; echo \"grade: $?\"",
        f"{{ {tests}; }} > tests.txt 2>&1; echo \"tests: $?\""])
    proc = subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
         # a temporary folder of its own: /tmp/pytest-of-USER is another uid's when this
         # uid has no name (pytest calls it "unknown")
         "env", "-i", f"HOME={home}", f"TMPDIR={home / 'tmp'}", "PATH=/usr/bin:/bin",
         "LANG=C.UTF-8",
         "bash", "-c", script],
        cwd=home, capture_output=True, text=True, timeout=1200)
    said = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    assert set(said) == {"outside", "grade", "tests"}, proc.stdout + proc.stderr
    read = {name: (checkout / f"{name}.txt").read_text(errors="replace")
            for name in ("outside", "day3", "tests")}
    assert said.get("outside") != "0" and "externally-managed-environment" in read["outside"]
    assert said.get("grade") == "1", read["day3"][-3000:]
    graded = read["day3"].strip().splitlines()
    first = next(line for line in graded if line.startswith("attn-grade day3  ("))
    last = graded[-1]
    assert first == "attn-grade day3  (bubblewrap)" or not sandbox.bubblewrap_works(), first
    assert "not implemented yet" in read["day3"]
    assert ": 0 / 125 points" in last
    assert said.get("tests") == "0", read["tests"][-5000:]
    assert " passed" in read["tests"].strip().splitlines()[-1]
