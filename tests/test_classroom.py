"""``export github-classroom``: the template repository's workflow is valid YAML naming only
existing actions and steps; its commands, run here in the workflow's order, give each
step a ``result`` the grading reporter decodes (classroom-resources/
autograding-grading-reporter, src/main.js and notify-classroom.js) and CLASSROOM_RESULT
validates."""

import base64
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import SOLUTIONS, run_here, schema_valid
from platform_schemas import CLASSROOM_RESULT
from test_cli_grade import MISTAKES

from grader.instructor.classroom import ACTIONS, runner_ids, workflow_text

# the actions the workflow may name: each exists at this major version (the reporter's
# v1 tag is in its repository; checkout v4 and setup-python v5 are GitHub's own)
EXISTING = set(ACTIONS.values())
RUNNERS = re.compile(r"^([a-zA-Z0-9]+,)*[a-zA-Z0-9]+$")   # the reporter's own pattern


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    out = tmp_path_factory.mktemp("classroom") / "repo"
    proc = run_here("export", "github-classroom", "day3", "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


def _workflow(repo):
    return yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())


def _check_workflow(workflow):
    """Valid for GitHub Actions and the reporter: known actions, existing step ids."""
    assert "push" in workflow["on"]   # quoted in the file: unquoted, YAML 1.1 reads a bool
    job = workflow["jobs"]["run-autograding-tests"]
    assert workflow["permissions"]["checks"] == "write"
    steps = job["steps"]
    ids = [s["id"] for s in steps if "id" in s]
    assert len(ids) == len(set(ids))
    for step in steps:
        assert ("uses" in step) != ("run" in step), step
        if "uses" in step:
            assert step["uses"] in EXISTING, step["uses"]
    reporter = steps[-1]
    assert reporter["uses"] == ACTIONS["reporter"]
    runners = reporter["with"]["runners"]
    assert RUNNERS.match(runners) and runners.split(",") == ids
    for runner in ids:
        assert reporter["env"][f"{runner.upper()}_RESULTS"] == \
            "${{ steps." + runner + ".outputs.result }}"
    return steps


def test_the_workflow_is_valid_and_names_only_existing_actions_and_steps(template):
    steps = _check_workflow(_workflow(template))
    graded = [s for s in steps if "id" in s]
    assert graded and all("--format classroom" in s["run"] for s in graded)
    assert not list(template.rglob("*.hidden.yaml")) and not (template / "solutions").exists()
    readme = (template / "README.md").read_text()
    assert "## Handing in" in readme and "upload" not in readme.lower()


def test_hidden_checks_fetched_from_a_private_repository():
    from grader.course.spec import Text

    class Exercise:
        id, file, title = "kv_cache", "kv_cache.py", Text(zh="KV 缓存", en="The KV cache")

    workflow = yaml.safe_load(workflow_text("day3", [Exercise()], "en", "prof/attn-course"))
    steps = _check_workflow(workflow)
    fetch = [s for s in steps if s.get("with", {}).get("repository") == "prof/attn-course"]
    assert fetch and fetch[0]["with"]["token"] == "${{ secrets.ATTN_GRADE_COURSE_TOKEN }}"
    assert "--course .attn-grade-course" in steps[-2]["run"]
    assert runner_ids(["kv_cache", "kv-cache", "x"]) == ["kvcache", "kvcache2", "x"]


def _run_steps(repo, steps, env):
    """Each ``run`` step in order, in bash as GitHub runs it; the grader is already
    installed here, so the install step is checked, not run."""
    for step in steps:
        if "run" not in step:
            continue
        if step["run"].startswith("python -m pip install"):
            assert step["run"] == "python -m pip install ."
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               step["run"]], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, (step["name"], proc.stderr)


def _reporter(steps, outputs_file):
    """What the reporter reads: each runner's base64 JSON, and Classroom's points."""
    outputs = {}
    for line in outputs_file.read_text().splitlines():
        outputs.setdefault("result", []).append(line.split("=", 1)[1])
    ids = steps[-1]["with"]["runners"].split(",")
    results = {}
    for runner, encoded in zip(ids, outputs["result"]):
        results[runner] = json.loads(base64.b64decode(encoded).decode("utf-8"))
        schema_valid(results[runner], CLASSROOM_RESULT)
    total = sum(t["score"] for r in results.values() if r["max_score"]
                for t in r["tests"])
    return results, total, sum(r["max_score"] for r in results.values())


def _environment(tmp_path, job_env):
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    outputs = tmp_path / "github-output"
    outputs.touch()
    # the runner's attn-grade is the one installed beside this Python, activated or not
    path = f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, **job_env, "RUNNER_TEMP": str(temp), "PATH": path,
            "GITHUB_OUTPUT": str(outputs)}, outputs


def test_the_graders_own_failure_is_an_error_not_a_zero(template, tmp_path):
    workflow = _workflow(template)
    steps = _check_workflow(workflow)
    env, outputs = _environment(tmp_path, workflow["jobs"]["run-autograding-tests"]["env"])
    broken = tmp_path / "bin"
    broken.mkdir()
    (broken / "attn-grade").write_text("#!/bin/sh\necho 'Traceback ...' >&2\nexit 3\n")
    (broken / "attn-grade").chmod(0o755)
    env["PATH"] = f"{broken}:{env['PATH']}"
    step = [s for s in steps if "id" in s][0]
    _run_steps(template, [step], env)
    results, total, top = _reporter([step, {**steps[-1], "with": {"runners": step["id"]}}],
                                    outputs)
    assert results[step["id"]]["status"] == "error" and (total, top) == (0, 0)


def test_every_step_runs_in_order_and_the_reporter_adds_them_up(template, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(template, repo)
    for stub in (repo / "exercises" / "day3").glob("*.py"):
        shutil.copy(SOLUTIONS / "day3" / stub.name, stub)
    (repo / "exercises" / "day3" / "attention.py").write_text(MISTAKES["no-causal-mask"][1])
    workflow = _workflow(repo)
    steps = _check_workflow(workflow)
    env, outputs = _environment(tmp_path, workflow["jobs"]["run-autograding-tests"]["env"])
    _run_steps(repo, steps, env)
    results, total, top = _reporter(steps, outputs)
    assert results.pop("attention")["status"] == "fail"
    assert all(r["status"] == "pass" for r in results.values())
    assert sum(t["score"] for r in results.values() for t in r["tests"]) == \
        pytest.approx(sum(r["max_score"] for r in results.values()), abs=0.01)
    assert 0 < total < top
    # the release holds no hidden checks, and in Classroom no later grading runs them
    messages = [r["message"] for r in results.values()]
    assert all("when you submit" not in m for m in messages)
    assert any("not graded here" in m or "do not run here" in m for m in messages), messages
