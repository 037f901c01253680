"""The tour: what `python agent_demo.py` needs beside the memory it narrates.

recorder keeps a run as it happens, without changing it; trace writes it as one HTML page,
with plots drawn by svg; simulation is the simulated year of forgetting the page plots
(`python -m recuris.simulation`); mock_environment is the table-driven world the tour's
agents act on, and the tests' and examples' too. The benchmarks (recuris/bench/) draw their
plots with svg.
"""
