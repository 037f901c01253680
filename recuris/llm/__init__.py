"""A real model: an OpenAI-compatible chat client over HTTP, standard library only.

llm_http is the callable the agent takes; http_transport sends one request with retries;
model_replies reads what comes back.
"""
