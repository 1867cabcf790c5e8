"""Plain records a run's steps pass one another (no I/O here): where an input's integrated value
is read (``Position``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ivm_core import bookkeeping as bk
from ivm_core import statements as st


@dataclass(frozen=True)
class Position:
    """A relation at a snapshot that holds an input's changes up to ``seq``: an upstream model's
    target at the snapshot its commit at ``seq`` recorded, a change-table source's base at its greatest
    ``ivm_seq_<s>`` tag (``bk.base_tag``), or an Iceberg input at its captured snapshot (``seq``
    is that snapshot's id). The input at a higher mark is this plus the changes above ``seq``."""

    relation: str
    snapshot: Optional[int]
    seq: int

    def rows(self, columns: Sequence[str]) -> str:
        """The relation's rows at the snapshot, each a piece of weight 1."""
        return st.weighted_rows(bk.pinned(self.relation, self.snapshot), columns)
