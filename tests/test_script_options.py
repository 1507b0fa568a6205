"""rbmlab.validation.typed_key_values: the key=value options of the scripts under scripts/."""

from __future__ import annotations

import pytest

from rbmlab.errors import RbmlabError
from rbmlab.validation import typed_key_values

DEFAULTS = {"seeds": "0,1", "epochs": 40, "rate": 0.5, "name": "a", "plot": True}
LISTS = {"seeds": int}


def test_values_take_their_defaults_types_and_lists_their_item_type():
    opts = typed_key_values(["epochs=7", "seeds=3,,4", "rate=1e-3", "plot=false"], DEFAULTS, LISTS)
    assert opts == {"seeds": [3, 4], "epochs": 7, "rate": 1e-3, "name": "a", "plot": False}
    assert typed_key_values(["plot=True"], DEFAULTS, LISTS)["plot"] is True
    assert typed_key_values([], DEFAULTS, LISTS)["seeds"] == [0, 1]


@pytest.mark.parametrize(
    "items, keep_empty, message",
    [
        (["epochs"], False, "epochs: expected key=value"),
        (["epoch=3"], False, "epoch: unknown key, expected one of seeds, epochs, rate, name, plot"),
        (["plot=no"], False, "plot: expected true or false, got 'no'"),
        (["epochs=many"], False, "epochs: expected int, got 'many'"),
        (["seeds=1,x"], False, "seeds: expected comma-separated ints, got '1,x'"),
        (["seeds=1,,2"], True, "seeds: expected comma-separated ints, got '1,,2'"),  # an empty item kept
    ],
)
def test_a_bad_item_is_one_line_naming_its_key(items, keep_empty, message):
    with pytest.raises(RbmlabError) as caught:
        typed_key_values(items, DEFAULTS, LISTS, keep_empty=keep_empty)
    assert str(caught.value) == message
