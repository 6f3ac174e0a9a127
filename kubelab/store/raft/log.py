"""A member's Raft log: entries, the commit index, the applied index (etcd-io/raft log.go).

Upstream splits the log into stable storage (storage.go) and the unstable tail (log_unstable.go)
that the application persists in its Ready loop; kubelab's members have no disk to wait for, so
one list plays both. Entries before `snapshot_index` are compacted away: only the snapshot's
(index, term) remains of them, and a follower that needs them gets the snapshot instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubelab.store.raft.messages import Entry

__all__ = ["RaftLog"]


class RaftLog:
    def __init__(self) -> None:
        self.snapshot_index = 0   # the last compacted entry (0: nothing compacted)
        self.snapshot_term = 0
        self.entries: list[Entry] = []   # entries snapshot_index+1 .. last_index()
        self.committed = 0        # highest index known to be stored on a quorum
        self.applied = 0          # highest index applied to the state machine

    def first_index(self) -> int:
        return self.snapshot_index + 1

    def last_index(self) -> int:
        return self.snapshot_index + len(self.entries)

    def last_term(self) -> int:
        return self.entries[-1].term if self.entries else self.snapshot_term

    def term(self, index: int) -> int | None:
        """The term of the entry at index; None when it is compacted or not there yet."""
        if index == self.snapshot_index:
            return self.snapshot_term
        if index < self.snapshot_index or index > self.last_index():
            return None
        return self.entries[index - self.snapshot_index - 1].term

    def match_term(self, index: int, term: int) -> bool:
        return self.term(index) == term

    def entry(self, index: int) -> Entry:
        return self.entries[index - self.snapshot_index - 1]

    def slice(self, lo: int, hi: int) -> list[Entry]:
        """Entries lo .. hi-1 (lo must be past the snapshot)."""
        base = self.snapshot_index + 1
        return self.entries[lo - base:hi - base]

    def is_up_to_date(self, last_index: int, term: int) -> bool:
        """Is a log ending at (last_index, term) at least as up to date as ours? (section 5.4.1)"""
        return term > self.last_term() or (term == self.last_term() and last_index >= self.last_index())

    def find_conflict(self, entries: Sequence[Entry]) -> int:
        """The index of the first entry that is new or whose term differs from ours (0: none)."""
        for e in entries:
            if not self.match_term(e.index, e.term):
                return e.index
        return 0

    def find_conflict_by_term(self, index: int, term: int) -> tuple[int, int]:
        """The best guess of where this log stops agreeing with another log of which we only know
        that its entry at `index` has `term` (log.go findConflictByTerm): the largest index <=
        `index` whose term is <= `term`, with that term. An index whose term we do not know
        (compacted, or past our end) may match: it is returned with term 0."""
        while index > 0:
            ours = self.term(index)
            if ours is None:
                return index, 0
            if ours <= term:
                return index, ours
            index -= 1
        return 0, 0

    def maybe_append(self, index: int, log_term: int, committed: int,
                     entries: Sequence[Entry]) -> int | None:
        """AppendEntries' log matching rule: if our entry at index has log_term, keep what agrees,
        cut the log at the first conflict and append the rest; returns the last new index, or None
        when the entry before them does not match (the leader must go further back)."""
        if not self.match_term(index, log_term):
            return None
        last_new = index + len(entries)
        conflict = self.find_conflict(entries)
        if conflict:
            if conflict <= self.committed:
                raise AssertionError(f"entry {conflict} conflicts with committed entry "
                                     f"(committed {self.committed})")
            self.truncate_and_append(entries[conflict - index - 1:])
        self.commit_to(min(committed, last_new))
        return last_new

    def truncate_and_append(self, entries: Sequence[Entry]) -> None:
        if not entries:
            return
        after = entries[0].index
        del self.entries[after - self.snapshot_index - 1:]
        self.entries.extend(entries)

    def append(self, entry: Entry) -> None:
        self.entries.append(entry)

    def commit_to(self, index: int) -> None:
        """Raise the commit index (it never goes down), never past the last entry we have."""
        index = min(index, self.last_index())
        if index > self.committed:
            self.committed = index

    def compact(self, index: int) -> None:
        """Drop the entries up to index (they are in the state machine's snapshot)."""
        if index <= self.snapshot_index:
            return
        term = self.term(index)
        assert term is not None and index <= self.applied
        del self.entries[:index - self.snapshot_index]
        self.snapshot_index, self.snapshot_term = index, term

    def restore(self, index: int, term: int) -> None:
        """Start over from a snapshot at (index, term): the whole log is replaced by it."""
        self.entries = []
        self.snapshot_index, self.snapshot_term = index, term
        self.committed = self.applied = index
