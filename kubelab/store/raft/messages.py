"""Raft's messages and log entries, shaped like etcd-io/raft's raftpb/raft.proto (frozen, as a
message on the wire cannot change).

Only the message types kubelab's members exchange are here; pre-vote (MsgPreVote) is left out
(see kubelab/store/raft/__init__.py). Field names follow raftpb.Message: `index` and
`log_term` name the entry just before `entries` in a MsgApp, the candidate's last entry in a
MsgVote, and the follower's answer in a MsgAppResp; in a rejected MsgAppResp, `index` is the
rejected MsgApp's index and (`reject_hint`, `log_term`) the follower's guess of where the logs
may still agree (log.go findConflictByTerm).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

__all__ = [
    "MSG_APP", "MSG_APP_RESP", "MSG_HEARTBEAT", "MSG_HEARTBEAT_RESP", "MSG_PROP", "MSG_READ_INDEX",
    "MSG_READ_INDEX_RESP", "MSG_SNAP", "MSG_VOTE", "MSG_VOTE_RESP", "Entry", "Message", "Snapshot",
    "VoteRequest", "VoterState",
]

MSG_PROP = "MsgProp"                        # a proposal forwarded to the leader
MSG_APP = "MsgApp"                          # AppendEntries
MSG_APP_RESP = "MsgAppResp"
MSG_VOTE = "MsgVote"                        # RequestVote
MSG_VOTE_RESP = "MsgVoteResp"
MSG_SNAP = "MsgSnap"                        # InstallSnapshot
MSG_HEARTBEAT = "MsgHeartbeat"
MSG_HEARTBEAT_RESP = "MsgHeartbeatResp"
MSG_READ_INDEX = "MsgReadIndex"             # a follower asks the leader for a read index
MSG_READ_INDEX_RESP = "MsgReadIndexResp"


@dataclass(frozen=True, slots=True)
class Entry:
    """One log entry. data is None for the empty entry a new leader appends (raft.go
    becomeLeader), else the request the state machine applies."""

    term: int
    index: int
    data: object = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The state machine as of `index` (raftpb.Snapshot): what a member far behind installs."""

    index: int
    term: int
    data: object  # the member's StoreImage (kubelab/store/raft/member.py)


@dataclass(frozen=True, slots=True)
class Message:
    type: str
    to: str
    frm: str
    term: int
    log_term: int = 0
    index: int = 0
    entries: tuple[Entry, ...] = ()
    commit: int = 0
    reject: bool = False
    reject_hint: int = 0
    context: int = 0                        # a ReadIndex request's id, carried by heartbeats
    snapshot: Snapshot | None = None

    def _replace(self, **changes: object) -> Message:
        return replace(self, **changes)  # type: ignore[arg-type]

    def __str__(self) -> str:
        extra = f" entries={len(self.entries)}" if self.entries else ""
        rejected = " reject" if self.reject else ""
        return (f"{self.type} {self.frm}->{self.to} term={self.term} index={self.index} "
                f"commit={self.commit}{extra}{rejected}")


class VoterState(NamedTuple):
    """What a member knows when a MsgVote arrives (the rules' view of raft's state)."""

    term: int
    voted_for: str | None      # whom this member voted for in `term` (None: nobody yet)
    leader: str | None         # the leader it follows in `term` (None: none known)
    last_log_index: int
    last_log_term: int


class VoteRequest(NamedTuple):
    """A MsgVote, as the rules see it."""

    term: int                  # equal to VoterState.term: the member stepped up to it first
    candidate: str
    last_log_index: int
    last_log_term: int
