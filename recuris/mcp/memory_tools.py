"""One user's memory as MCP tools and resources: recall, remember, forget; recent and history.

Document 004 §3 gives the agent a `search_memory` tool instead of loading every memory into
its context; document 003 §6.3 asks that each memory's history be readable, and §7.2 that
what a user asks to forget be gone. `MemoryTools` offers a manager's memory of ONE user to
an MCP session (session.py): three tools (search_memory, the active-recall tool as it is;
remember, a write; forget, an erasure by id) and two kinds of read-only resource (the recent
memories, and one memory's audit history). The user is fixed when the object is made, by
the server's configuration or the connection's token; no argument names a user.

Invariants:
    MT1 every tool, resource and listing reads and writes the user given at construction
        alone: no argument or URI can name another user, and an id of another user's memory
        is answered exactly as an unknown id (MG1, MG7).
    MT2 a tool call with arguments its schema does not allow (an unknown name, a wrong type,
        a value out of range) is answered as a tool error (`isError`), naming the argument,
        and changes nothing; an unknown tool is a JSON-RPC error (INVALID_PARAMS).
    MT3 the store failing never fails a call: search_memory answers nothing with
        `degraded` (MG5), remember keeps the write queued and says so (G1, MT9), forget answers
        a tool error saying nothing was forgotten (or that only a queued copy was, G12) and
        forgets a memory that was only queued as any other; reading a resource answers
        MEMORY_DOWN.
    MT4 resources/list returns every resource exactly once across its pages, at most
        PAGE_SIZE a page, in a fixed order (the recent memories, then each memory's
        history, newest memory first); a cursor it did not make is refused (INVALID_PARAMS).
    MT5 search_memory is the active-recall tool unchanged: its schema and its answer are
        `handle_search_memory`'s (Z3, Z5); an explicit call always searches, the density
        gate (Z2) applying only to retrieval the agent did not ask for.
    MT6 an id or a history URI that is not valid Unicode text (a lone surrogate) is answered
        as the id of no memory: a tool error from forget, RESOURCE_NOT_FOUND from a read;
        never INTERNAL_ERROR.
    MT7 remember's schema offers only the levels it can store (REMEMBERED_LEVELS); a
        procedure needs steps and a trigger (H2), which it does not take, so "procedural" is
        answered as a tool error naming MT7 and stores nothing.
    MT8 the recent-memories resource is bounded as search_memory is (Z8): its memories'
        contents hold at most SEARCH_TOKEN_BUDGET estimated tokens together, each longer
        than its share cut to it (`fitted_contents`) and flagged `content_truncated`.
    MT9 remember answers `stored: true` only for a write the store took: one left in the
        retry queue (G1) is answered `stored: false, queued: true` with its id and a
        `reason` saying it is not in the database yet (the server saves it at exit, MC6).
    MT10 a memory's history resource is bounded as search_memory is (Z8): its records hold
        at most SEARCH_TOKEN_BUDGET estimated tokens together, as JSON; the newest are kept
        first, each whole, and shown oldest first, and "older_records_left_out" says how
        many older ones did not fit (0 included). The newest is always shown: a reason too
        long for the whole budget is cut to it (`fit`, T5), and "reason_truncated" says so.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from urllib.parse import quote, unquote

from ..core.text import estimate_tokens, fit, flatten
from ..core.validation import require_text, unicode_problem
from ..manager.active_recall import (
    SEARCH_TOKEN_BUDGET,
    ActiveRecall,
    fitted_contents,
    search_memory_tool,
)
from ..manager.manager import MemoryManager
from ..storage.audit import AuditEntry
from ..storage.buffered_store import QueuedErasureError
from ..storage.item import LEVELS, MemoryItem
from ..storage.sqlite_erasure import ErasureIncompleteError
from ..storage.store import StoreError
from .session import INVALID_PARAMS, RESOURCE_NOT_FOUND, RequestError

__all__ = [
    "MemoryTools",
    "PAGE_SIZE",
    "RECENT",
    "RECENT_URI",
    "REMEMBERED_LEVELS",
    "history_uri",
]

PAGE_SIZE = 50  # resources a page of resources/list holds (MT4)
RECENT = 20  # memories the recent-memories resource shows, newest first
RECENT_URI = "memory://recent"
# JSON-RPC's range for a server's own errors: the store cannot be read right now (MT3).
MEMORY_DOWN = -32000
_HISTORY = re.compile(r"^memory://items/([^/]+)/history$")
# The item ids the audit writes for records about no one memory: a skip or a recall ("-"),
# a forget of the whole user ("*"). No memory has them, so no history resource is read at them.
NO_ITEM_MARKS = ("-", "*")
_JSON = "application/json"
# The levels remember stores (MT7): a procedure needs steps and a trigger (H2), not given here.
REMEMBERED_LEVELS = tuple(level for level in LEVELS if level != "procedural")
# What remember says of a write the store could not take yet (MT9, MC6).
QUEUED_REASON = (
    "the database cannot be written now: the memory waits in this server's queue, is written "
    "once it can be, and is saved to a file beside the database if the server ends first"
)

REMEMBER = {
    "name": "remember",
    "description": (
        "Store something the user will want recalled in a later conversation: a preference, a "
        "decision, a fact about their work. Say it in one self-contained sentence."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "content": {"type": "string", "minLength": 1, "description": "what to remember"},
            "level": {
                "type": "string",
                "enum": list(REMEMBERED_LEVELS),
                "description": "where to keep it; chosen by rule when left out",
            },
            "importance": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "how much it matters in recall, 0 to 1 (0.5 when left out)",
            },
        },
        "required": ["content"],
        "additionalProperties": False,
    },
}
FORGET = {
    "name": "forget",
    "description": (
        "Erase one memory for good, by the id search_memory gave, when the user asks you to "
        "forget it or it is wrong. A fact learned from it goes too once every memory it was "
        "learned from is forgotten; a memory that says the same thing on its own stays."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {"id": {"type": "string", "minLength": 1, "description": "the memory's id"}},
        "required": ["id"],
        "additionalProperties": False,
    },
}


def history_uri(item_id: str) -> str:
    """Return the URI of a memory's history (its id escaped, so that any id is one segment)."""
    return f"memory://items/{quote(item_id, safe='')}/history"


def _search_tool() -> dict:
    function = search_memory_tool()["function"]  # MT5: the active-recall tool, unchanged
    return {
        "name": function["name"],
        "description": function["description"],
        "inputSchema": function["parameters"],
    }


def _result(answer: dict, failed: bool = False) -> dict:
    """Return a tool's answer as MCP's CallToolResult: JSON text, and the same as structure."""
    text = json.dumps(answer, ensure_ascii=False)
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": answer,
        "isError": failed,
    }


def _problem(text: str) -> dict:
    return _result({"error": flatten(text, 300)}, failed=True)


class MemoryTools:
    """The tools and resources of one user's memory on a manager (MT1)."""

    def __init__(self, manager: MemoryManager, user_id: str) -> None:
        self.manager = manager
        self.user_id = user_id
        self.recall = ActiveRecall(manager, user_id)
        self.calls = {
            "search_memory": self._search,
            "remember": self._remember,
            "forget": self._forget,
        }
        self.definitions = [_search_tool(), REMEMBER, FORGET]

    # -- tools -----------------------------------------------------------------------------

    def tools(self) -> list[dict]:
        """Return the tools' definitions: name, a description a model can act on, a schema."""
        return [dict(definition) for definition in self.definitions]

    def call(self, name: str, arguments: dict) -> dict:
        """Run a tool; return its CallToolResult (MT2, MT3).

        Raises RequestError for an unknown tool.
        """
        if name not in self.calls:
            raise RequestError(INVALID_PARAMS, f"Unknown tool: {flatten(name, 80)!r}")
        [schema] = [
            definition["inputSchema"]
            for definition in self.definitions
            if definition["name"] == name
        ]
        unknown = sorted(set(arguments) - set(schema["properties"]))
        if unknown:
            named = ", ".join(repr(flatten(key, 40)) for key in unknown)
            return _problem(f"{name}: no argument {named}; the memory is always the user's own")
        return self.calls[name](arguments)

    def _search(self, arguments: dict) -> dict:
        answer = json.loads(self.recall.handle_search_memory(arguments))
        return _result(answer, failed="error" in answer)

    def _remember(self, arguments: dict) -> dict:
        content = arguments.get("content")
        if content == "":  # the schema's minLength; the manager would audit it as trivial
            return _problem("remember: 'content' must be non-empty text")
        level = arguments.get("level")
        if level is not None and level not in REMEMBERED_LEVELS:
            return _problem(
                f"remember: MT7: 'level' must be one of {list(REMEMBERED_LEVELS)} (a procedure "
                f"needs steps and a trigger, H2), got {flatten(str(level), 40)!r}"
            )
        try:
            # The manager checks every argument before it stores anything (MG6).
            item = self.manager.write(
                content,
                self.user_id,
                level=level,
                importance=arguments.get("importance"),
            )
        except (TypeError, ValueError) as error:
            return _problem(f"remember: {error}")
        except StoreError as error:
            return _problem(f"remember: memory unavailable, nothing stored: {error}")
        if item is None:
            return _result({"stored": False, "reason": "too short to be worth remembering"})
        # G1: while the store fails the write waits in the queue, and is written when it is back.
        if self.manager.store.holds(item):
            queued = {"stored": False, "queued": True, "id": item.id, "level": item.level}
            return _result({**queued, "reason": QUEUED_REASON})  # MT9
        return _result({"stored": True, "id": item.id, "level": item.level, "queued": False})

    def _forget(self, arguments: dict) -> dict:
        item_id = arguments.get("id")
        try:
            require_text("'id'", item_id)  # MT6: a lone surrogate is no memory's id
        except (TypeError, ValueError) as error:
            return _problem(f"forget: {error}")
        try:
            forgotten = self.manager.forget_memory(item_id, self.user_id)
        except ErasureIncompleteError:
            return _problem(
                "forget: deleted, but old copies may remain in the database's log while another "
                "program reads it; the erasure completes by itself once it is done"
            )
        except QueuedErasureError as error:
            return _problem(f"forget: the copy waiting to be written is erased; {error}")
        except StoreError as error:
            return _problem(f"forget: memory unavailable, nothing forgotten: {error}")
        if not forgotten:
            # MT1: another user's id and an unknown one read alike.
            return _problem(f"forget: no memory has the id {flatten(item_id, 80)!r}")
        return _result({"forgotten": True, "id": item_id})

    # -- resources -------------------------------------------------------------------------

    def resources(self, cursor: object = None) -> dict:
        """Return one page of the user's resources and, if more follow, the next cursor (MT4)."""
        start = _offset(cursor)
        items = self._items()
        listed = [self._recent_resource(), *map(_history_resource, reversed(items))]
        page = {"resources": listed[start : start + PAGE_SIZE]}
        if start + PAGE_SIZE < len(listed):
            page["nextCursor"] = _cursor(start + PAGE_SIZE)
        return page

    def templates(self) -> dict:
        """Return the template of a memory's history URI."""
        template = {
            "uriTemplate": "memory://items/{id}/history",
            "name": "memory-history",
            "title": "A memory's history",
            "description": "every operation on one memory, from its write to its forgetting",
            "mimeType": _JSON,
        }
        return {"resourceTemplates": [template]}

    def read(self, uri: str) -> dict:
        """Return a resource's contents; raise RequestError for a URI the user has none at."""
        if uri == RECENT_URI:
            recent = list(reversed(self._items()))[:RECENT]
            # MT8: a pasted document must not fill the client's context in one read.
            contents = fitted_contents([item.content for item in recent], SEARCH_TOKEN_BUDGET)
            memories = [_shown(item, content) for item, content in zip(recent, contents)]
            return _contents(uri, {"memories": memories})
        match = _HISTORY.match(uri)
        item_id = unquote(match.group(1)) if match else None
        if item_id in NO_ITEM_MARKS or (item_id and unicode_problem(item_id)):
            item_id = None  # the audit's marks of "no one memory", and what no id holds (MT6)
        try:
            records = self.manager.history(self.user_id, item_id) if item_id else []
        except StoreError as error:
            raise RequestError(MEMORY_DOWN, f"memory unavailable: {error}") from None
        if not records:
            # MT1: another user's memory has no history here, like one that never was.
            raise RequestError(RESOURCE_NOT_FOUND, f"Resource not found: {flatten(uri, 120)}")
        # MT10: a memory audited at every write (the notes' summary) must not fill the
        # client's context in one read.
        history = _newest_fitted(records, SEARCH_TOKEN_BUDGET)
        left_out = len(records) - len(history)
        return _contents(
            uri, {"id": item_id, "history": history, "older_records_left_out": left_out}
        )

    def _items(self) -> list[MemoryItem]:
        try:
            return self.manager.list(self.user_id)
        except StoreError as error:
            raise RequestError(MEMORY_DOWN, f"memory unavailable: {error}") from None

    @staticmethod
    def _recent_resource() -> dict:
        return {
            "uri": RECENT_URI,
            "name": "recent-memories",
            "title": "Recent memories",
            "description": f"the user's {RECENT} most recent memories, newest first",
            "mimeType": _JSON,
        }


def _history_resource(item: MemoryItem) -> dict:
    return {
        "uri": history_uri(item.id),
        "name": f"history-{item.id}",
        "title": f"History of {item.id}",
        "description": flatten(item.content, 80),
        "mimeType": _JSON,
    }


def _shown(item: MemoryItem, content: str) -> dict:
    """Return a memory as the recent-memories resource shows it, its content fitted (MT8)."""
    return {
        "id": item.id,
        "level": item.level,
        "content": content,
        "content_truncated": content != item.content,
        "created_at": item.created_at,
        "importance": item.importance,
        "valid": item.invalidated_at is None,
    }


def _newest_fitted(records: list[AuditEntry], budget: int) -> list[dict]:
    """Return the newest records whose JSON fits `budget` tokens together, oldest first (MT10)."""
    kept = []
    left = budget
    for record in reversed(records):
        shown = {
            "operation": record.operation,
            "reason": record.reason,
            "at": record.at,
            "weight": record.weight,
        }
        cost = estimate_tokens(json.dumps(shown, ensure_ascii=False))
        if cost > left and kept:
            break
        if cost > left:  # the newest, alone too long: its reason is cut to what is left
            rest = estimate_tokens(json.dumps({**shown, "reason": "", "reason_truncated": True}))
            shown.update(reason=fit(record.reason, max(budget - rest, 0)), reason_truncated=True)
            cost = budget
        kept.append(shown)
        left -= cost
    return kept[::-1]


def _contents(uri: str, data: dict) -> dict:
    text = json.dumps(data, ensure_ascii=False)
    return {"contents": [{"uri": uri, "mimeType": _JSON, "text": text}]}


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def _offset(cursor: object) -> int:
    """Return where a page starts; raise RequestError for a cursor this server did not make."""
    if cursor is None:
        return 0
    try:
        offset = json.loads(base64.urlsafe_b64decode(str(cursor).encode()))["offset"]
    except (ValueError, TypeError, KeyError, binascii.Error, RecursionError):
        offset = None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise RequestError(INVALID_PARAMS, "Invalid params: the cursor is not one this server gave")
    return offset
