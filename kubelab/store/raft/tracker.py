"""What a leader knows of each follower's log (etcd-io/raft tracker/progress.go).

kubelab keeps only match and next, and sends optimistically (next moves past what was sent,
as in upstream's StateReplicate); flow control (Inflights, StateProbe's pause) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Progress"]


@dataclass
class Progress:
    match: int = 0             # highest index known to be in the follower's log
    next: int = 1              # the next index to send it
    recent_active: bool = False  # heard from since the last CheckQuorum round

    def maybe_update(self, n: int) -> bool:
        """The follower has everything up to n (an accepted MsgAppResp); False if stale."""
        if n <= self.match:
            return False
        self.match, self.next = n, max(self.next, n + 1)
        return True

    def maybe_decr_to(self, rejected: int, match_hint: int) -> bool:
        """The follower refused entries after `rejected`; it has at most `match_hint`. Go back
        and try again from there. False for a stale rejection (at or below match)."""
        if rejected <= self.match:
            return False
        self.next = max(self.match + 1, min(rejected, match_hint + 1))
        return True
