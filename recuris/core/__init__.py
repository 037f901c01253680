"""The core: the loop of document 000 and everything it needs, standing alone.

Read in this order: clock, text, records, working and compression (the window and its
summary), episodic, semantic and consolidation, decay, prompt, agent, and the scripted
model that drives it offline. Nothing here imports another part of recuris.
"""
