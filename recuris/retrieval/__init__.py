"""Retrieval: search below the stores, for the core's episodic memory and the manager's recall.

bm25 holds BM25's one definition (`BM25Settings`: the settings and the weights) and the top-k
index; scoring the BM25 and cosine scorers (the core holds Jaccard) and the analyzer. The
manager's recall ranks what they find (manager/candidates.py, manager/recall.py).
"""
