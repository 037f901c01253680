"""The core: the loop of document 000 and everything it needs, standing alone.

Read in this order: text and similarity, records, working memory and compression, episodic
memory, consolidation into semantic memory, decay and the clock, the prompt, the agent, and
the mock models that drive it offline; validation holds the checks every input passes.
Nothing here imports another part of recuris.
"""
