"""Memory that evolves: reflection, procedures, and the forgetting cycle.

extraction asks a model for insights; reflection and procedural memory keep them;
forgetting runs the decay-and-merge cycle, with join finding similar memories exactly.
"""
