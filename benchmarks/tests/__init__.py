"""The tests of the measurements beside the package: a package, so that pytest puts the
repository root, which holds `benchmarks/`, on the path (rootdir-relative "prepend" import).
"""
