"""The class report as one self-contained HTML page (charts as inline SVG).

Input: the plain data of ``class_report.aggregate``. Charts are drawn by
matplotlib (the ``[report]`` extra) to SVG in memory; text in them stays text
(``svg.fonttype: none``), so the browser draws Chinese with its own fonts.
Every string that comes from the documents is escaped.
"""

import html
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


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def page(data: dict[str, Any], lang: str, results_href: str = "") -> str:
    """The HTML page of ``data``; links to result files are ``results_href`` + file."""
    def t(msg):
        return render(msg, lang)

    e = _escape
    course = data["course"]
    title = (course.get("title") or {}).get(lang) or course.get("set") or ""
    heading = t(Msg("class-title", set=title))
    parts = [f'<!DOCTYPE html><html lang="{e(lang)}"><head><meta charset="utf-8">'
             f'<meta name="viewport" content="width=device-width,initial-scale=1">'
             f"<title>{e(heading)}</title><style>{CSS}</style></head><body>",
             _tag("h1", heading),
             '<p class="about">' + e(render(Msg(
                 "class-about", students=data["students"],
                 graded_at=course.get("graded_at") or "?",
                 version=course.get("grader_version") or "?",
                 isolation=course.get("isolation") or "?"), lang)) + "</p>"]
    if data.get("gradebook_differs"):
        parts.append('<p class="warn">' + e(render(Msg(
            "class-gradebook-differs", students=", ".join(data["gradebook_differs"])), lang))
            + "</p>")
    parts += _scores(data, lang, t)
    parts += _misconceptions(data, lang, t)
    parts += _failed_checks(data, t)
    parts += _errors(data, lang, t)
    parts += _need_help(data, lang, t, results_href)
    parts.append("</body></html>")
    return "\n".join(parts)


def _scores(data, lang, t):
    s = data["scores"]
    out = [_tag("h2", t(Msg("class-scores"))),
           "<p>" + _escape(render(Msg("class-score-summary", mean=_n(s["mean"]),
                                      max_score=_score(data["max_score"]),
                                      median=_score(s["median"]),
                                      full=s["full_marks"], students=data["students"]), lang))
           + "</p>",
           '<div class="chart">' + histogram_svg(s["histogram"], t(Msg("class-axis-score")),
                                                 t(Msg("class-axis-students"))) + "</div>",
           _tag("h2", t(Msg("class-exercises")))]
    exercises = data["exercises"]
    if exercises:
        out.append('<div class="chart">' + bar_svg(
            [x["exercise"] for x in exercises],
            [100 * x["mean"] / x["max_score"] if x["max_score"] else 0 for x in exercises],
            t(Msg("class-axis-mean")), limit=100) + "</div>")
    rows = [[_escape(x["exercise"]), f'<td class="n">{_score(x["max_score"])}</td>',
             _num_cell(x["mean"]),
             f'<td class="n">{x["full_marks"]} ({round(100 * x["full_marks_rate"])}%)</td>']
            for x in exercises]
    heads = [t(Msg("class-col-exercise")), t(Msg("class-col-max")), t(Msg("class-col-mean")),
             t(Msg("class-col-full"))]
    out.append(_table(heads, rows, numeric=(1, 2, 3)))
    return out


def _misconceptions(data, lang, t):
    items = data["misconceptions"]
    out = [_tag("h2", t(Msg("class-misconceptions")))]
    if not items:
        return out + [_tag("p", t(Msg("class-no-misconceptions")))]
    top = items[:TOP_TAGS_CHART]
    out.append('<div class="chart">' + bar_svg([m["tag"] for m in top],
                                               [m["students"] for m in top],
                                               t(Msg("class-axis-students"))) + "</div>")
    rows = []
    checks_word = t(Msg("class-col-check"))
    for m in items:
        message = (m.get("message") or {}).get(lang) or ""
        where = ", ".join(f'{c["exercise"]}: {c["check"]} ({c["students"]})'
                          for c in m["checks"])
        rows.append([f"<code>{_escape(m['tag'])}</code>", _num_cell(m["students"]),
                     _escape(message),
                     f"{_escape(', '.join(m['exercises']))}<details><summary>"
                     f"{_escape(checks_word)}</summary><span class=small>"
                     f"{_escape(where)}</span></details>"])
    heads = [t(Msg("class-col-tag")), t(Msg("class-col-students")),
             t(Msg("class-col-message")), t(Msg("class-col-where"))]
    out.append(_table(heads, rows, numeric=(1,)))
    return out


def _failed_checks(data, t):
    checks = data["failed_checks"]
    out = [_tag("h2", t(Msg("class-failed-checks")))]
    hidden = t(Msg("class-hidden-check"))

    def row(c):
        mark = f' <span class="small">({_escape(hidden)})</span>' if c.get("hidden") else ""
        return [_escape(c["exercise"]), _escape(c["check"]) + mark, _num_cell(c["students"])]

    head = [t(Msg("class-col-exercise")), t(Msg("class-col-check")), t(Msg("class-col-students"))]
    out.append(_table(head, [row(c) for c in checks[:TOP_CHECKS]], numeric=(2,)))
    if len(checks) > TOP_CHECKS:
        more = t(Msg("class-more", count=len(checks) - TOP_CHECKS))
        out.append(f"<details><summary>{_escape(more)}</summary>"
                   f"{_table(head, [row(c) for c in checks[TOP_CHECKS:]], (2,))}"
                   "</details>")
    return out


def _errors(data, lang, t):
    out = [_tag("h2", t(Msg("class-errors")))]
    if not data["errors"]:
        return out + [_tag("p", t(Msg("class-no-errors")))]
    rows = []
    for err in data["errors"]:
        label = ERROR_LABELS.get(err["kind"])
        rows.append([_escape(render(label, lang) if label else err["kind"]),
                     _num_cell(err["students"]),
                     _escape(", ".join(f'{x["exercise"]} ({x["students"]})'
                                       for x in err["exercises"]))])
    out.append(_table([t(Msg("class-col-kind")), t(Msg("class-col-students")),
                       t(Msg("class-col-exercise"))], rows, numeric=(1,)))
    return out


def _need_help(data, lang, t, href):
    def row(s):
        link = f'<a href="{_escape(quote(href + s["file"]))}">{_escape(s["file"])}</a>'
        errors = [render(ERROR_LABELS[k], lang) if k in ERROR_LABELS else k for k in s["errors"]]
        return [_escape(s["student"]), f'<td class="n">{_score(s["score"])}</td>',
                _escape(", ".join(s["tags"])), _escape(", ".join(errors)), link]

    head = [t(Msg("class-col-student")), t(Msg("class-col-score")), t(Msg("class-col-tag")),
            t(Msg("class-col-kind")), t(Msg("class-col-file"))]
    out = [_tag("h2", t(Msg("class-need-help"))),
           _table(head, [row(s) for s in data["need_help"]],
                  numeric=(1,))]
    roster = sorted(data["roster"], key=lambda s: s["student"])
    everyone = t(Msg("class-roster", students=len(roster)))
    out.append(f"<details><summary>{_escape(everyone)}"
               f"</summary>{_table(head, [row(s) for s in roster], (1,))}</details>")
    return out


def _table(head, rows, numeric=()):
    ths = "".join(f'<th{" class=n" if i in numeric else ""}>{_escape(h)}</th>'
                  for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(c if c.startswith("<td") else f"<td>{c}</td>"
                                    for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>"


def _tag(name, text):
    return f"<{name}>{_escape(text)}</{name}>"


def _num_cell(x):
    return f'<td class="n">{_n(x)}</td>'


def _score(x):
    """A score exactly as the gradebook has it (up to 4 decimals)."""
    return format(x, ".10g")


def _n(x):
    return f"{round(x, 2):g}" if isinstance(x, float) else str(x)


def _escape(text):
    return html.escape(str(text), quote=True)


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
