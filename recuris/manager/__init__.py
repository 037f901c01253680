"""The manager: one write and one recall across every tier of every user.

Routing, the token budget, tasks, per-user layers, active recall as a tool, shared use by
threads, bounds, and the command line (`python -m recuris`).
"""
