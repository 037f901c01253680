"""recuris: memory for long-horizon LLM agents, in the standard library only.

Read the modules in the order of the design (docs/README.md lists them): text and records,
working memory and compression, episodic, semantic, consolidation, procedural, decay; then
storage, the manager that routes and recalls across layers, and the agent loop on top.
"""

from .active_recall import ActiveRecall, search_memory_tool
from .agent import RecurisAgent
from .clock import ManualClock
from .compression import StructuredSummarizer
from .consolidation import Conflict, Consolidator
from .decay import DecayManager, DecayReport
from .episodic import EpisodicMemory
from .item import MemoryItem
from .manager import MemoryManager
from .procedural import ProceduralMemory, Procedure
from .recall import RecallPolicy, RecallResult, Weights
from .records import AuditRecord, Episode, Fact, Hit, RunResult, StageEvent, Step
from .reflection import ReflectionCallback
from .scoring import BM25Scorer, CosineScorer, JaccardScorer
from .semantic import SemanticMemory
from .sqlite_erasure import ErasureIncompleteError
from .sqlite_store import SQLiteStore
from .memory_store import InMemoryStore
from .store import ForgottenUserError, StoreError
from .text import estimate_tokens, jaccard, tokenize
from .working import WorkingMemory

__all__ = [
    "WorkingMemory",
    "StructuredSummarizer",
    "EpisodicMemory",
    "SemanticMemory",
    "Consolidator",
    "Conflict",
    "DecayManager",
    "DecayReport",
    "MemoryManager",
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
    "CosineScorer",
    "RecurisAgent",
    "RunResult",
    "StageEvent",
    "Step",
    "Episode",
    "Hit",
    "Fact",
    "AuditRecord",
    "ManualClock",
    "tokenize",
    "jaccard",
    "estimate_tokens",
]

__version__ = "0.1.0"
