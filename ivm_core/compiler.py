"""The compiled form of an incremental_ivm model: its plan, the state each input needs and the
SQL of its change.

``compile_model`` analyzes the SQL, prunes unused columns and decides, per input, whether any
update path reads the input's integrated value (then the input needs a join index: a state
table holding the input's rows — only the columns the model uses — with their net weights).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ivm_core.analyzer import Analysis, InputSchema, analyze
from ivm_core.plan import Empty, Node, Version, at_version, scans
from ivm_core.prune import prune
from ivm_core.rules import differentiate
from ivm_core.sqlgen import WEIGHT, LeafRenderer, quote, to_sql


@dataclass(frozen=True)
class InputUse:
    """How the model uses one input."""

    key: str
    columns: tuple[str, ...]  # the input's columns the model reads, in the input's order
    all_columns: tuple[tuple[str, str], ...]  # (name, type) of every input column
    stateful: bool  # some update path reads the input's integrated value

    @property
    def types(self) -> dict[str, str]:
        return dict(self.all_columns)


@dataclass
class Program:
    sql: str
    plan: Node  # the model over CURRENT inputs, pruned, ending in a Project of the outputs
    output_names: tuple[str, ...]
    inputs: dict[str, InputUse]

    def delta_plan(self, changed: set[str] | frozenset[str]) -> Node:
        return differentiate(self.plan, frozenset(changed) & frozenset(self.inputs))

    def delta_sql(self, changed, leaf: LeafRenderer, output_columns: list[str] | None = None) -> str | None:
        """SELECT of the model's output change (not consolidated), or None when it is zero.

        ``output_columns`` names the result columns (the target's names, by position).
        """
        plan = self.delta_plan(changed)
        if isinstance(plan, Empty):
            return None
        return _select_outputs(plan, leaf, output_columns or list(self.output_names))

    def full_sql(self, leaf: LeafRenderer, output_columns: list[str] | None = None) -> str:
        """SELECT of the model's whole result as a Z-set, reading every input at NEW."""
        plan = at_version(self.plan, Version.NEW)
        return _select_outputs(plan, leaf, output_columns or list(self.output_names))

    def fingerprint(self) -> str:
        """Changes when the SQL or the schema of any input changes."""
        payload = json.dumps(
            {"sql": self.sql, "inputs": {k: list(v.all_columns) for k, v in sorted(self.inputs.items())}},
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _select_outputs(plan: Node, leaf: LeafRenderer, names: list[str]) -> str:
    inner = to_sql(plan, leaf)
    cols = [f"{internal} AS {quote(name)}" for internal, name in zip(plan.columns, names)]
    body = "\n".join("  " + line for line in inner.splitlines())
    return f"SELECT {', '.join(cols + [WEIGHT])}\nFROM (\n{body}\n) AS _ivm_out"


def compile_model(sql: str, inputs: list[InputSchema]) -> Program:
    analysis: Analysis = analyze(sql, inputs)
    plan = prune(analysis.plan)
    used: dict[str, set[str]] = {}
    for scan in scans(plan):
        used.setdefault(scan.input, set()).update(scan.input_columns)
    stateful = {
        s.input
        for s in scans(differentiate(plan, frozenset(used)))
        if s.version in (Version.OLD, Version.NEW)
    }
    uses = {}
    for key, cols in used.items():
        schema = analysis.inputs[key]
        uses[key] = InputUse(
            key=key,
            columns=tuple(c for c in schema.column_names if c in cols),
            all_columns=schema.columns,
            stateful=key in stateful,
        )
    return Program(sql=sql, plan=plan, output_names=analysis.output_names, inputs=uses)
