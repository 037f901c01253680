"""Exercises: rebuild the core's modules from skeletons; the project's own tests grade them.

`python -m recuris.exercises list` names them in the order of the core path (docs/README.md);
`start NAME DIR` writes a skeleton and its README-NAME.md; `check NAME DIR` runs the module's
example tests, property tests and state machines against DIR's file and names what broke.
"""
