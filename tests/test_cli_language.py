"""Every word in the student's language: each catalogue message renders in both
languages, and every error a student can meet on the command line (the grader's and
click's own: an unknown option, a missing argument, a bad value), and the help of the
student's commands, follow --lang or a Chinese locale."""

import os
import re
import string

import click
import pytest
from conftest import run_cli, run_here

from grader.cli import main
from grader.course.spec import LANGUAGES
from grader.judge.msg import Msg
from grader.report import messages

STUDENT_COMMANDS = ("grade", "list", "show", "hint", "quiz", "watch", "progress")
# words of English prose (click's own among them): none may be left in a Chinese line
ENGLISH = re.compile(r"\b(the|of|a|an|your|and|or|is|not|to|for|no|such|Usage|Options|Error|"
                     r"Try|Missing|Invalid|Got|option|argument|value|exercise|set|"
                     r"Show|message|exit|help)\b")


def english_words(text):
    """The English prose words of ``text`` (option names, metavars and ids aside)."""
    bare = re.sub(r"--?[\w-]+|'[^']*'|“[^”]*”|\[[^\]]*\]|\b[A-Z]{2,}\b|\S*[_/.]\S*", "",
                  text)
    return set(ENGLISH.findall(bare))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_renders_in_both_languages(lang):
    """Every key, its placeholders filled, renders (no missing value, no stray brace)."""
    for code, entry in messages.catalogue(lang).items():
        names = {field for _, field, _, _ in string.Formatter().parse(entry["text"]) if field}
        text = messages.render(Msg(code, **{n.split(".")[0].split("[")[0]: "7" for n in names}),
                               lang)
        assert text.strip() and not re.search(r"\{[a-z_]+\}", text), (code, text)
        if lang == "zh" and re.search(r"[A-Za-z]{4,}", text):
            assert re.search(r"[\u4e00-\u9fff]", text), (code, text)   # not left in English


# (arguments after the program name, what the English says, what the Chinese says)
ERRORS = [
    (["day3", "--exercise", "nosuch"], "no exercise 'nosuch' in set 'day3'",
     "练习集“day3”里没有练习“nosuch”"),
    (["show", "day3", "atention"], "did you mean 'attention'?", "你是不是想输入“attention”"),
    (["nosuch"], "no exercise set 'nosuch'; there are: c3-l2, day3", "没有练习集“nosuch”"),
    (["day3", "--bogus"], "no such option: --bogus", "没有这个选项：--bogus"),
    (["hint", "day3"], "missing argument ID", "缺少参数 ID"),
    (["show"], "missing argument SET", "缺少参数 SET"),
    (["day3", "--exercise"], "option --exercise needs a value", "选项 --exercise 后面要跟一个值"),
    (["day3", "--isolation", "jail"], "'jail' is not a value of --isolation: choose one of",
     "“jail”不是 --isolation 可取的值"),
    (["day3", "--submission", "no/such/folder"], "--submission: 'no/such/folder' does not exist",
     "--submission：“no/such/folder”不存在"),
    (["quiz", "day3", "--course", "README.md"], "--course: 'README.md' is a file",
     "--course：“README.md”是文件"),
    (["day3", "--memory-limit", "3x"], "'3x' is not a value of --memory-limit: write a size",
     "“3x”不是 --memory-limit 可取的值：请写一个大小"),
    (["day3", "--time-limit", "soon"], "'soon' is not a value of --time-limit: write a number",
     "“soon”不是 --time-limit 可取的值：请写一个数"),
    (["day3", "extra"], "unexpected extra argument(s): extra", "多余的参数：extra"),
    (["day3", "--submission", "exercises", "--upload", "exercises"],
     "give --submission or --upload, not both", "--submission 和 --upload 只能给一个"),
    (["day3", "--submission", "README.md"], "is a folder or a notebook (.ipynb), not",
     "应是一个目录或笔记本文件（.ipynb）"),
]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("args,english,chinese", ERRORS, ids=[" ".join(e[0]) for e in ERRORS])
def test_every_error_a_student_can_type_is_said_in_their_language(args, english, chinese,
                                                                  lang):
    proc = run_here(*args, "--lang", lang) if "--exercise" != args[-1] \
        else run_here(*args[:-1], "--lang", lang, args[-1])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    said = proc.stderr
    if lang == "en":
        assert english in said and "error: " in said, said
    else:
        assert chinese in said and "错误：" in said, said
        assert not english_words(said), said


def test_without_a_course_the_student_is_told_where_to_run_in_chinese(tmp_path):
    proc = run_here("day3", "--lang", "zh", cwd=tmp_path)
    assert proc.returncode == 2 and "找不到课程" in proc.stderr and "--course DIR" in proc.stderr


def test_a_chinese_locale_is_enough_and_the_usage_names_the_command_typed():
    locale = {"LC_ALL": None, "LC_MESSAGES": None, "LANG": "zh_CN.UTF-8"}
    for args, said in ((["day3", "--exercise", "nosuch"], "练习集“day3”里没有练习“nosuch”"),
                       (["day3", "--bogus"], "没有这个选项"), (["hint", "day3"], "缺少参数 ID")):
        proc = run_here(*args, env=locale)
        assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    # the usage line names the command as typed: a process of its own
    proc = run_cli("day3", "--bogus", env={**os.environ, "LC_ALL": "", "LC_MESSAGES": "",
                                           "LANG": "zh_CN.UTF-8"})
    assert "用法：" in proc.stderr and "grader day3 [OPTIONS]" in proc.stderr
    assert "grade [OPTIONS]" not in proc.stderr
    proc = run_cli("day3", "--bogus", "--lang", "en")
    assert "Usage: " in proc.stderr and "grader day3 [OPTIONS]" in proc.stderr


@pytest.mark.parametrize("command", STUDENT_COMMANDS)
def test_the_help_of_every_student_command_follows_the_language(command):
    args = ["day3"] if command == "grade" else [command]
    proc = run_here(*args, "--help", "--lang", "zh")
    assert proc.returncode == 0 and proc.stdout.startswith("用法："), proc.stdout + proc.stderr
    assert not english_words(proc.stdout), english_words(proc.stdout)
    assert "选项" in proc.stdout
    english = run_here(*args, "--help", "--lang", "en").stdout
    assert english.startswith("Usage: ") and "Options:" in english
    ctx = click.Context(main)
    options = [p for p in main.commands[command].get_params(ctx)
               if isinstance(p, click.Option)]
    for option in options:   # each option has its line in both
        assert option.opts[-1] in proc.stdout and option.opts[-1] in english


def test_every_help_line_a_student_command_needs_is_translated():
    texts = messages.help_texts("zh")
    ctx = click.Context(main)
    for command in STUDENT_COMMANDS:
        assert f"cmd.{command}" in texts
        for param in main.commands[command].get_params(ctx):
            if isinstance(param, click.Option):
                assert f"opt.{command}.{param.name}" in texts or f"opt.{param.name}" in texts



@pytest.mark.parametrize("args", [["--lang", "zh", "--help"], ["--help", "--lang", "zh"]])
def test_the_programs_own_lang_chooses_its_help_and_the_commands_language(args, monkeypatch):
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    proc = run_here(*args)
    assert proc.returncode == 0 and proc.stdout.startswith("用法：attn-grade SET"), proc.stderr
    assert "--lang" in proc.stdout   # the option is listed, with its Chinese help
    listed = run_here("--lang", "zh", "list").stdout
    assert "自注意力" in listed and not english_words(listed.split("\n", 1)[0])
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert run_here("--lang", "en", "list").stdout.startswith("c3-l2  C3 lesson 2")


def test_the_programs_help_names_the_same_commands_in_both_languages():
    """The summary at the top of ``--help``: every ``attn-grade WORD`` line in one
    language has its twin in the other."""
    def commands(text):
        return re.findall(r"^\s*attn-grade (\S+ ?(?:day3|SET)?)", text, flags=re.MULTILINE)

    english, chinese = (run_here("--lang", lang, "--help").stdout for lang in ("en", "zh"))
    assert commands(english) == commands(chinese) and len(commands(english)) >= 12


def test_the_programs_help_follows_a_chinese_locale():
    env = {**os.environ, "LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"}
    proc = run_cli("--help", env=env)
    assert proc.returncode == 0 and proc.stdout.startswith("用法：attn-grade SET")
    assert "给 exercises/day3/ 里你的代码评分" in proc.stdout and "退出码" in proc.stdout
    assert not english_words(proc.stdout), english_words(proc.stdout)
    assert all(f"cmd.{name}" in messages.help_texts("zh") for name, command in
               main.commands.items() if not command.hidden)
    english = run_cli("--help", env={**env, "LANG": "en_US.UTF-8"}).stdout
    assert english.startswith("Usage: attn-grade SET") and "Auto-graded exercises" in english
