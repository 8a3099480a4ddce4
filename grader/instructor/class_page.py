"""The class report as one self-contained HTML page (charts as inline SVG).

Input: the plain data of ``class_report.aggregate``. The page is laid out by a
Jinja2 template (``templates/class_page.html.j2``) that escapes every value; the
charts are drawn by matplotlib to SVG in memory (both the ``[report]`` extra);
text in them stays text (``svg.fonttype: none``), so the browser draws Chinese
with its own fonts.
"""

import functools
import io
import os
import re
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..judge.msg import Msg
from ..report.messages import render

INSTALL_COMMAND = "python3 -m pip install 'attn-grade[report]'"
TEMPLATES = Path(__file__).with_name("templates")
TOP_CHECKS = 15          # checks shown unfolded
TOP_TAGS_CHART = 15      # misconceptions in the bar chart

ERROR_LABELS = {
    "syntax-error": Msg("class-error-syntax-error"),
    "import-error": Msg("class-error-import-error"),
    "missing-function": Msg("class-error-missing-function"),
    "missing-file": Msg("class-error-missing-file"),
    "not-implemented": Msg("class-error-not-implemented"),
    "raised": Msg("class-error-raised"),
    "timeout": Msg("class-error-timeout"),
    "memory": Msg("class-error-memory"),
    "cpu": Msg("class-error-cpu"),
    "crashed": Msg("class-error-crashed"),
    "exited": Msg("class-error-exited"),
    "not-graded": Msg("class-error-not-graded"),
    "empty": Msg("class-error-empty"),
}

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC",
sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}
.about{color:#555}.warn{background:#fff3cd;padding:.5em 1em;border-radius:4px}
table{border-collapse:collapse;margin:.5em 0;width:100%}
th,td{text-align:left;padding:.25em .6em;border-bottom:1px solid #eee;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
code{background:#f3f3f3;padding:0 .25em;border-radius:3px;white-space:nowrap}
details{margin:.4em 0}summary{cursor:pointer;color:#0b5394}
.chart svg{max-width:100%;height:auto}.small{color:#666;font-size:.9em}
"""


def report_extra_available() -> bool:
    """Whether the ``report`` extra is installed: matplotlib draws, Jinja2 lays out."""
    try:
        import jinja2  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def _template() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    return env.get_template("class_page.html.j2")


def page(data: dict[str, Any], lang: str, results_href: str = "") -> str:
    """The HTML page of ``data``; links to result files are ``results_href`` + file."""
    from markupsafe import Markup

    def t(msg: Msg) -> str:
        return render(msg, lang)

    course = data["course"]
    title = (course.get("title") or {}).get(lang) or course.get("set") or ""
    differs = data.get("gradebook_differs")
    view = {
        "lang": lang, "css": Markup(CSS), "heading": t(Msg("class-title", set=title)),
        "about": t(Msg("class-about", students=data["students"],
                       graded_at=course.get("graded_at") or "?",
                       version=course.get("grader_version") or "?",
                       isolation=course.get("isolation") or "?")),
        "differs": differs and t(Msg("class-gradebook-differs", students=", ".join(differs))),
        "words": {key: t(msg) for key, msg in WORDS.items()},
        "score_summary": _score_summary(data, t),
        "charts": {name: Markup(svg) for name, svg in _charts(data, t).items()},
        "exercises": _exercises(data, t), "misconceptions": _misconceptions(data, lang, t),
        "failed": _failed_checks(data, t), "errors": _errors(data, lang, t),
        "students": _students(data, lang, t, results_href),
    }
    return str(_template().render(view))


WORDS = {"scores": Msg("class-scores"), "exercises": Msg("class-exercises"),
         "misconceptions": Msg("class-misconceptions"),
         "no_misconceptions": Msg("class-no-misconceptions"), "check": Msg("class-col-check"),
         "failed_checks": Msg("class-failed-checks"), "hidden_check": Msg("class-hidden-check"),
         "errors": Msg("class-errors"), "no_errors": Msg("class-no-errors"),
         "need_help": Msg("class-need-help")}


def _score_summary(data, t):
    s = data["scores"]
    return t(Msg("class-score-summary", mean=_n(s["mean"]), max_score=_score(data["max_score"]),
                 median=_score(s["median"]), full=s["full_marks"], students=data["students"]))


def _charts(data, t):
    """The page's charts as inline SVG: scores, each exercise's mean, the top mistakes."""
    charts = {"histogram": histogram_svg(data["scores"]["histogram"],
                                         t(Msg("class-axis-score")),
                                         t(Msg("class-axis-students"))),
              "exercises": "", "misconceptions": ""}
    exercises = data["exercises"]
    if exercises:
        charts["exercises"] = bar_svg(
            [x["exercise"] for x in exercises],
            [100 * x["mean"] / x["max_score"] if x["max_score"] else 0 for x in exercises],
            t(Msg("class-axis-mean")), limit=100)
    top = data["misconceptions"][:TOP_TAGS_CHART]
    if top:
        charts["misconceptions"] = bar_svg([m["tag"] for m in top],
                                           [m["students"] for m in top],
                                           t(Msg("class-axis-students")))
    return charts


def _exercises(data, t):
    """The per-exercise table (its figures over the students who attempted each exercise),
    and the sentences on those who attempted nothing."""
    rows = [[x["exercise"], _score(x["max_score"]), _n(x.get("attempted", "")), _n(x["mean"]),
             f'{x["full_marks"]} ({round(100 * x["full_marks_rate"])}%)',
             _n(x.get("not_attempted", ""))]
            for x in data["exercises"]]
    idle = data.get("not_attempted") or {}
    return {"head": [t(Msg("class-col-exercise")), t(Msg("class-col-max")),
                     t(Msg("class-col-attempted")), t(Msg("class-col-mean")),
                     t(Msg("class-col-full")), t(Msg("class-col-not-attempted"))],
            "rows": rows, "note": t(Msg("class-attempted-note")),
            "idle": idle.get("students") and t(Msg(
                "class-not-attempted", students=idle["students"], empty=idle["empty"],
                stubs=idle["stubs"], not_graded=idle["not_graded"]))}


def _misconceptions(data, lang, t):
    rows = [{"tag": m["tag"], "students": _n(m["students"]),
             "message": (m.get("message") or {}).get(lang) or "",
             "exercises": ", ".join(m["exercises"]),
             "where": ", ".join(f'{c["exercise"]}: {c["check"]} ({c["students"]})'
                                for c in m["checks"])}
            for m in data["misconceptions"]]
    return {"head": [t(Msg("class-col-tag")), t(Msg("class-col-students")),
                     t(Msg("class-col-message")), t(Msg("class-col-where"))], "rows": rows}


def _failed_checks(data, t):
    checks = [{"exercise": c["exercise"], "check": c["check"], "hidden": bool(c.get("hidden")),
               "students": _n(c["students"])} for c in data["failed_checks"]]
    more = checks[TOP_CHECKS:]
    return {"head": [t(Msg("class-col-exercise")), t(Msg("class-col-check")),
                     t(Msg("class-col-students"))],
            "top": checks[:TOP_CHECKS], "more": more,
            "more_label": more and t(Msg("class-more", count=len(more)))}


def _errors(data, lang, t):
    rows = [[_error_label(err["kind"], lang), _n(err["students"]),
             ", ".join(f'{x["exercise"]} ({x["students"]})' for x in err["exercises"])]
            for err in data["errors"]]
    return {"head": [t(Msg("class-col-kind")), t(Msg("class-col-students")),
                     t(Msg("class-col-exercise"))], "rows": rows}


def _error_label(kind, lang):
    return render(ERROR_LABELS[kind], lang) if kind in ERROR_LABELS else kind


def _students(data, lang, t, href):
    def row(s):
        return {"student": s["student"], "score": _score(s["score"]), "tags": ", ".join(s["tags"]),
                "errors": ", ".join(_error_label(k, lang) for k in s["errors"]),
                "href": quote(href + s["file"]), "file": s["file"]}

    roster = sorted(data["roster"], key=lambda s: s["student"])
    return {"head": [t(Msg("class-col-student")), t(Msg("class-col-score")),
                     t(Msg("class-col-tag")), t(Msg("class-col-kind")),
                     t(Msg("class-col-file"))],
            "need_help": [row(s) for s in data["need_help"]], "roster": [row(s) for s in roster],
            "roster_label": t(Msg("class-roster", students=len(roster)))}


def _score(x):
    """A score exactly as the gradebook has it (up to 4 decimals)."""
    return format(x, ".10g")


def _n(x):
    return f"{round(x, 2):g}" if isinstance(x, float) else str(x)


# ------------------------------------------------------------------ charts

def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "text.parse_math": False,
                         "svg.hashsalt": "attn-grade", "font.size": 10})
    return plt


def _svg(fig):
    buffer = io.StringIO()
    with warnings.catch_warnings():     # CJK glyphs are measured with a Latin font;
        warnings.simplefilter("ignore")  # the browser draws them (svg.fonttype: none)
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    _pyplot().close(fig)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]      # inline: no XML prolog or doctype
    return re.sub(r"(?s)\s*<metadata>.*?</metadata>", "", text, count=1)


def histogram_svg(hist: dict[str, Any], xlabel: str, ylabel: str) -> str:
    plt = _pyplot()
    edges, counts = hist["edges"], hist["counts"]
    fig, ax = plt.subplots(figsize=(7.5, 2.8))
    widths = [b - a for a, b in zip(edges, edges[1:])]
    ax.bar(edges[:-1], counts, width=widths, align="edge", color="#4a7ebb",
           edgecolor="white")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xlim(edges[0], edges[-1])
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def bar_svg(labels: list[str], values: list[float], xlabel: str,
            limit: float | None = None) -> str:
    """Horizontal bars, the first label on top."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.35 * len(labels) + 0.9))
    positions = list(range(len(labels)))[::-1]
    ax.barh(positions, values, color="#c0504d" if limit is None else "#4a7ebb")
    ax.set_yticks(positions, [str(label) for label in labels])
    ax.set_xlabel(xlabel)
    if limit is not None:
        ax.set_xlim(0, limit)
    else:
        ax.xaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def href_to(results_root: Path, page_path: Path | None) -> str:
    """The relative link prefix from the page's folder to the results folder."""
    rel = os.path.relpath(results_root, page_path.parent) if page_path else "."
    return "" if rel == "." else Path(rel).as_posix().rstrip("/") + "/"
