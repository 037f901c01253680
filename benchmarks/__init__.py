"""Speed and scale, measured from a clone: `python -m benchmarks.speed` and the scripts beside it.

Not installed with recuris: the package holds the documents' own evaluation (`python -m
recuris.bench`); the costs of the product's machinery, and the rankings tried and not kept,
are measured here, on the package, and printed as markdown tables (docs/benchmarks.md).
"""
