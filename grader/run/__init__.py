"""Running student code: the sandboxed child and the channel to it."""
