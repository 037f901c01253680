"""Storage: the memory item, the Store protocol, and the stores behind it.

The model store, a plain scan every store is tested against; an in-memory store with its
term index; a SQLite store (schema, search, file opening, erasure); a buffered store that
keeps writes through an outage, and its queued reads.
"""
