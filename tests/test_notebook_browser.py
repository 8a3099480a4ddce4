"""The generated notebook in a real JupyterLab, in headless Chromium (issue 31, part 1):
a check cell shows its feedback lines, not a JSON tree. nbclient keeps every
representation a cell offers, so only a browser sees which one JupyterLab picks."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import ROOT, extra_missing, run_cli

pytestmark = [pytest.mark.extra("notebook"), pytest.mark.extra("browser"), pytest.mark.slow]
nbformat = pytest.importorskip("nbformat", reason=extra_missing("notebook"))
pytest.importorskip("jupyterlab", reason=extra_missing("browser"))
sync_api = pytest.importorskip("playwright.sync_api", reason=extra_missing("browser"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TOKEN = "attn-grade-test"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on a folder holding day3's notebook cut to temperature."""
    if CHROMIUM is None:
        pytest.skip("needs a chromium on PATH (.ci/run installs it)")
    done = run_cli("notebook", "day3", "-o", tmp_path / "work.ipynb", "--lang", "en")
    assert done.returncode == 0, done.stderr
    notebook = nbformat.read(str(tmp_path / "work.ipynb"), as_version=4)
    cut = notebook.cells.index(next(c for c in notebook.cells
                                    if c.source == "ag.check('temperature')"))
    notebook.cells = notebook.cells[:cut + 1]
    nbformat.write(notebook, str(tmp_path / "work.ipynb"))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}   # no other run's set cache
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
         "--ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}", "--allow-root",
         f"--ServerApp.root_dir={tmp_path}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start")
        yield f"{base}/lab/tree/work.ipynb?token={TOKEN}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_jupyterlab_shows_a_checks_feedback_lines_not_a_json_tree(lab, tmp_path):
    with sync_api.sync_playwright() as play:
        browser = play.chromium.launch(executable_path=CHROMIUM, headless=True,
                                       args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(lab)
            page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
            page.wait_for_function("document.body.innerText.includes('| Idle')",
                                   timeout=60_000)   # the kernel is up
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            feedback = page.locator(".jp-OutputArea-output").last
            feedback.wait_for(state="attached", timeout=90_000)
            feedback.scroll_into_view_if_needed()
            page.wait_for_function("document.querySelectorAll('.attn-grade').length > 0",
                                   timeout=90_000)
            text = page.locator(".attn-grade").first.inner_text()
            assert page.locator(".jp-RenderedJSON").count() == 0
        except Exception:
            page.screenshot(path=str(tmp_path / "lab.png"))   # what the page showed
            raise
        finally:
            browser.close()
    assert "temperature.py" in text and "0 / 10" in text, text
    assert "not implemented yet" in text and "ag.hint('temperature')" in text, text
    assert "max_score" not in text and "root" not in text
