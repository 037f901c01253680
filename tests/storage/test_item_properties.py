"""Property tests for recuris.storage.item.MemoryItem (I1-I3)."""

import json

from hypothesis import given
from hypothesis import strategies as st

from recuris import MemoryItem
from recuris.storage.item import LEVELS

json_data = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
items = st.builds(
    MemoryItem,
    id=st.text(min_size=1).filter(str.strip),
    user_id=st.text(min_size=1).filter(str.strip),
    level=st.sampled_from(LEVELS),
    content=st.text(min_size=1).filter(str.strip),
    created_at=st.floats(-1e12, 1e12),
    importance=st.floats(0, 1),
    access_count=st.integers(0, 10**6),
    metadata=st.dictionaries(st.text(max_size=8), json_data, max_size=4),
)


@given(items)
def test_I2_to_dict_is_json_and_round_trips(item):
    """I2: to_dict survives a JSON round trip and rebuilds an equal item."""
    assert MemoryItem.from_dict(json.loads(json.dumps(item.to_dict()))) == item


@given(items, st.floats(-1e12, 1e12), st.none() | st.text(min_size=1).filter(str.strip))
def test_I3_closing_changes_only_validity(item, at, successor):
    """I3: a closed copy differs only in invalidated_at and superseded_by."""
    closed = item.closed(at, successor)
    assert not closed.is_valid and closed.superseded_by == successor
    assert {
        k: v for k, v in closed.to_dict().items() if k not in ("invalidated_at", "superseded_by")
    } == {k: v for k, v in item.to_dict().items() if k not in ("invalidated_at", "superseded_by")}
