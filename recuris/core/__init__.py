"""The core: the loop of document 000 and everything it needs, standing alone.

Read in this order: text and similarity, records, working memory and compression, episodic
memory, decay and the clock, the prompt, the agent, and the scripted model that drives it
offline. Nothing here imports another part of recuris.
"""
