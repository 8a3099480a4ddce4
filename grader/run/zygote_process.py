"""The old name of the zygote's process functions, now in ``zygote`` (grader.entry and
instructor.batch still import them from here; once they import ``run.zygote``, this
module goes)."""

from .zygote import LAYERS, Started, drop_early, possible, start, start_early, take_early

__all__ = ["LAYERS", "Started", "drop_early", "possible", "start", "start_early",
           "take_early"]
