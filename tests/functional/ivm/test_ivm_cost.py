"""``ivm_policy: auto`` rebuilds a model instead of applying its change when the model's own
recorded costs expect a rebuild to be clearly cheaper (``refresh/cost.py``). Each commit records
the last two incremental runs' and the last rebuild's seconds and rows in its log entry; the next run
reads them back. Here the recorded cost of the incremental run is raised on purpose — as a join
whose changed keys are spread over its inputs measures it — and the next change is rebuilt, with
the reason, exact (when the last two runs both cost that much: one slow run is not enough),
the model downstream still incremental — it counts its change by the rows
its upstream model published (the upstream's log counts them, a rebuild's difference too), and
rebuilds in turn once its own recorded cost says so; a model under ``ivm_policy:
incremental`` and one whose saving would stay under ``ivm_rebuild_min_saving`` apply their
changes; a cost older than ten sequences is measured again. A plain Iceberg table's change is
counted from its snapshots' summaries (``TestAutoCountsAnIcebergInputsSnapshots``). The methods
of a class run in order and share one project."""

import json
from dataclasses import replace

import pytest
from dbt.tests.util import run_dbt

from tests.functional.recovery.test_ivm_recovery import MODELS as RECOVERY_MODELS

from .harness import (
    IS_IVM,
    Model,
    adapter_response,
    collect,
    models_files,
    oracle_suite,
    project_files,
    run_and_compare,
    sql,
    state_schema,
)
from .test_ivm_snapshot_inputs import sources_yml as snapshot_sources_yml
from .test_ivm_snapshot_inputs import tables_suite

pytestmark = pytest.mark.skipif(not IS_IVM, reason="the cost rule is the spark_ivm adapter's")

_BY_NAME = {m.name: m for m in RECOVERY_MODELS}
DECIDES = ("incremental", "full")  # the modes auto chooses between here: what each run takes is checked
MODELS = [
    replace(_BY_NAME["tier_orders"], ivm_config={"ivm_rebuild_min_saving": 0}, modes=DECIDES),  # join + aggregate
    replace(_BY_NAME["tier_orders_doubled"], modes=DECIDES),  # downstream of it
    replace(_BY_NAME["parity_totals"], ivm_config={"ivm_policy": "incremental", "ivm_rebuild_min_saving": 0}),
    replace(_BY_NAME["parity_totals"], name="parity_default", modes=DECIDES),  # the default ivm_rebuild_min_saving
]
NAMES = [m.name for m in MODELS]
INPUTS = {"orders": 0, "customers": 0}
SLOW = 1000.0  # seconds: what the incremental run is made to have cost


def _last_commit(schema: str, name: str) -> tuple[int, dict]:
    seq, counts = collect(f"SELECT seq, row_counts FROM {state_schema(schema)}.{name}__log "
                          "WHERE status = 'committed' ORDER BY seq DESC LIMIT 1")[0]
    return int(seq), json.loads(counts)


def _record_incremental_cost(schema: str, name: str, seconds: float, seq_back: int = 0,
                             rebuild_seconds: float = 0, rows: int = 0, runs: int = 2) -> None:
    """Make the last commit say its last ``runs`` incremental runs (1 or 2) each took ``seconds``
    (the last ``seq_back`` sequences before the last commit, the one before it one earlier) and,
    with ``rebuild_seconds``, its last rebuild that long; with ``rows``, that they applied that
    many rows and no smaller one is known (a change of at least ``rows`` rows is then estimated
    at ``seconds`` exactly)."""
    seq, counts = _last_commit(schema, name)
    last = counts["costs"]["incremental"]
    last.update(seconds=seconds, seq=seq - seq_back, rows=rows or last["rows"])
    if rows:
        counts["costs"].pop("smaller", None)
    counts["costs"].pop("previous", None)
    if runs == 2:
        counts["costs"]["previous"] = dict(last, seq=last["seq"] - 1)
    if rebuild_seconds:
        counts["costs"]["full"]["seconds"] = rebuild_seconds
    _rewrite_last_commit(schema, name, seq, counts)


def _record_rebuild_cost(schema: str, name: str, seconds: float) -> None:
    """Make the last commit say its last rebuild took ``seconds``."""
    seq, counts = _last_commit(schema, name)
    counts["costs"]["full"]["seconds"] = seconds
    _rewrite_last_commit(schema, name, seq, counts)


def _rewrite_last_commit(schema: str, name: str, seq: int, counts: dict) -> None:
    sql(f"UPDATE {state_schema(schema)}.{name}__log SET row_counts = '{json.dumps(counts)}' "
        f"WHERE seq = {seq} AND status = 'committed'")


def _window_rows(schema: str, seq: int) -> int:
    return sum(int(collect(f"SELECT count(*) FROM {schema}.{t}_changes WHERE _ivm_seq = {seq}")[0][0])
               for t in INPUTS)


def _published_rows(schema: str, name: str, seq: int) -> int:
    """The rows (copies) a model published at ``seq``: what a reader's run counts as its change."""
    return int(collect(f"SELECT coalesce(sum(abs(_ivm_weight)), 0) FROM {state_schema(schema)}.{name}__changes "
                       f"WHERE _ivm_seq = {seq}")[0][0])


def _modes(project) -> dict[str, str]:
    return {n: adapter_response(project.project_root, n).get("mode") for n in NAMES}


class TestAutoRebuildsWhenCheaper:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {}  # the adapter's defaults (the functional conftest turns the rule off elsewhere)

    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        yield from oracle_suite(project.test_schema, INPUTS, MODELS, 5150)

    def test_a_build_records_its_cost(self, project, ctx):
        ctx["h"].apply(ctx["gen"].initial())
        run_and_compare(ctx["oracle"], NAMES, label="first build")
        seq, counts = _last_commit(project.test_schema, "tier_orders")
        full = counts["costs"]["full"]
        assert (full["seq"], full["rows"]) == (seq, sum(counts["inputs"].values())) and full["seconds"] > 0
        assert "incremental" not in counts["costs"]

    def test_an_incremental_run_records_its_cost(self, project, ctx):
        input_seq = ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="batch 1")
        assert set(_modes(project).values()) == {"incremental"}
        seq, counts = _last_commit(project.test_schema, "tier_orders")
        inc = counts["costs"]["incremental"]
        assert (inc["seq"], inc["rows"]) == (seq, _window_rows(project.test_schema, input_seq)) and inc["seconds"] > 0
        assert counts["costs"]["full"]["seq"] == 1  # the build's, carried
        assert "previous" not in counts["costs"]  # the first incremental run
        # the model downstream counts its change by the rows tier_orders published since the
        # commit it consumed: tier_orders' log counts them, all runs together
        assert counts["published"] == _published_rows(project.test_schema, "tier_orders", seq) > 0
        down_seq, down = _last_commit(project.test_schema, "tier_orders_doubled")
        assert down["inputs"][f"{project.test_schema}.tier_orders"] == counts["published"]
        assert down["costs"]["incremental"]["rows"] == counts["published"]

    def test_one_slow_run_does_not_rebuild(self, project, ctx):
        """A rebuild needs both last incremental runs to expect it: after one run slowed by
        something else (a busy machine, a rival run) the change is applied, and measured again."""
        schema = project.test_schema
        _record_incremental_cost(schema, "tier_orders", SLOW, runs=1)
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="one slow run measured")
        assert _modes(project)["tier_orders"] == "incremental"
        seq, counts = _last_commit(schema, "tier_orders")
        assert counts["costs"]["incremental"]["seq"] == seq and counts["costs"]["incremental"]["seconds"] < SLOW
        assert counts["costs"]["previous"]["seconds"] == SLOW

    def test_auto_rebuilds_when_the_recorded_costs_say_it_is_cheaper(self, project, ctx):
        schema = project.test_schema
        for name in ("tier_orders", "parity_totals"):  # over change tables
            _record_incremental_cost(schema, name, SLOW)
        # 2.9 s against about 1 s (scaled by the inputs' growth): slower by more than 20 % but by
        # less than the default 2 s — applies the change
        _record_incremental_cost(schema, "parity_default", 2.9, rebuild_seconds=1.0, rows=1)
        published = _last_commit(schema, "tier_orders")[1]["published"]
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="batch 2: rebuilt where cheaper")
        assert _modes(project) == {"tier_orders": "full", "tier_orders_doubled": "incremental",
                                   "parity_totals": "incremental", "parity_default": "incremental"}
        reason = adapter_response(project.project_root, "tier_orders").get("reason") or ""
        assert reason.startswith("a rebuild is expected to be cheaper"), reason
        seq, counts = _last_commit(schema, "tier_orders")
        assert counts["costs"]["full"]["seq"] == seq
        assert counts["costs"]["incremental"]["seconds"] == SLOW  # carried: the next run decides alike
        # the rebuild published its difference to the last commit (its reader stays incremental)
        # and counted it: the reader's change
        diff = _published_rows(schema, "tier_orders", seq)
        assert counts["published"] == published + diff and diff > 0
        assert _last_commit(schema, "tier_orders_doubled")[1]["costs"]["incremental"]["rows"] == diff

    def test_a_reader_rebuilds_when_its_upstream_change_costs_more(self, project, ctx):
        """The model downstream weighs the rows its upstream model published like any change."""
        schema = project.test_schema
        _record_incremental_cost(schema, "tier_orders_doubled", SLOW)
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="batch 3: the reader rebuilt")
        modes = _modes(project)
        assert (modes["tier_orders"], modes["tier_orders_doubled"]) == ("full", "full"), modes
        reason = adapter_response(project.project_root, "tier_orders_doubled").get("reason") or ""
        assert reason.startswith("a rebuild is expected to be cheaper"), reason

    def test_the_decision_holds_until_the_cost_is_measured_again(self, project, ctx):
        h, gen = ctx["h"], ctx["gen"]
        h.apply(gen.batch(["orders"]))
        run_and_compare(ctx["oracle"], NAMES, label="batch 4: rebuilt again")
        assert _modes(project)["tier_orders"] == "full"
        # an incremental cost measured more than ten sequences ago is measured again
        _record_incremental_cost(project.test_schema, "tier_orders", SLOW, seq_back=11)
        h.apply(gen.batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="batch 5: measured again")
        assert _modes(project)["tier_orders"] == "incremental"
        seq, counts = _last_commit(project.test_schema, "tier_orders")
        assert counts["costs"]["incremental"]["seq"] == seq and counts["costs"]["incremental"]["seconds"] < SLOW

    def test_a_full_refresh_keeps_the_incremental_cost_of_the_same_sql(self, project, ctx):
        run_dbt(["run", "--full-refresh", "--select", "tier_orders"])
        _, counts = _last_commit(project.test_schema, "tier_orders")
        assert "incremental" in counts["costs"]  # same SQL: still this model's cost
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="batch 6")


# -- an input read through its Iceberg snapshots --------------------------------------------------

SNAPSHOT_MODELS = [
    Model("orders_by_status", "select status, count(*) as n, sum(amount) as total from {orders} group by status",
          ivm_config={"ivm_rebuild_min_saving": 0}, modes=DECIDES),
    Model("products_by_category",  # a merge-on-read table: a delete is read by difference
          "select category, count(*) as n from {products} group by category",
          ivm_config={"ivm_rebuild_min_saving": 0}, modes=DECIDES),
]
SNAPSHOT_NAMES = [m.name for m in SNAPSHOT_MODELS]


@pytest.mark.skipif(not IS_IVM, reason="the cost rule is the spark_ivm adapter's")
class TestAutoCountsAnIcebergInputsSnapshots:
    """An input that is a plain Iceberg table (no change table) has its change counted from the
    summaries of the snapshots written since the one consumed: the records of the data files
    they added and removed, each summed per row and so counted ``SUMMED_ROW_COST`` (2) times (a
    copy-on-write DELETE of one row of a 20-row file: 2 x (20 + 19)); with delete files in the
    window (merge-on-read), from the files its change reads; a rebuild's estimate scales with
    its rows. So a large change to it is rebuilt when its recorded costs say so, and one that
    rewrites more rows than the table holds is rebuilt before any incremental run is measured."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {}  # the adapter's defaults

    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = models_files(SNAPSHOT_MODELS, with_tests=False)
        files["sources.yml"] = snapshot_sources_yml(unique_schema)
        return files

    @pytest.fixture(scope="class")
    def ctx(self, project):
        yield from tables_suite(project.test_schema, 11, SNAPSHOT_MODELS)

    def test_a_build_records_the_tables_rows(self, project, ctx):
        t = ctx["t"]
        t.insert("orders", 20, duplicates=0)
        t.insert("orders", 60, duplicates=0)
        t.insert("products", 6, duplicates=0)
        run_and_compare(ctx["oracle"], SNAPSHOT_NAMES, label="first build")
        _, counts = _last_commit(project.test_schema, "orders_by_status")
        assert list(counts["inputs"].values()) == [80]
        assert counts["costs"]["full"]["rows"] == 80

    def test_the_change_is_counted_from_the_snapshots_summaries(self, project, ctx):
        t = ctx["t"]

        def applied() -> None:  # whatever the machine's load makes the runs cost
            for name in SNAPSHOT_NAMES:
                _record_rebuild_cost(project.test_schema, name, SLOW)

        applied()
        t.insert("orders", 15, duplicates=1)  # a snapshot adding a file of 16 rows
        t.insert("products", 2, duplicates=0)
        run_and_compare(ctx["oracle"], SNAPSHOT_NAMES, label="an insert")
        _, counts = _last_commit(project.test_schema, "orders_by_status")
        assert counts["costs"]["incremental"]["rows"] == 2 * 16 and list(counts["inputs"].values()) == [96]
        # copy-on-write: the DELETE rewrites the first insert's file of 20 rows without the rows
        # of one o_id (found in that file only) — 39 rows read and summed, 78 counted, fewer than
        # 1.2x the table's 95: applied (test_a_rewrite_of_more_rows_than_the_inputs_hold_is_rebuilt_unmeasured)
        orders = t.fq("orders")
        first, files, deleted = collect(
            f"SELECT min(o_id), count(DISTINCT _file), count(*) FROM {orders} WHERE o_id = "
            f"(SELECT min(o_id) FROM {orders} WHERE o_id IN (SELECT o_id FROM {orders} GROUP BY o_id "
            "HAVING count(DISTINCT _file) = 1) AND _file = (SELECT file_path FROM "
            f"{orders}.files WHERE record_count = 20))")[0]
        assert files == 1
        sql(f"DELETE FROM {orders} WHERE o_id = {first}")
        applied()
        run_and_compare(ctx["oracle"], SNAPSHOT_NAMES, label="a delete")
        _, counts = _last_commit(project.test_schema, "orders_by_status")
        assert counts["costs"]["incremental"]["rows"] == 2 * (20 + (20 - deleted)), (deleted, counts["costs"])
        # a compaction (a `replace` snapshot) is no change; the insert after it is counted alone
        sql(f"CALL spark_catalog.system.rewrite_data_files(table => '{project.test_schema}.orders', "
            "options => map('min-input-files', '1'))")
        t.insert("orders", 2, duplicates=0)
        applied()
        run_and_compare(ctx["oracle"], SNAPSHOT_NAMES, label="a compaction and an insert")
        _, counts = _last_commit(project.test_schema, "orders_by_status")
        assert counts["costs"]["incremental"]["rows"] == 2 * 2, counts["costs"]

    def test_a_change_recorded_costs_say_is_cheaper_to_rebuild_is_rebuilt(self, project, ctx):
        t, schema = ctx["t"], project.test_schema
        for name in SNAPSHOT_NAMES:
            _record_incremental_cost(schema, name, SLOW, rebuild_seconds=1.0)
        t.insert("orders", 4, duplicates=0)
        sql(f"DELETE FROM {t.fq('products')} WHERE p_id = (SELECT min(p_id) FROM {t.fq('products')})")
        assert collect(f"SELECT count(*) FROM {t.fq('products')}.delete_files")[0][0] > 0
        run_and_compare(ctx["oracle"], SNAPSHOT_NAMES, label="rebuilt where cheaper")
        for name in SNAPSHOT_NAMES:  # products' merge-on-read change counted from the files it reads
            response = adapter_response(project.project_root, name)
            assert response.get("mode") == "full", response
            assert (response.get("reason") or "").startswith("a rebuild is expected to be cheaper"), response

    def test_a_rewrite_of_more_rows_than_the_inputs_hold_is_rebuilt_unmeasured(self, project, ctx):
        """A change row costs at least what the last rebuild paid per row it read: a
        copy-on-write DELETE of one row of the table's largest file counts that file twice,
        more than 1.2x the rows the table holds, and is rebuilt though no incremental run was
        ever measured (the rows decide, whatever the runs cost)."""
        t, schema = ctx["t"], project.test_schema
        seq, counts = _last_commit(schema, "orders_by_status")
        for run in ("incremental", "smaller", "previous"):
            counts["costs"].pop(run, None)
        _rewrite_last_commit(schema, "orders_by_status", seq, counts)
        orders = t.fq("orders")
        rows, largest = collect(f"SELECT sum(record_count), max(record_count) FROM {orders}.files")[0]
        assert 2 * (2 * largest - 1) > 1.2 * rows, (rows, largest)
        sql(f"DELETE FROM {orders} WHERE o_id = (SELECT min(o_id) FROM {orders} WHERE _file = "
            f"(SELECT file_path FROM {orders}.files ORDER BY record_count DESC LIMIT 1))")
        run_and_compare(ctx["oracle"], SNAPSHOT_NAMES, label="a rewrite of most rows, unmeasured")
        response = adapter_response(project.project_root, "orders_by_status")
        assert response.get("mode") == "full", response
        assert "a change row costs at least what a rebuild pays per row it reads" in (response.get("reason") or ""), \
            response
