"""Errors meant for people, and the exit codes the CLI maps them to."""

import enum


class ExitCode(enum.IntEnum):
    """Process exit codes of ``attn-grade``."""

    PASSED = 0      # every check passed
    FAILED = 1      # some check failed (or dev check found problems)
    USAGE = 2       # bad command line or a broken course
    INTERNAL = 3    # a bug in the grader (a traceback to report)


class CourseError(Exception):
    """A problem in the course itself (YAML, stubs, solutions): exit 2.

    Carries the file and line so the message points where to fix it.
    """

    def __init__(self, message, path=None, line=None, hint=None, msg=None, detail=None):
        super().__init__(message)
        self.message, self.path, self.line, self.hint = message, path, line, hint
        # ``msg``: the message as (catalogue code, values), for the CLI to say in the
        # user's language (``message`` is its English); ``detail``: a library's words
        self.msg, self.detail = msg, detail

    def __str__(self):
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        hint = f"\n  hint: {self.hint}" if self.hint else ""
        detail = f"\n  ({self.detail})" if self.detail else ""
        return f"{where}{self.message}{hint}{detail}"

    def where(self) -> str:
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}: " if self.line else f"{self.path}: "


class Refusal(Exception):
    """A command that cannot go on, said to the user in their language (a missing extra):
    exit 2, its text printed as it is."""
