"""Aggregates, DISTINCT and set operations under random change batches, compared with the oracle after every run.

(Beyond the first version's joins/filters/projections: the materialization maintains these from per-group
state; deletes that remove a group's MIN/MAX or its last row are in the nasty batch.)

Slow (~4 min on 2 cores: aggregate refreshes issue many statements); IVM_FAST_TESTS=1 skips it.
"""

import os
import re

import pytest
from dbt.tests.util import run_dbt_and_capture
from dbt.adapters.spark_ivm.refresh import metadata

from .harness import (
    IS_IVM,
    KEYED_WRITES,
    TWO_PASS_WRITES,
    Model,
    batch_outcomes,
    collect,
    project_files,
    state_schema,
)

pytestmark = [
    pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization"),
    pytest.mark.skipif(os.environ.get("IVM_FAST_TESTS") == "1", reason="slow; IVM_FAST_TESTS=1 skips it"),
]

MODELS = [
    Model(
        "agg_join_group",
        """
select c.tier, count(*) as n, count(o.amount) as n_amount, sum(o.amount) as total,
       min(o.amount) as lo, max(o.odate) as last_date, avg(o.amount) as mean
from {orders} o
join {customers} c on o.c_id = c.c_id
group by c.tier
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(  # Spark's variances may differ from the moments in the last bits: compared at 6 decimals
        "agg_statistics",
        """
select o.c_id, count_if(o.status = 'open') as open_orders, bool_and(o.amount > 10) as all_big,
       bool_or(o.note is null) as some_unnoted, avg(distinct o.amount) as avg_distinct,
       round(var_pop(o.amount), 6) as vp, round(variance(o.amount), 6) as vs,
       round(stddev_pop(o.amount), 6) as sp, round(stddev(o.amount), 6) as sd,
       round(std(o.amount), 6) as sd2, every(o.amount > 5) as all_mid, some(o.status = 'open') as any_open
from {orders} o
group by o.c_id
""",
    ),
    Model(  # the orderings tie only rows whose x is the same: Spark's recompute has one answer
        "agg_by_ordering",
        """
select o.c_id,
       max_by(o.status, named_struct('d', o.odate, 'i', o.o_id, 'a', o.amount, 's', o.status, 'n', o.note,
                                     'p', o.p_id)) as latest_status,
       min_by(o.amount, named_struct('a', o.amount, 'i', o.o_id)) as smallest_amount,
       max_by(o.o_id, o.o_id) as top_id, count(*) as n
from {orders} o
group by o.c_id
""",
        ivm_config=KEYED_WRITES,  # its value state of (y, x) pairs taken in place: a MERGE on a struct
    ),
    Model(  # grouped by the join key: a change of orders or of customers touches only its customers'
        # groups, whose state rows the MERGE reads within the changes' key ranges (Program.bounded_keys)
        "agg_per_customer_join",
        """
select o.c_id, c.tier, count(*) as n, sum(o.amount) as total, min(o.odate) as first_date
from {orders} o
join {customers} c on o.c_id = c.c_id
group by o.c_id, c.tier
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(  # the same, small: its state and target rewritten, the target from the state, and the rows it
        # gained and lost counted by a diff of the target before and after read within the changes'
        # key ranges of c_id, which it is sorted by (Program.result_bound)
        "agg_per_customer_from_state",
        """
select o.c_id, c.tier, count(*) as n, sum(o.amount) as total, min(o.odate) as first_date
from {orders} o
join {customers} c on o.c_id = c.c_id
group by o.c_id, c.tier
""",
    ),
    Model(  # grouped by columns no key ranges bound: its group state, its value states (COUNT(DISTINCT),
        # MAX) and its target are updated in two passes, as large ones the change touches all over are
        "agg_join_two_pass",
        """
select c.tier, o.status, count(*) as n, sum(o.amount) as total, count(distinct o.p_id) as products,
       max(o.odate) as last_date
from {orders} o
join {customers} c on o.c_id = c.c_id
group by c.tier, o.status
""",
        ivm_config=TWO_PASS_WRITES,
    ),
    Model(  # a leaf whose COUNT(DISTINCT)'s value state outgrows ivm_rewrite_max_rows while its groups and
        # target do not: still rewritten from its state (the result does not read that value state), which
        # takes the change as appended pieces
        "agg_distinct_values_large",
        """
select c.tier, count(*) as n, sum(o.amount) as total, count(distinct o.p_id) as products
from {orders} o
join {customers} c on o.c_id = c.c_id
group by c.tier
""",
        ivm_config={"ivm_rewrite_max_rows": 5},
    ),
    Model(
        "agg_global",
        """
select count(*) as n, sum(amount) as total, count(distinct c_id) as customers, max(status) as max_status
from {orders}
where amount is not null
""",
    ),
    Model(
        "agg_having",
        """
select c_id, p_id, count(*) as n, sum(amount) as total
from {orders}
group by all
having count(*) > 1
""",
        ivm_config=KEYED_WRITES,
    ),
    # SUM and AVG over a DOUBLE keep the group's values (a value state, in the table of states): which
    # tables hold the states follows from Spark's types, which a run binds from its last commit (rounded:
    # Spark's own sum adds in its own order, the rule in sorted order)
    Model(
        "agg_double_sums",
        """
select o.c_id, count(*) as n, round(sum(cast(o.amount as double)), 6) as total,
       round(avg(cast(o.amount as double)), 6) as mean
from {orders} o
group by o.c_id
""",
        ivm_config=KEYED_WRITES,
    ),
    # the model's result is the aggregate (count(*), COUNT, SUM of a decimal): the target holds its group state
    # (rules/aggregate/held.py) while no group's SUM has a NULL value — updated in place, rewritten (small), in
    # two passes; the first has NULL amounts from the build: its group state is a table of its own
    Model(
        "agg_held_by_target",
        """
select o.status, o.c_id, sum(o.amount) as total, count(*) as n, count(o.note) as noted
from {orders} o
group by o.c_id, o.status
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(
        "agg_held_small",
        """
select c.tier, count(*) as n, sum(coalesce(o.amount, 0) * 2) as doubled
from {orders} o
join {customers} c on o.c_id = c.c_id
group by c.tier
""",
    ),
    Model(
        "agg_held_counts",
        """
select o.p_id, count(*) as n, count(o.amount) as priced
from {orders} o
group by o.p_id
""",
        ivm_config=TWO_PASS_WRITES,
    ),
    Model(
        "distinct_keys",
        """
select distinct c_id, status from {orders}
""",
    ),
    Model(
        "q1_style",
        """
select status, note, count(*) as count_order, sum(amount) as sum_amount,
       sum(amount * (1 - 0.05)) as sum_disc, avg(amount) as avg_amount, count(distinct p_id) as products
from {orders}
where odate <= date '2024-03-01'
group by status, note
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(
        "join_agg_having",
        """
select c.tier, o.status, count(*) as n, sum(o.amount) as total, max(o.odate) as last_date
from {orders} o
join {customers} c on o.c_id = c.c_id
group by c.tier, o.status
having count(*) >= 2 and sum(o.amount) > 50
""",
    ),
    Model(  # its grouping id makes its rows a set: a large target takes the change in one MERGE
        "rollup_join",
        """
select c.tier, o.status, count(*) as n, sum(o.amount) as total, max(o.odate) as last_date,
       grouping(o.status) as status_rolled_up, grouping_id() as gid
from {orders} o
join {customers} c on o.c_id = c.c_id
group by rollup(c.tier, o.status)
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(  # a set listed twice yields its rows twice; the empty set none over no rows (Spark refuses
        # GROUPING in the HAVING of sets listed twice)
        "grouping_sets_cube",
        """
select c_id, status, count(*) as n, count(distinct p_id) as products, avg(amount) as mean
from {orders}
where amount is not null
group by grouping sets ((c_id, status), (status), (status), ())
having count(*) > 1
union all
select c_id, status, count(*), count(distinct p_id), avg(amount)
from {orders}
group by c_id, status with cube
having count(*) > 1 or grouping(c_id) = 1
""",
    ),
    Model(  # percentile is not incremental: recomputed in full each run, as written (sqlglot renders it
        # without its frequency argument: a different result)
        "fallback_percentile",
        """
select status, percentile(amount, 0.5, coalesce(p_id, 0)) as weighted_median, count(*) as n
from {orders}
group by status
""",
        modes=("full",),
    ),
    Model(
        "intersect_except",
        """
select c_id from {orders} intersect all select c_id from {customers}
""",
    ),
    Model(
        "union_distinct",
        """
select c_id from {orders} where c_id is not null
union
select c_id from {customers}
""",
        ivm_config=KEYED_WRITES,
    ),
]
INPUTS = {"orders": 0, "customers": 0}
SEED = 99


class TestIvmAggregates:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        # a target rewritten from its state of one row has its gain and loss counted in this
        # JVM, a larger one by a diff statement: both ways are checked (run_batches' counts)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(metadata, "COUNTED_ROWS_MOST", 1)
            yield from batch_outcomes(project.test_schema, INPUTS, MODELS, SEED, ["nasty", None, ["orders"]])

    @pytest.mark.parametrize("model", [m.name for m in MODELS])
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])

    def test_results_that_are_sets_take_each_change_in_one_merge(self, outcomes, project):
        """A large result that holds every row once (``KEYED_WRITES`` makes every target large)
        takes each change in one MERGE matching whole rows: every snapshot of the target after
        its build is the one a run committed (a DELETE then an INSERT would leave one between),
        and some run both deleted and inserted rows in it (an 'overwrite')."""
        for m in MODELS:
            if m.ivm_config != KEYED_WRITES:
                continue
            schema = project.test_schema
            snaps = collect(f"SELECT snapshot_id, operation FROM {schema}.{m.relation_name}.snapshots "
                            "ORDER BY committed_at")[1:]  # after the build
            committed = {r[0] for r in collect(f"SELECT target_snapshot FROM {state_schema(schema)}."
                                               f"{m.relation_name}__log WHERE status = 'committed'")}
            between = [r for r in snaps if r[0] not in committed]
            assert not between, f"{m.name}: snapshots no run committed: {between}"
            assert "overwrite" in {r[1] for r in snaps}, f"{m.name}: {snaps}"

    def test_a_state_merge_reads_the_changes_key_ranges_only(self, outcomes, logs_dir):
        """A state updated in place whose group key each changed input's change gives (its own
        column, or the one it is joined on) is MERGEd within those change ranges
        (``AND (s.<key> IS NULL OR … BETWEEN …)``): over orders alone, grouped by its c_id and p_id;
        over orders ⋈ customers on c_id, grouped by it. The oracle comparisons above are what
        prove the bounded MERGEs left the right state."""
        with open(os.path.join(logs_dir, "dbt.log")) as f:
            log = f.read()
        for name in ("agg_having", "agg_per_customer_join"):
            merges = re.findall(rf"MERGE INTO `[^`]+`\.`{name}__agg0__(?:groups|states)` AS s\nUSING .*?\nON (.*?)\n", log,
                                flags=re.S)
            assert merges, name
            assert any(re.search(r" AND \(s\.`c\d+` IS NULL OR ", on) for on in merges), (name, merges)

    def test_a_rewritten_target_is_diffed_within_the_changes_key_ranges(self, outcomes, logs_dir):
        """A target rewritten from its state and sorted by a join key the changes bound counts the
        rows it gained and lost by a diff of its two snapshots read within the changes' key ranges
        (``Program.result_bound``), not whole. The oracle's count checks (``run_batches``: every
        incremental run's rows inserted and deleted against the target's own difference) are what
        prove the slice held every changed row."""
        with open(os.path.join(logs_dir, "dbt.log")) as f:
            log = f.read()
        name = "agg_per_customer_from_state"
        diffs = re.findall(rf"FROM \(SELECT \* FROM `[^`]+`\.`{name}`(?:\.snapshot_id_\d+)? WHERE \(`c_id` IS NULL OR ",
                           log)
        assert len(diffs) >= 2, diffs  # both snapshots, in some run

    def test_a_small_rewritten_target_is_counted_without_a_statement(self, outcomes, logs_dir):
        """A target rewritten from its state that is small (here of one row: the global
        aggregate's one row) has the rows it gained and lost counted from its two snapshots read
        in this JVM (``metadata.rewrite_counts``): no statement reads its old snapshot."""
        with open(os.path.join(logs_dir, "dbt.log")) as f:
            log = f.read()
        assert "INSERT OVERWRITE" in log and re.search(r"INSERT OVERWRITE `[^`]+`\.`agg_global` ", log)
        assert not re.search(r"`agg_global`\.snapshot_id_\d+", log)

    def test_large_tables_the_change_touches_all_over_are_updated_in_two_passes(self, outcomes, logs_dir):
        """``TWO_PASS_WRITES``: each of the model's tables updated in place takes the change as a MERGE
        without an insert clause (Spark can broadcast the change to it), then an INSERT of the
        groups and values the state did not hold (a semi join of the state as the last commit left
        it, marking those it held) or of the result's new rows (checked against Iceberg's row
        counts, the target not read) — never one MERGE with ``WHEN NOT MATCHED``. A state's
        touched groups are read from it once, staged, and both its second pass and the model's
        published change read them instead of the state. The oracle
        comparisons above are what prove the two passes left the right tables."""
        with open(os.path.join(logs_dir, "dbt.log")) as f:
            log = f.read()
        name = "agg_join_two_pass"
        # its group state (set 0) and MAX's value state (a set above: COUNT(DISTINCT)'s takes appended
        # pieces), in one table of states, and the target
        tables = {(f"{name}__agg0__states", "0"): "_ivm_held", (f"{name}__agg0__states", "[1-9]"): "_ivm_held",
                  (name, None): "total-position-deletes"}
        for (table, set_id), mark in tables.items():  # a statement ends where dbt's next log line begins
            merges = [m for m in re.findall(rf"MERGE INTO `[^`]+`\.`{table}` AS \w\n(.*?)\n\x1b", log, flags=re.S)
                      if set_id is None or re.search(rf"ON s\._ivm_set = {set_id} AND", m)]
            inserts = re.findall(rf"INSERT INTO `[^`]+`\.`{table}` \([^\x1b]*?{mark}", log)
            if set_id is not None:  # (the values inserted: the group keys, then the set)
                inserts = [i for i in inserts if re.search(rf"BROADCAST\(h\) \*/ (d\.`\w+`, )*{set_id}, ", i)]
            assert merges and inserts, (table, set_id, len(merges), len(inserts))
            assert not any("WHEN NOT MATCHED" in m for m in merges), table
        # a state's touched groups are staged from the state as the last commit left it, once; its
        # second pass and the model's change (published, or staged) read them, not the state
        for state, set_id in (("groups", "0"), (r"values__\w+", "[1-9]")):
            staged = re.findall(rf"CACHE TABLE `(_ivm_\w+_agg0__{state})` AS\n.*?FROM \(SELECT [^\n]*? FROM "
                                rf"`[^`]+`\.`{name}__agg0__states`\.snapshot_id_\d+ WHERE _ivm_set = {set_id}\) AS s\n",
                                log)
            assert staged, state
            for view in staged:
                assert re.search(rf"FROM `{view}` AS s\n  LEFT SEMI JOIN \(SELECT", log), view  # second pass
                change = rf"(INSERT INTO `[^`]+`\.`{name}__changes`|CACHE TABLE `_ivm_\w+_change`)"
                assert re.search(rf"{change}[^\x1b]*FROM `{view}` AS s LEFT SEMI JOIN _ivm_t", log), view

    def test_an_incremental_run_binds_the_types_its_last_commit_recorded(self, outcomes, logs_dir):
        """The aggregates' Spark types follow from the SQL and the inputs' schemas, which the
        fingerprint names: a run that applies a change reads them from its last commit and asks no
        ``DESCRIBE QUERY`` of their type probe (its columns are the ``…__arg`` aliases); a build
        asks it. The oracle comparisons above are what prove the recorded types were right."""
        with open(os.path.join(logs_dir, "dbt.log"), errors="replace") as f:
            log = f.read()
        runs = re.findall(r"Began running node model\.\w+\.(\w+)\n(.*?)Finished running node", log, flags=re.S)
        probe = re.compile(r"DESCRIBE QUERY SELECT \* FROM \(SELECT [^\n]*__arg`")
        committed = re.compile(r"__log` SELECT \d+, 'committed', '(incremental|full)'")
        aggregates = {"agg_join_group", "agg_statistics", "q1_style"}
        seen = {mode: set() for mode in ("incremental", "full")}
        for name, text in runs:
            mode = committed.search(text)
            if name not in aggregates or mode is None:
                continue
            seen[mode.group(1)].add(name)
            asked = len(probe.findall(text))
            assert asked == (1 if mode.group(1) == "full" else 0), (name, mode.group(1), asked)
        assert seen["incremental"] == aggregates, seen

    def test_models_whose_state_tables_follow_from_their_types_run_incrementally(self, outcomes, project):
        """A SUM over a DOUBLE keeps its values: its states are one table of states, which a run
        knows only from the types its last commit recorded. Every batch after the build is
        applied incrementally (a run that named the tables of an INT's SUM would find them
        missing and rebuild every time: the oracle comparisons alone would not tell)."""
        states = state_schema(project.test_schema)
        modes = dict(collect(f"SELECT mode, count(*) FROM {states}.agg_double_sums__log "
                             "WHERE status = 'committed' GROUP BY mode"))
        assert modes.get("incremental", 0) >= 3 and modes.get("full") == 1, modes

    def test_the_target_holds_the_group_state_of_the_models_result(self, outcomes, project):
        """A model whose result is its aggregate keeps no group state of its own while every group's
        row determines it; one with a NULL amount in a group keeps its group state apart. The
        oracle comparisons above (every run, every batch) prove the state read from the target was
        right; test_ivm_held_groups.py switches a model over by a change."""
        schema, states = project.test_schema, state_schema(project.test_schema)
        tables = {r[1] for r in collect(f"SHOW TABLES IN {states}")}
        for name in ("agg_held_small", "agg_held_counts"):
            assert f"{name}__agg0__groups" not in tables, name
        for name in ("agg_held_by_target", "agg_held_small", "agg_held_counts"):
            modes = collect(f"SELECT mode, count(*) FROM {states}.{name}__log WHERE status = 'committed' GROUP BY mode")
            assert dict(modes).get("incremental", 0) >= 3, (name, modes)  # the batches after the build
        irregular = collect(f"SELECT count(*) FROM (SELECT 1 FROM {schema}.orders GROUP BY c_id, status "
                            "HAVING count(amount) < count(*))")[0][0]
        assert irregular > 0 and "agg_held_by_target__agg0__groups" in tables

    def test_explain_says_how_the_target_takes_a_change(self, outcomes, project):
        from_state = "takes each change rewritten as the result read from its aggregate's state"
        for name, way in (("q1_style", "takes each change one MERGE of whole rows"),
                          ("agg_statistics", from_state), ("agg_distinct_values_large", from_state)):
            if name == "agg_distinct_values_large":  # its COUNT(DISTINCT)'s values outgrew ivm_rewrite_max_rows
                held = collect(f"SELECT count(*) FROM {state_schema(project.test_schema)}.{name}__agg0__states "
                               "WHERE _ivm_set = 1")[0][0]  # its value state
                assert held > 5, held
            _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", f"{{model: {name}}}"])
            assert way in explained, f"{name}: {explained}"
