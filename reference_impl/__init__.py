"""The reference interpreter of the rules of Thousand, driven only by a resolved profile.

``MatchState(Rules.from_document(doc), match)`` is a match; ``start_deal``,
``legal_actions``, ``apply``, ``observation``, ``to_json``/``from_json`` drive it.
"""

from __future__ import annotations

from .cards import Card, deal_random
from .errors import DealError, EngineError, IllegalActionError, MalformedActionError, RefusedActionError, RulesError
from .rules import Rules
from .state import MatchState

__all__ = [
    "Card",
    "DealError",
    "EngineError",
    "IllegalActionError",
    "MalformedActionError",
    "MatchState",
    "RefusedActionError",
    "Rules",
    "RulesError",
    "deal_random",
]
