"""Shuffle sharding against upstream's shufflesharding_test.go expectations, and flow hashing."""

from __future__ import annotations

import hashlib
import math
from collections import Counter

import pytest

from kubelab.apiserver.flowcontrol import Dealer, hash_flow_id
from kubelab.apiserver.flowcontrol.shufflesharding import required_entropy_bits


def test_required_entropy_bits_as_upstream() -> None:
    assert required_entropy_bits(1024, 6) == 60
    assert required_entropy_bits(512, 8) == 72


@pytest.mark.parametrize(("deck", "hand", "message"), [
    (-100, 8, "deckSize -100 or handSize 8 is not positive"),
    (100, 0, "deckSize 100 or handSize 0 is not positive"),
    (100, 101, "handSize 101 is greater than deckSize 100"),
    (1 << 27, 2, "deckSize 134217728 is impractically large"),
    (512, 8, "required entropy bits of deckSize 512 and handSize 8 is greater than 60"),
])
def test_new_dealer_refuses_what_upstream_refuses(deck: int, hand: int, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        Dealer(deck, hand)


def test_a_deal_reads_the_hash_as_mixed_radix_digits() -> None:
    # hash 10, deck 4: digits 10 % 4 = 2, then (10 // 4) % 3 = 2; the second 2 skips card 2.
    assert Dealer(4, 2).deal_into_hand(10) == [2, 3]
    # hash 6: 6 % 4 = 2, (6 // 4) % 3 = 1 -> cards 2 and 1 (1 < 2: no skip).
    assert Dealer(4, 2).deal_into_hand(6) == [2, 1]
    # upstream's DealIntoHand(0) on a 6-card deck deals all six, in order.
    assert Dealer(6, 6).deal_into_hand(0) == [0, 1, 2, 3, 4, 5]
    dealer = Dealer(128, 6)
    assert dealer.deal_into_hand(0xDEADBEEF) == dealer.deal_into_hand(0xDEADBEEF)


@pytest.mark.parametrize(("deck", "hand"), [(4, 4), (8, 8), (10, 10), (12, 12), (128, 8),
                                            (256, 7), (512, 6)])
def test_no_card_is_dealt_twice(deck: int, hand: int) -> None:
    dealer = Dealer(deck, hand)
    for hash_value in (0, 1, 2**59 + 12345, 2**64 - 1, 0x0123456789ABCDEF):
        cards = dealer.deal_into_hand(hash_value)
        assert len(cards) == hand and len(set(cards)) == hand
        assert all(0 <= card < deck for card in cards)


@pytest.mark.parametrize(("deck", "hand"), [(16, 3), (12, 4), (9, 2)])
def test_every_hand_is_dealt_equally_often(deck: int, hand: int) -> None:
    """TestUniformDistribution: the first deck!/(deck-hand)! hash values deal every hand
    exactly hand! times."""
    falling = math.perm(deck, hand)
    seen = Counter(tuple(sorted(Dealer(deck, hand).deal_into_hand(h))) for h in range(falling))
    assert len(seen) == math.comb(deck, hand)
    assert set(seen.values()) == {math.factorial(hand)}


def test_flow_hash_is_sha256_of_schema_nul_distinguisher() -> None:
    expected = int.from_bytes(hashlib.sha256(b"global-default\x00bob").digest()[:8], "little")
    assert hash_flow_id("global-default", "bob") == expected
    assert hash_flow_id("global-default", "bob") != hash_flow_id("global-defaultb", "ob")
