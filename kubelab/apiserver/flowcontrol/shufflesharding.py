"""Shuffle sharding: deal each flow a hand of queues from a deck, using its hash as entropy.

Follows k8s.io/apiserver pkg/util/shufflesharding/shufflesharding.go. A flow's hash value is
read as a mixed-radix number: its digits in bases deckSize, deckSize-1, ... are the positions
of the cards still in the deck, so the same hash always deals the same hand, and two flows
rarely share a whole hand (a flooding flow fills only its own queues).
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["MAX_HASH_BITS", "Dealer", "required_entropy_bits"]

# Bits of the hash a deal may use: with all 64 the last card would be uneven by 2:3, with 60
# by at most 32:33 (upstream's MaxHashBits).
MAX_HASH_BITS = 60


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    """A slightly conservative estimate of the hash bits one deal consumes."""
    return math.ceil(math.log2(deck_size) * hand_size)


class Dealer:
    """Deals hands of hand_size distinct cards from a deck of deck_size cards."""

    def __init__(self, deck_size: int, hand_size: int) -> None:
        # NewDealer's checks, in its order and words.
        if deck_size <= 0 or hand_size <= 0:
            raise ValueError(f"deckSize {deck_size} or handSize {hand_size} is not positive")
        if hand_size > deck_size:
            raise ValueError(f"handSize {hand_size} is greater than deckSize {deck_size}")
        if deck_size > 1 << 26:
            raise ValueError(f"deckSize {deck_size} is impractically large")
        if required_entropy_bits(deck_size, hand_size) > MAX_HASH_BITS:
            raise ValueError(f"required entropy bits of deckSize {deck_size} and handSize "
                             f"{hand_size} is greater than {MAX_HASH_BITS}")
        self.deck_size, self.hand_size = deck_size, hand_size

    def deal(self, hash_value: int, pick: Callable[[int], None]) -> None:
        """Call pick(card) once per card of the hand, in dealing order."""
        remainders = []
        for i in range(self.hand_size):
            hash_value, remainder = divmod(hash_value, self.deck_size - i)
            remainders.append(remainder)
        for i, card in enumerate(remainders):
            # card is a position among the cards left: step over those already dealt.
            for j in range(i, 0, -1):
                if card >= remainders[j - 1]:
                    card += 1
            pick(card)

    def deal_into_hand(self, hash_value: int) -> list[int]:
        hand: list[int] = []
        self.deal(hash_value, hand.append)
        return hand
