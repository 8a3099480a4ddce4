"""The sandbox's side: what runs inside a run's sandbox (and in a class's zygote),
never inside the grader.

Copied whole beside each run (``runtime/_attn_grade_child/``, with the wire module
beside it as ``_attn_grade_wire``) and started as ``python -I -S runtime/_attn_grade_child``.
Its modules import one another and the copied wire only (``tests/test_layers.py``):

  __main__  the folder's start: imports the package by its folder's name
  start     main(): privileges, settings, filter, then a template or a zygote
  confine   the uid switch, keyrings, capabilities, rlimits, the syscall filter
  calls     the call server: one child's life (imports its module, answers calls)
  forks     the fork loop: the template that forks a child per exercise
  zygote    the zygote that forks each run's template into the run's sandbox
"""

# The exit code of a child that ran out of memory outside any call (a MemoryError
# a call raises is that call's error answer); the grader reads it as the memory limit.
EXIT_OUT_OF_MEMORY = 86
