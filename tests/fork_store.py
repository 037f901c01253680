"""Stores as a fork would write them, for tests/test_fork_kit.py and
tests/storage/test_store_properties.py: one faithful, one that breaks S7, one that breaks S8."""

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


class EarlierTies(ForkStore):
    """A fork's store with a bug: among equal scores the earlier-written item comes first,
    breaking S8 (every score and every other read is right)."""

    def search(self, user_id, level, terms, limit):
        every = self.inner.search(user_id, level, terms, len(self.inner.list(user_id, level)))
        # Best first, later-written first among equals, turned round: worst first, earlier
        # first among equals; a stable sort on the score alone keeps that order among equals.
        ranked = sorted(reversed(every), key=lambda found: found[1], reverse=True)
        return ranked[: max(0, limit)]


def make_store(folder):
    return ForkStore(InMemoryStore())


def make_broken_store(folder):
    return ForgetfulMatching(InMemoryStore())


def make_earlier_ties_store(folder):
    return EarlierTies(InMemoryStore())
