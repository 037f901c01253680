"""recuris: memory for long-horizon LLM agents, in the standard library only.

Read the core first, recuris/core/, document 000's loop: text, records, working memory and
compression, episodic memory, decay, the prompt, the agent (docs/README.md gives the path);
then search, storage, memory that evolves, and the manager that recalls across layers.
"""

import sys

# Checked before any module is imported: they are written for Python 3.10 (`int | None` in
# a signature is an error on 3.9). Named as this package's own failure, `python -m recuris`
# on an older interpreter reports it in one line instead of a traceback.
if sys.version_info < (3, 10):
    raise ImportError(
        f"recuris needs Python 3.10 or newer; this is Python {sys.version.split()[0]}",
        name=__name__,
    )

from .core.agent import AgentSettings, RecurisAgent
from .core.clock import ManualClock
from .core.compression import StructuredSummarizer
from .core.decay import DecayManager, DecayReport, DecaySettings
from .core.episodic import EpisodicMemory, RetrievalSettings
from .core.records import AuditRecord, Episode, Hit, RunResult, StageEvent, Step
from .core.similarity import JaccardScorer, jaccard
from .core.text import estimate_tokens, tokenize
from .core.working import WorkingMemory, WorkingSettings
from .evolution.consolidation import Conflict, ConsolidationSettings, Consolidator
from .evolution.procedural import ProceduralMemory, Procedure
from .evolution.reflection import ReflectionCallback
from .evolution.semantic import Fact, SemanticMemory
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

__all__ = [
    "WorkingMemory",
    "WorkingSettings",
    "StructuredSummarizer",
    "EpisodicMemory",
    "RetrievalSettings",
    "SemanticMemory",
    "Consolidator",
    "ConsolidationSettings",
    "Conflict",
    "DecayManager",
    "DecayReport",
    "DecaySettings",
    "MemoryManager",
    "ManagerSettings",
    "RecallPolicy",
    "RecallResult",
    "Weights",
    "ProceduralMemory",
    "Procedure",
    "MemoryItem",
    "InMemoryStore",
    "SQLiteStore",
    "StoreError",
    "ForgottenUserError",
    "ErasureIncompleteError",
    "ReflectionCallback",
    "ActiveRecall",
    "search_memory_tool",
    "JaccardScorer",
    "BM25Scorer",
    "BM25Settings",
    "CosineScorer",
    "RecurisAgent",
    "AgentSettings",
    "RunResult",
    "StageEvent",
    "Step",
    "Episode",
    "Hit",
    "Fact",
    "AuditRecord",
    "AuditEntry",
    "ManualClock",
    "tokenize",
    "jaccard",
    "estimate_tokens",
]

__version__ = "0.1.0"
