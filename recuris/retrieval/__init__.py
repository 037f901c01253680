"""Retrieval: scorers for the core's episodic memory, BM25, and the manager's recall.

scoring holds the BM25 and cosine scorers (the core holds Jaccard); bm25 the top-k BM25
index; candidates and recall gather and rank what the manager returns.
"""
