"""Golden fixtures per delta rule: small models and the exact Spark SQL each rule produces.

``golden/rules/<rule>.sql`` holds the cases of ``ivm_core/rules/<rule>.py`` and
``golden/rules/aggregate/<function>.sql`` those of each aggregate function
(``ivm_core/rules/aggregate/functions/<function>.py``). A case is its input lines, then the SQL::

    -- case: what the case shows
    -- model: SELECT … (one line, over db.r(a, b), db.s(b, c), db.t(c, d): INT columns,
    --        and db.m(k INT, x DOUBLE, p DECIMAL(12,2)))
    -- changed: the inputs that changed (comma-separated)
    -- inserting: optional, the changed inputs whose change only inserts rows (validation finds them)
    -- types: optional, Spark's types of every SUM/AVG argument: int (default), double or decimal
    -- show: optional, what to render besides the change: build, merge, rewrite (state statements),
    --       result (the model's rows read from its updated state: a top-k's top rows),
    --       rewritten (a small target that holds its group state: its new result)
    <the rendered SQL>

Leaves render as ``<input@version>``, aggregate states as ``<state id.name>`` and the model's
target as ``<target>``. A diff here
is a change of what runs on Spark: review it, then regenerate the SQL of every case (the input
lines are kept) with ``UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py``. To add a case,
write its input lines in the file and regenerate.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from ivm_core.analyzer import InputSchema
from ivm_core.compiler import Program, compile_model
from ivm_core.plan import Scan
from ivm_core.rules import RULES
from ivm_core.rules.aggregate import AGGREGATORS

FIXTURES = Path(__file__).parent / "golden" / "rules"
SCHEMAS = [
    InputSchema("db.r", (("a", "INT"), ("b", "INT"))),
    InputSchema("db.s", (("b", "INT"), ("c", "INT"))),
    InputSchema("db.t", (("c", "INT"), ("d", "INT"))),
    InputSchema("db.m", (("k", "INT"), ("x", "DOUBLE"), ("p", "DECIMAL(12,2)"))),
]
TYPES = {  # Spark's types of a SUM/AVG argument, of its SUM, of its AVG and of the argument times a BIGINT
    "int": ("int", "bigint", "double", "bigint"),
    "double": ("double", "double", "double", "double"),
    "decimal": ("decimal(12,2)", "decimal(22,2)", "decimal(16,6)", "decimal(33,2)"),
}
INPUT_KEYS = ("case", "model", "changed", "inserting", "types", "show")


@dataclass
class Case:
    inputs: list[str]  # the input lines, as written
    fields: dict[str, str]
    expected: str


def parse(text: str) -> tuple[str, list[Case]]:
    """The file's header (everything before the first case) and its cases."""
    header, *chunks = text.split("\n-- case:")
    cases = []
    for chunk in chunks:
        lines = ("-- case:" + chunk).splitlines()
        inputs, fields = [], {}
        while lines and any(lines[0].startswith(f"-- {key}:") for key in INPUT_KEYS):
            key, _, value = lines.pop(0)[3:].partition(":")
            fields[key] = value.strip()
            inputs.append(f"-- {key}: {value.strip()}")
        cases.append(Case(inputs, fields, "\n".join(lines).strip("\n")))
    return header, cases


def leaf(scan: Scan) -> str:
    return f"<{scan.input}@{scan.version.value}>"


def state(agg_id: str, name: str) -> str:
    return f"<state {agg_id}.{name}>"


def compiled(fields: dict[str, str]) -> Program:
    program = compile_model(fields["model"], SCHEMAS)
    arg, total, avg, weighted = TYPES[fields.get("types", "int")]
    program.bind_types({
        f"{a.id}__{c.name}__{kind}": typ
        for a in program.aggregates for c in a.aggs
        for kind, typ in (("arg", arg), ("sum", total), ("avg", avg), ("weighted", weighted))
    })
    return program


def render(fields: dict[str, str]) -> str:
    program = compiled(fields)
    changed = {k.strip() for k in fields["changed"].split(",") if k.strip()}
    inserting = frozenset(k.strip() for k in fields.get("inserting", "").split(",") if k.strip())
    env = program.env(leaf, state, result=program.held_result("<target>", list(program.output_names)),
                      inserting_only=inserting)
    delta = program.delta_sql(changed, env)
    parts = [delta + ";" if delta else "-- (no change reaches the output)"]
    show = {s.strip() for s in fields.get("show", "").split(",") if s.strip()}
    if "build" in show:
        for statement in program.state_builds(leaf, state):
            parts += [f"-- build of state {statement.aggregate}.{statement.state}", statement.sql + ";"]
    if "merge" in show:
        for statement in program.state_updates(changed, env):
            parts += [f"-- update of state {statement.aggregate}.{statement.state}", statement.sql + ";"]
    if "rewrite" in show:
        for statement in program.state_updates(changed, env, rewrite=lambda agg_id, name: True):
            parts += [f"-- rewrite of small state {statement.aggregate}.{statement.state}", statement.sql + ";"]
    if "rewritten" in show:
        parts += ["-- the new result a small target that holds the group state is rewritten with",
                  program.rewritten_result_sql(changed, env, list(program.output_names)) + ";"]
    if "result" in show:
        parts += ["-- the result read from the updated state", program.result_sql(env, list(program.output_names)) + ";"]
    return "\n".join(parts)


def regenerated(text: str) -> str:
    header, cases = parse(text)
    body = "\n\n".join("\n".join(c.inputs) + "\n" + render(c.fields) for c in cases)
    return header.rstrip("\n") + "\n\n" + body + "\n"


FILES = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.sql"))


@pytest.mark.parametrize("fixture", FILES)
def test_rule_sql_matches_fixture(fixture):
    path = FIXTURES / fixture
    text = path.read_text()
    expected = regenerated(text)
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(expected)
        text = expected
    assert parse(text)[1], f"{fixture} has no case"
    assert text == expected, f"{fixture}: the SQL changed; review, then regenerate with UPDATE_GOLDEN=1"


def test_every_rule_and_function_has_a_fixture():
    rules = {"scan", "filter", "project", "union_all", "join", "aggregate", "window", "window_result"}
    assert len(RULES) == len(rules) + 1  # and Empty, which has no SQL
    expected = {f"{r}.sql" for r in rules} | {f"aggregate/{name}.sql" for name in AGGREGATORS} | {"top_k.sql"}
    assert expected <= set(FILES), sorted(expected - set(FILES))


def test_parse_keeps_inputs_and_splits_cases():
    header, cases = parse(
        "-- header\n\n-- case: one\n-- model: SELECT r.a FROM db.r AS r\n-- changed: db.r\nSELECT 1;\n\n"
        "-- case: two\n-- model: SELECT r.b FROM db.r AS r\n-- changed: db.s\n-- (no change reaches the output)\n"
    )
    assert header == "-- header\n"
    assert [c.fields["case"] for c in cases] == ["one", "two"]
    assert cases[0].expected == "SELECT 1;" and cases[1].fields["changed"] == "db.s"
    assert cases[1].expected == "-- (no change reaches the output)"
