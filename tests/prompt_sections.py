"""The prompt's sections, in the order P1 fixes, as the recorder labels them: one expected list
for the recorder's, the trace's and the demo's tests."""

SECTIONS = [
    "goal",
    "pins",
    "progress",
    "summary",
    "recent steps",
    "experience",
    "instruction",
]
