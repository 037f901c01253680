"""Stores as a fork would write them, for
tests/test_fork_kit.py: one faithful, one that breaks S7."""

from recuris import InMemoryStore


class ForkStore:
    """A fork's own store: it keeps an InMemoryStore and answers every call through it."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)


class ForgetfulMatching(ForkStore):
    """A fork's store with a bug: `matching` finds nothing, breaking S7."""

    def matching(self, user_id, level, terms):
        return []


def make_store(folder):
    return ForkStore(InMemoryStore())


def make_broken_store(folder):
    return ForgetfulMatching(InMemoryStore())
