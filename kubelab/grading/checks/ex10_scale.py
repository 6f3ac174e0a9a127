"""Checks for notebook 10's exercise: a fair queue (10.1).

The learner's FairQueue is one priority level's queues. Its hands are compared card for card
with kubelab's Dealer (shufflesharding.go); then seeded mixes of requests are replayed through
it on a simulated clock, the grader keeping its own count of seats: a flooding flow next to
a few polite ones. The polite flows must get all they ask for, quickly and without a 429,
the flood only what they leave, and the seats in use never more than the level has. Two
rules of queueset.go get a check of their own: a request is refused only when every seat is
busy and its queue is full (rejectOrEnqueueToBoundLocked), and a queue that was idle starts at
the current virtual time (enqueueToBoundLocked: nextDispatchR = currentR). Every expected
answer is computed from the run (the grader's own count of seats and of who was served), never
read from a table a submission could return.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter
from dataclasses import dataclass

from kubelab.apiserver.flowcontrol import Dealer, hash_flow_id
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check

__all__: list[str] = []


@check("10.1", points=2, hint="hash_value % (queues - i) is the i-th digit; then divide. A digit "
       "counts among the cards left: step over each card already dealt that is <= it.")
def deals_hands_as_upstream(ctx: CheckContext) -> None:
    rand = random.Random(ctx.seed)
    for deck, hand in ((4, 2), (16, 4), (64, 6), (128, 6), (6, 6)):
        fq = ctx.learner(4, deck, hand, 50)
        for hash_value in [0, 10, 2**64 - 1] + [rand.getrandbits(64) for _ in range(20)]:
            got = [int(card) for card in fq.deal(hash_value)]
            expected = Dealer(deck, hand).deal_into_hand(hash_value)
            if got != expected:
                ctx.fail(f"the hand of hash {hash_value} with {deck} queues and a hand of {hand}",
                         expected=expected, got=got)


@check("10.1", points=1, hint="Each request joins the queue of its hand with the fewest seats "
       "waiting, so a flow spreads over its hand; refuse only when every seat is busy and that "
       "queue is full.")
def spreads_a_flow_over_its_hand(ctx: CheckContext) -> None:
    fq = ctx.learner(1, 8, 3, 2)
    hash_value = hash_flow_id("global-default", f"bob-{ctx.seed}")
    hand = Dealer(8, 3).deal_into_hand(hash_value)
    fq.enqueue("first", hash_value, 1)
    ctx.expect_equal([str(r) for r in fq.dispatch()], ["first"], "dispatch() with a free seat",
                     unit="started:")
    answers = [bool(fq.enqueue(f"r{i}", hash_value, 1)) for i in range(7)]
    ctx.expect_equal(answers, [True] * 6 + [False],
                     "enqueue of 7 requests while the only seat is busy (3 queues of 2 in the hand)",
                     unit="accepted:")
    lengths = [int(n) for n in fq.queue_lengths()]
    expected = [2 if i in hand else 0 for i in range(8)]
    ctx.expect_equal(lengths, expected, f"queue_lengths() (the flow's hand is {sorted(hand)})",
                     unit="waiting per queue:")
    ctx.expect_equal([str(r) for r in fq.dispatch()], [], "dispatch() while the seat is busy",
                     unit="started:")
    fq.finish("first")
    ctx.expect_equal(len(fq.dispatch()), 1, "dispatch() after finish(first)", unit="started:")


@check("10.1", points=1, seeds=(1, 2), hint="A request is refused only when every seat is busy "
       "and its queue is full (queueset.go rejectOrEnqueueToBoundLocked): while a seat is free it "
       "is accepted, however many wait in its queue, and starts at the next dispatch().")
def rejects_only_when_every_seat_is_busy(ctx: CheckContext) -> None:
    rand = random.Random(ctx.seed)
    limit, queue_length_limit = rand.randint(3, 5), 1
    fq = ctx.learner(limit, 8, 1, queue_length_limit)
    hash_value = hash_flow_id("global-default", f"carol-{ctx.seed}")
    in_use, waiting = 0, 0
    accepted: list[bool] = []
    expected: list[bool] = []
    for i in range(limit + 2):  # one flow, one queue: all but the last two arrive with seats free
        if i == limit:
            started = [str(r) for r in fq.dispatch()]
            ctx.expect_equal(len(started), waiting, f"dispatch() with {limit} seats free and "
                             f"{waiting} waiting", unit="started:")
            in_use, waiting = in_use + len(started), 0
        ok = bool(fq.enqueue(f"r{i}", hash_value, 1))
        accepted.append(ok)
        expected.append(in_use < limit or waiting < queue_length_limit)  # the grader's own count
        waiting += ok
    ctx.expect_equal(accepted, expected, f"enqueue of {limit + 2} requests of one flow on a level "
                     f"of {limit} seats whose queues hold {queue_length_limit}: the first {limit} "
                     "arrive while seats are free, so a full queue is no reason to refuse them",
                     unit="accepted:")


@check("10.1", points=2, hint="A request starts only if its seats fit beside those in use; one "
       "wider than the level starts alone, when nothing executes.")
def keeps_to_the_seats(ctx: CheckContext) -> None:
    fq = ctx.learner(4, 16, 2, 10)
    a, b, c = (hash_flow_id("fs", name) for name in ("a", "b", "c"))
    fq.enqueue("wide-3", a, 3)
    ctx.expect_equal([str(r) for r in fq.dispatch()], ["wide-3"], "a 3-seat request of 4",
                     unit="started:")
    fq.enqueue("two-2", b, 2)
    ctx.expect_equal([str(r) for r in fq.dispatch()], [], "a 2-seat request beside 3 of 4 in use",
                     unit="started:")
    fq.enqueue("huge-9", c, 9)
    fq.finish("wide-3")
    started = [str(r) for r in fq.dispatch()]
    ctx.expect_equal(started, ["two-2"], "after the 3-seat request finished (a 2-seat and a "
                     "9-seat request wait; the 2-seat one would finish first)", unit="started:")
    fq.finish("two-2")
    ctx.expect_equal([str(r) for r in fq.dispatch()], ["huge-9"],
                     "a 9-seat request on a 4-seat level with nothing executing", unit="started:")


@dataclass
class _Sent:
    flow: str
    arrival: float
    service: float
    seats: int
    start: float | None = None
    rejected: bool = False


def _replay(ctx: CheckContext, rand: random.Random, limit: int, flows: dict[str, tuple[int, float]],
            seconds: float) -> tuple[dict[str, _Sent], dict[str, int]]:
    """Replay the flows (requests per burst, seconds between bursts) through the learner's
    queue; the grader keeps time and seats. Returns every request and each flow's hash."""
    fq = ctx.learner(limit, 16, 2, 10)
    hashes = {flow: hash_flow_id("replay", f"{flow}-{ctx.seed}") for flow in flows}
    events: list[tuple[float, int, str, str]] = []  # (time, seq, what, flow or request id)
    seq = 0
    for flow, (_, every) in flows.items():
        seq += 1
        heapq.heappush(events, (rand.uniform(0, every), seq, "burst", flow))
    sent: dict[str, _Sent] = {}
    in_use = 0
    while events:
        now, _, what, name = heapq.heappop(events)
        if what == "burst":
            n, every = flows[name]
            for _ in range(n):
                rid = f"{name}-{len(sent)}"
                sent[rid] = req = _Sent(name, now, rand.choice((0.005, 0.01, 0.015)), 1)
                req.rejected = not bool(fq.enqueue(rid, hashes[name], 1))
            if now + every < seconds:
                seq += 1
                heapq.heappush(events, (now + every, seq, "burst", name))
        else:
            fq.finish(name)
            in_use -= sent[name].seats
        for rid in [str(r) for r in fq.dispatch()]:
            started = sent.get(rid)
            if started is None or started.start is not None or started.rejected:
                ctx.fail("dispatch() returned a request that was not waiting", got=rid)
            started.start = now
            in_use += started.seats
            if in_use > limit:
                ctx.fail(f"seats in use at t={now:.3f}s", expected=f"at most {limit}", got=in_use)
            seq += 1
            heapq.heappush(events, (now + started.service, seq, "finish", rid))
    return sent, hashes


@check("10.1", points=2, seeds=(1, 2), hint="A queue with nothing waiting or executing "
       "starts at the current virtual time when a request joins it (queueset.go "
       "enqueueToBoundLocked: nextDispatchR = currentR): no credit for the time it sat idle.")
def an_idle_queue_gets_no_credit(ctx: CheckContext) -> None:
    rand = random.Random(ctx.seed)
    dealer = Dealer(16, 1)
    busy = hash_flow_id("idle", f"busy-{ctx.seed}")
    back = next(h for h in (hash_flow_id("idle", f"back-{ctx.seed}-{k}") for k in range(100))
                if dealer.deal_into_hand(h) != dealer.deal_into_hand(busy))
    fq = ctx.learner(1, 16, 1, 50)
    served, later = 10 + rand.randint(0, 5), 10
    for i in range(served + later):
        fq.enqueue(f"busy-{i}", busy, 1)
    for _ in range(served):  # one seat: one request at a time, the other flow idle
        started = [str(r) for r in fq.dispatch()]
        ctx.expect_equal(len(started), 1, "dispatch() with one seat free", unit="started:")
        fq.finish(started[0])
    for i in range(later):
        fq.enqueue(f"back-{i}", back, 1)
    order: list[str] = []
    for _ in range(later):
        started = [str(r) for r in fq.dispatch()]
        order += started
        for rid in started:
            fq.finish(rid)
    returned = sum(rid.startswith("back-") for rid in order)
    if returned > later // 2 + 1:
        ctx.fail(f"seats taken by a flow coming back after its queue sat idle while another flow "
                 f"was served {served} times, in the next {later} dispatches (both queues are "
                 "backlogged, the requests alike): the idle queue was credited for its idle time",
                 expected=f"at most {later // 2 + 1} of {later} (about half each)",
                 got=f"{returned} of {len(order)}")


@check("10.1", points=2, seeds=(1, 2, 3), hint="Fair queuing: the next request is the head of "
       "the queue that would finish first in virtual time, not the oldest request overall; a "
       "queue that was idle starts at the current virtual time.")
def a_flood_takes_only_what_the_others_leave(ctx: CheckContext) -> None:
    rand = random.Random(ctx.seed)
    dealer = Dealer(16, 2)
    flood_hand = set(dealer.deal_into_hand(hash_flow_id("replay", f"flood-{ctx.seed}")))
    polite: dict[str, tuple[int, float]] = {}
    for k in range(100):  # a polite flow whose whole hand is the flood's would share its fate
        name = f"polite-{k}"
        if len(polite) < 3 and not set(dealer.deal_into_hand(
                hash_flow_id("replay", f"{name}-{ctx.seed}"))) <= flood_hand:
            polite[name] = (1, 0.04)
    flows: dict[str, tuple[int, float]] = {"flood": (6, 0.004), **polite}
    sent, _ = _replay(ctx, rand, 4, flows, seconds=1.0)
    by_flow: dict[str, list[_Sent]] = {}
    for req in sent.values():
        by_flow.setdefault(req.flow, []).append(req)
    for flow in polite:
        refused = sum(r.rejected for r in by_flow[flow])
        ctx.expect_equal(refused, 0, f"429s for {flow}, which asks for a small share",
                         unit="rejected request(s):")
        waits = [r.start - r.arrival for r in by_flow[flow] if r.start is not None]
        ctx.expect_equal(len(waits), len(by_flow[flow]), f"requests of {flow} that started",
                         unit="request(s):")
        if max(waits) > 0.03:
            ctx.fail(f"the longest wait of {flow} in its queue while the flood fills its own",
                     expected="at most 0.030 s", got=f"{max(waits):.3f} s")
    flood = by_flow["flood"]
    if not any(r.rejected for r in flood):
        ctx.fail("429s for the flood", expected="some: its queues are full", got="none")
    polite_work = sum(r.service for f in polite for r in by_flow[f])
    flood_work = sum(r.service for r in flood if r.start is not None and r.start < 1.0)
    if flood_work > 4 * 1.0 - polite_work + 0.1:
        ctx.fail("seat-seconds the flood was given in the first second",
                 expected=f"at most what the others left: {4 - polite_work:.2f}",
                 got=f"{flood_work:.2f}")
    counts: Counter[str] = Counter(r.flow for r in sent.values() if r.start is None and not r.rejected)
    if counts:
        ctx.fail("requests never started", got=dict(counts))

