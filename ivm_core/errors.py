"""Errors raised by the analyzer and compiler."""


class IvmError(Exception):
    """Base class of every error ivm_core raises.

    ``over_inputs``: raised once every table the SQL reads resolved to an input and no
    non-deterministic function was seen — the SQL's result is then a function of its inputs'
    contents, so a recompute over unchanged inputs gives the same rows.
    """

    over_inputs = False


class UnsupportedSql(IvmError):
    """The model's SQL uses a construct that cannot (yet) be maintained incrementally.

    ``construct`` names the construct as the user wrote it, ``reason`` says why.
    """

    def __init__(self, construct: str, reason: str):
        self.construct = construct
        self.reason = reason
        super().__init__(f"{construct}: {reason}")


class AnalysisError(IvmError):
    """The SQL cannot be analyzed at all (syntax, unknown table or column)."""


# Raised (Spark ``raise_error``) by a MERGE that would leave a negative multiplicity: the change
# deletes rows that are not there. The refresh driver recognizes it by this text.
ABSENT_ROWS = "the change deletes rows that are not there"

# Raised by the MERGE that applies a change to a result that holds every row at most once, when
# the change would insert a copy of a row the target already holds: the target and the state
# the change was computed from disagree.
ROW_TWICE = "the change would leave a row twice in the result, which holds every row once"

# Raised by a statement that computes the group state of an aggregate whose target holds it
# (``rules/aggregate/held.py``) when a group's target row would not determine its state: a SUM
# with a NULL value in the group, or a sum Spark's type cannot hold. The driver recognizes it by
# this text, undoes the run and rebuilds the model with the group state in a table of its own.
IRREGULAR_GROUP = ("the target row of a group would not determine its state "
                   "(a SUM with a NULL value, or one that overflowed)")
