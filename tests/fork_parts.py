"""Parts as a fork writes them, for tests/test_fork_kit.py: scorers (one breaks SM2), a summarizer.

Named through tests/factories.py's variables, e.g. RECURIS_SCORERS="fork_parts:make_scorer",
they run the shared tests beside the built-in parts. `reference_score` is the independent
formula the episodic test compares this module's scorers with (E4).
"""

from collections import Counter


def trigrams(text: str) -> list[str]:
    """Each word's character trigrams (a shorter word is its own): "deploys" meets "deploy"."""
    return sorted(
        {word[i : i + 3] for word in text.lower().split() for i in range(max(1, len(word) - 2))}
    )


class TrigramScorer:
    """Jaccard similarity of character-trigram sets,
    with postings from each trigram to its documents."""

    persist = False

    def __init__(self) -> None:
        self.grams: dict[str, frozenset[str]] = {}
        self.postings: dict[str, set[str]] = {}

    def analyzer(self, text: str) -> list[str]:
        return trigrams(text)

    def add(self, key: str, terms) -> None:
        self.remove(key)
        self.grams[key] = frozenset(terms)
        for gram in self.grams[key]:
            self.postings.setdefault(gram, set()).add(key)

    def remove(self, key: str) -> None:
        for gram in self.grams.pop(key, ()):
            self.postings[gram].discard(key)
            if not self.postings[gram]:
                del self.postings[gram]

    def score(self, query, key: str) -> float:
        query = set(query)
        document = self.grams[key]
        shared = len(query & document)
        return shared / (len(query) + len(document) - shared) if shared else 0.0

    def score_candidates(self, query) -> list[tuple[str, float]]:
        shared = Counter(key for gram in set(query) for key in self.postings.get(gram, ()))
        return [(key, self.score(query, key)) for key in shared]

    def __len__(self) -> int:
        return len(self.grams)


class ForgetfulCandidates(TrigramScorer):
    """A fork's scorer with a bug: `score_candidates` drops one candidate, breaking SM2 (and E4)."""

    def score_candidates(self, query) -> list[tuple[str, float]]:
        return super().score_candidates(query)[1:]


def reference_score(query_terms, document_terms, corpus) -> float:
    """Jaccard of the two trigram sets, written apart from the scorer (tests/factories.py)."""
    query = set(query_terms)
    document = set(document_terms)
    return len(query & document) / len(query | document) if query & document else 0.0


class RecentActions:
    """A summarizer in a format of its own: the newest
    folded actions, a "* action" line each, in budget."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def __call__(self, old_summary: str, evicted_steps) -> str:
        lines = old_summary.splitlines()
        for step in evicted_steps:
            action = " ".join(step.action.split())[:60]
            lines.append(f"* {action}" + (" (failed)" if step.failed else ""))
        while len("\n".join(lines)) > self.max_chars and len(lines) > 1:
            lines.pop(0)  # the oldest go first
        return "\n".join(lines)


def make_scorer():
    return TrigramScorer()


def make_broken_scorer():
    return ForgetfulCandidates()


def make_summarizer(max_chars: int):
    return RecentActions(max_chars)
