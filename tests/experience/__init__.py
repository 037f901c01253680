"""Tests of recuris/experience/: a package, because its test_agent.py shares its name with the
core's (pytest imports two test files of one name only from two packages).
"""
