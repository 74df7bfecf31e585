"""Requests for the reference's server in the tests: a fixed deal and a random stream of requests."""

from __future__ import annotations

import random
from typing import Any

import variants
from reference_impl import deal_random
from reference_impl.server import Server

# A deal in deck order: seat 0 holds the spades and AC, seat 1 the rest of clubs and AD 10D, seat 2
# the rest of diamonds and AH 10H KH; the talon QH JH 9H.
HANDS = [
    ["AS", "10S", "KS", "QS", "JS", "9S", "AC"],
    ["10C", "KC", "QC", "JC", "9C", "AD", "10D"],
    ["KD", "QD", "JD", "9D", "AH", "10H", "KH"],
]
TALON = ["QH", "JH", "9H"]


def random_requests(seed: int, steps: int) -> list[dict[str, Any]]:
    """A match, a deal and ``steps`` random actions (legal most often), each with its state."""
    hands, talon = deal_random(seed)
    requests: list[dict[str, Any]] = [
        {"cmd": "match", "profile": "classic", "document": variants.resolve("classic").to_document(), "document_key": "k"},
        {"cmd": "deal", "dealer": 0, "hands": [[c.code for c in h] for h in hands], "talon": [c.code for c in talon]},
        {"cmd": "state"},
    ]
    rng = random.Random(seed)
    probe = Server()  # plays along to choose actions from the legal sets
    for request in requests:
        probe._answer(request, probe.handlers)
    for _ in range(steps):
        legal = probe._answer({"cmd": "legal"}, probe.handlers)["actions"]
        action = rng.choice(legal) if legal and rng.random() < 0.8 else rng.choice(["pass", "bid 95", "play AS", "give_up"])
        for request in ({"cmd": "legal"}, {"cmd": "apply", "action": action}, {"cmd": "state"}):
            requests.append(request)
            probe._answer(request, probe.handlers)
    return requests
