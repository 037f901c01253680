"""Texts whose words follow a Zipf-like law, from a seed: a crowd of unrelated items for a test.

The law of benchmarks/recall_scale.py's `corpus`, written apart: nothing in tests/ imports
benchmarks/, which is not installed with recuris.
"""

import itertools
import random

VOCABULARY = 20_000


def corpus(size: int, seed: int = 1, words: int = 12, prefix: str = "w") -> list[str]:
    """Return `size` texts of `words` words from a Zipf-like vocabulary of 20,000 words."""
    rng = random.Random(seed)
    vocabulary = [f"{prefix}{rank}" for rank in range(1, VOCABULARY + 1)]
    # Cumulative weights summed once: `choices` would sum them all again at every call.
    cumulative = list(itertools.accumulate(1 / rank for rank in range(1, VOCABULARY + 1)))
    return [" ".join(rng.choices(vocabulary, cum_weights=cumulative, k=words)) for _ in range(size)]
