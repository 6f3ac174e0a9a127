"""Linearizable reads through the leader: ReadIndex (etcd-io/raft read_only.go, ReadOnlySafe).

A read that arrives at the leader is stamped with the commit index of that moment. The leader
then sends a heartbeat carrying the request's context; once a quorum has answered it, nobody
else can have been leader in between, so every state machine that has applied up to the stamped
index may serve the read. An answer for one request also answers every earlier one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ReadOnly", "ReadRequest"]


@dataclass
class ReadRequest:
    index: int                 # the commit index when the request came in
    frm: str                   # who asked (the leader itself for a local read)
    acks: set[str] = field(default_factory=set)


class ReadOnly:
    def __init__(self) -> None:
        self.pending: dict[int, ReadRequest] = {}   # by context, in arrival order

    def add_request(self, index: int, context: int, frm: str, leader: str) -> None:
        self.pending.setdefault(context, ReadRequest(index, frm, {leader}))

    def recv_ack(self, frm: str, context: int) -> int:
        """A heartbeat answer carrying context: how many have confirmed it (0: unknown)."""
        request = self.pending.get(context)
        if request is None:
            return 0
        request.acks.add(frm)
        return len(request.acks)

    def advance(self, context: int) -> list[tuple[int, ReadRequest]]:
        """Take out the request of context and every one that came before it."""
        done = []
        for ctx in list(self.pending):
            done.append((ctx, self.pending.pop(ctx)))
            if ctx == context:
                break
        return done
