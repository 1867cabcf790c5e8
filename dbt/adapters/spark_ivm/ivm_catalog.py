"""What ``dbt docs generate`` shows of each incremental_ivm model's companion tables.

dbt's catalog lists only the relations of manifest nodes, so the companion tables (in the
model's schema + ``_ivm``) appear as stats of the model's own catalog entry, which the docs site
shows beside its size and row count:

* ``ivm_state`` — the join indexes and aggregate state it keeps: total size, and each table
  with its size and rows;
* ``ivm_changes`` — the change it publishes per sequence for downstream models (``__changes``);
* ``ivm_last_run`` — its last committed run: sequence, mode, time, rows inserted and deleted.

All of it from Iceberg metadata and the model's log, in one statement per schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence

from dbt.adapters.spark_ivm.ivm_inputs import state_schema_for
from ivm_core import bookkeeping as bk
from ivm_core import statements as st

if TYPE_CHECKING:
    import agate

STATS = ("ivm_state", "ivm_changes", "ivm_last_run")
SUBKEYS = ("label", "value", "description", "include")
LOG, LOCK, CHANGES = "log", "lock", "changes"


def with_ivm_stats(adapter: Any, table: "agate.Table", schema: str) -> "agate.Table":
    """``table`` (one schema's catalog rows) with the ``ivm_*`` stats of every incremental_ivm
    model among its relations; unchanged when the schema has no companion schema."""
    companion = state_schema_for(schema)
    if not adapter.check_schema_exists(None, companion):
        return table
    owned = companion_tables(adapter, companion, {str(row["table_name"]) for row in table})
    if not owned:
        return table
    sizes, runs = measure(adapter, companion, owned)
    stats = {m: _stats(m, companion, ts, sizes, runs.get(m)) for m, ts in owned.items()}
    rows = []
    for row in table:
        values = dict(zip(table.column_names, row))
        for stat in STATS:
            for sub in SUBKEYS:
                values[f"stats:{stat}:{sub}"] = stats.get(str(values["table_name"]), {}).get(f"{stat}:{sub}")
        rows.append(values)
    import agate
    from dbt.adapters.spark.impl import DEFAULT_TYPE_TESTER

    return agate.Table.from_object(rows, column_types=DEFAULT_TYPE_TESTER)


def companion_tables(adapter: Any, companion: str, models: Iterable[str]) -> dict[str, list[str]]:
    """Per model among ``models`` that has a log in the companion schema: its tables there."""
    tables = sorted(r.identifier for r in adapter.list_relations(None, companion))
    owned = {m: [t for t in tables if t.startswith(f"{m}__")] for m in models}
    return {m: ts for m, ts in owned.items() if f"{m}__{LOG}" in ts}


def measure(adapter: Any, companion: str, owned: Mapping[str, Sequence[str]]):
    """Per companion table: the bytes of its current snapshot's data files and the rows it holds
    (``bk.live_rows``: its data files' records less its deletes); per model: its last committed
    log entry. One statement."""
    parts = []
    for model, names in sorted(owned.items()):
        for name in names:
            if name.endswith(f"__{LOCK}") or name.endswith(f"__{LOG}"):
                continue
            table = st.quote_relation(companion, name)
            parts.append(
                f"SELECT 'size' AS kind, {st.string_literal(name)} AS k, "
                "CAST(coalesce(sum(file_size_in_bytes), 0) AS STRING) AS a, "
                f"CAST(coalesce(({bk.live_rows(table)}), 0) AS STRING) AS b, "
                "CAST(NULL AS STRING) AS c, CAST(NULL AS STRING) AS d, CAST(NULL AS STRING) AS e "
                f"FROM {table}.data_files"
            )
        log = st.quote_relation(companion, f"{model}__{LOG}")
        parts.append(
            f"SELECT * FROM (SELECT 'run' AS kind, {st.string_literal(model)} AS k, CAST(seq AS STRING) AS a, "
            "mode AS b, CAST(logged_at AS STRING) AS c, "
            "concat('+', CAST(rows_inserted AS STRING), ' / -', CAST(rows_deleted AS STRING)) AS d, reason AS e "
            f"FROM {log} WHERE status = 'committed' ORDER BY seq DESC LIMIT 1)"
        )
    _, result = adapter.execute(bk.union_all(parts), fetch=True)
    sizes = {str(r[1]): (int(r[2]), int(r[3])) for r in result if r[0] == "size"}
    runs = {str(r[1]): tuple(r[2:]) for r in result if r[0] == "run"}
    return sizes, runs


def _stats(model: str, companion: str, names: Iterable[str], sizes: Mapping[str, tuple[int, int]],
           run: Optional[tuple]) -> dict[str, Any]:
    state = [n for n in names if n in sizes and not n.endswith(f"__{CHANGES}")]
    state_bytes = sum(sizes[n][0] for n in state)
    listed = "; ".join(f"{n} ({_mb(sizes[n][0])}, {sizes[n][1]:,} rows)" for n in state)
    changes = f"{model}__{CHANGES}"
    change_bytes, change_rows = sizes.get(changes, (0, 0))
    out: dict[str, Any] = {
        "ivm_state:label": "IVM state",
        "ivm_state:value": _mb(state_bytes),
        "ivm_state:description": (f"Join indexes and aggregate state kept in {companion}: {listed}" if state
                                  else "No state: every change is applied from the inputs' changes alone"),
        "ivm_state:include": True,
        "ivm_changes:label": "IVM published changes",
        "ivm_changes:value": f"{change_rows:,} rows",
        "ivm_changes:description": (f"{companion}.{changes} ({_mb(change_bytes)}): the model's change per "
                                    "sequence, read by downstream incremental_ivm models"),
        "ivm_changes:include": True,
    }
    if run is not None:
        seq, mode, logged_at, rows, reason = run
        out.update({
            "ivm_last_run:label": "IVM last run",
            "ivm_last_run:value": f"seq {seq}, {mode}",
            "ivm_last_run:description": (f"committed at {logged_at}, rows {rows}"
                                         + (f"; rebuilt because {reason}" if reason else "")),
            "ivm_last_run:include": True,
        })
    return out


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"
