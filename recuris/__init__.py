"""recuris: memory for long-horizon LLM agents, in the standard library only.

Read the core first, recuris/core/, document 000's loop: text, records, working memory and
compression, episodic memory, decay, the prompt, the agent (docs/README.md gives the path);
then search, storage, memory that evolves, and the manager that recalls across layers.

Importing the package loads none of it: each name of `__all__` is imported from the module
that defines it when it is first asked for (`from recuris import MemoryManager`), so that
`import recuris.core.decay` loads the core's decay and what it imports, not the product.
"""

import importlib
import sys
from typing import TYPE_CHECKING

# Checked before any module is imported: they are written for Python 3.10 (`int | None` in
# a signature is an error on 3.9). Named as this package's own failure, `python -m recuris`
# on an older interpreter reports it in one line instead of a traceback.
if sys.version_info < (3, 10):
    raise ImportError(
        f"recuris needs Python 3.10 or newer; this is Python {sys.version.split()[0]}",
        name=__name__,
    )

# A type checker does not run `__getattr__`: it reads the same names from these imports,
# which never run (tests/test_package.py checks that they name what DEFINED_IN names).
if TYPE_CHECKING:
    from .core.agent import AgentSettings, RecurisAgent
    from .core.clock import ManualClock
    from .core.compression import StructuredSummarizer
    from .core.decay import DecayManager, DecayReport, DecaySettings
    from .core.episodic import EpisodicMemory, RetrievalSettings
    from .core.records import AuditRecord, Episode, Hit, RunResult, StageEvent, Step
    from .core.similarity import JaccardScorer, jaccard
    from .core.text import estimate_tokens, tokenize
    from .core.working import WorkingMemory, WorkingSettings
    from .core.consolidation import Conflict, ConsolidationSettings, Consolidator
    from .evolution.procedural import ProceduralMemory, Procedure
    from .evolution.reflection import ReflectionCallback
    from .core.semantic import Fact, SemanticMemory
    from .manager.active_recall import ActiveRecall, search_memory_tool
    from .manager.manager import ManagerSettings, MemoryManager
    from .manager.recall import RecallPolicy, RecallResult, Weights
    from .retrieval.bm25 import BM25Settings
    from .retrieval.scoring import BM25Scorer, CosineScorer
    from .storage.audit import AuditEntry
    from .storage.item import MemoryItem
    from .storage.memory_store import InMemoryStore
    from .storage.sqlite_erasure import ErasureIncompleteError
    from .storage.sqlite_store import SQLiteStore
    from .storage.store import ForgottenUserError, StoreError

# Each public name and the module under recuris that defines it, as the imports above list
# them: what `__getattr__` imports, `__all__` lists and `dir(recuris)` shows.
DEFINED_IN = {
    "AgentSettings": "core.agent",
    "RecurisAgent": "core.agent",
    "ManualClock": "core.clock",
    "StructuredSummarizer": "core.compression",
    "DecayManager": "core.decay",
    "DecayReport": "core.decay",
    "DecaySettings": "core.decay",
    "EpisodicMemory": "core.episodic",
    "RetrievalSettings": "core.episodic",
    "AuditRecord": "core.records",
    "Episode": "core.records",
    "Hit": "core.records",
    "RunResult": "core.records",
    "StageEvent": "core.records",
    "Step": "core.records",
    "JaccardScorer": "core.similarity",
    "jaccard": "core.similarity",
    "estimate_tokens": "core.text",
    "tokenize": "core.text",
    "WorkingMemory": "core.working",
    "WorkingSettings": "core.working",
    "Conflict": "core.consolidation",
    "ConsolidationSettings": "core.consolidation",
    "Consolidator": "core.consolidation",
    "ProceduralMemory": "evolution.procedural",
    "Procedure": "evolution.procedural",
    "ReflectionCallback": "evolution.reflection",
    "Fact": "core.semantic",
    "SemanticMemory": "core.semantic",
    "ActiveRecall": "manager.active_recall",
    "search_memory_tool": "manager.active_recall",
    "ManagerSettings": "manager.manager",
    "MemoryManager": "manager.manager",
    "RecallPolicy": "manager.recall",
    "RecallResult": "manager.recall",
    "Weights": "manager.recall",
    "BM25Settings": "retrieval.bm25",
    "BM25Scorer": "retrieval.scoring",
    "CosineScorer": "retrieval.scoring",
    "AuditEntry": "storage.audit",
    "MemoryItem": "storage.item",
    "InMemoryStore": "storage.memory_store",
    "ErasureIncompleteError": "storage.sqlite_erasure",
    "SQLiteStore": "storage.sqlite_store",
    "ForgottenUserError": "storage.store",
    "StoreError": "storage.store",
}

__all__ = list(DEFINED_IN)

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """Return the public `name`, imported from the module that defines it (PEP 562)."""
    if name not in DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)
    value = getattr(importlib.import_module(f"{__name__}.{DEFINED_IN[name]}"), name)
    # Kept as a global of the package, so the next lookup finds it without this function.
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Return the package's names: what it holds now and every name of `__all__`."""
    return sorted(set(globals()) | set(__all__))
