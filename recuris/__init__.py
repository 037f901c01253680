"""recuris: memory for long-horizon LLM agents, in the standard library only.

Read the modules in the order of the design: text, records, working (with compression),
episodic, semantic and consolidation, decay, prompt, agent; mock_llm drives them offline.
"""

from .agent import RecurisAgent, RunResult, StageEvent
from .clock import ManualClock
from .compression import StructuredSummarizer
from .consolidation import Conflict, Consolidator
from .decay import DecayManager, DecayReport
from .episodic import EpisodicMemory
from .records import AuditRecord, Episode, Fact, Hit, Step
from .semantic import SemanticMemory
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
