"""Bad input (SPEC §7): the run fails with a message naming the model and the change table, and changes nothing
(the Iceberg snapshot of the target and of every table in the <schema>_ivm state schema is unchanged).

Each bad batch also carries valid change rows (which must not be applied either).  After each test the bad batch
is removed from the change table again, so the tests are independent; the last test checks that a valid batch
still gives the exact result afterwards."""

import re

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from .harness import (
    IS_IVM,
    KEYED_WRITES,
    TWO_PASS_WRITES,
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    collect,
    drop_schema,
    fingerprint_schemas,
    list_tables,
    project_files,
    shop_inputs,
    sql,
    state_schema,
)

pytestmark = pytest.mark.skipif(not IS_IVM, reason="bad-input checks need the incremental_ivm materialization")

MODEL = Model(
    "bad_input_join",
    """
select o.o_id, o.amount, c.name
from {orders} o
join {customers} c on o.c_id = c.c_id
""",
)
# Models that keep no join index for orders: an absent row is caught where the change would make
# a row of the result (filter) or a group's count (aggregate) negative.
FILTER_MODEL = Model("bad_input_filter", "select o.o_id, o.status, o.note from {orders} o where o.status = 'open'")
AGG_MODEL = Model(
    "bad_input_agg",
    "select o.o_id, count(*) as n, max(o.amount) as top from {orders} o group by o.o_id",
)
# The same two, updating their target and group state in place instead of rewriting them (each
# path refuses the delete itself)
FILTER_MODEL_KEYED = Model(f"{FILTER_MODEL.name}_keyed", FILTER_MODEL.template, ivm_config=KEYED_WRITES)
AGG_MODEL_KEYED = Model(f"{AGG_MODEL.name}_keyed", AGG_MODEL.template, ivm_config=KEYED_WRITES)
# A COUNT(DISTINCT) whose value state takes the change appended (in place, ``KEYED_WRITES``): the
# group state's update refuses a value that would fall below none (a group's count alone may not)
DISTINCT_MODEL_KEYED = Model(
    "bad_input_distinct_keyed",
    "select o.c_id, count(*) as n, count(distinct o.o_id) as order_ids from {orders} o group by o.c_id",
    ivm_config=KEYED_WRITES,
)
# Grouped by an expression no key ranges bound, updated in two passes (``TWO_PASS_WRITES``): the second pass
# (the INSERT of new groups, values and result rows) refuses what the one MERGE's insert clause would
AGG_MODEL_TWO_PASS = Model(
    "bad_input_agg_two_pass",
    "select string(o.o_id) as o_key, count(*) as n, max(o.amount) as top from {orders} o group by string(o.o_id)",
    ivm_config=TWO_PASS_WRITES,
)
# Models whose target holds their group state (rules/aggregate/held.py): computing the change refuses a
# group left with a negative count (no group state is updated); with a SUM, in place, and without (small)
HELD_MODEL_KEYED = Model(
    "bad_input_held_keyed",
    "select o.o_id, count(*) as n, sum(coalesce(o.amount, 0)) as total from {orders} o group by o.o_id",
    ivm_config=KEYED_WRITES,
)
HELD_COUNT_MODEL = Model("bad_input_held_counts", "select o.o_id, count(*) as n from {orders} o group by o.o_id")
MODELS = [MODEL, FILTER_MODEL, AGG_MODEL, FILTER_MODEL_KEYED, AGG_MODEL_KEYED, DISTINCT_MODEL_KEYED,
          AGG_MODEL_TWO_PASS, HELD_MODEL_KEYED, HELD_COUNT_MODEL]
INPUTS = {"orders": 0, "customers": 0}
ABSENT_ORDER = 999  # an o_id outside the generator's domain (1..40): surely not in orders
LATE_ORDER = 998
NEW_ORDER = 997
ABSENT_CUSTOMER = 99_999  # a c_id no customer has


class TestIvmBadInput:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS, with_tests=False)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS))
        h.create_inputs()
        gen = BatchGenerator(h, 4242)
        h.apply(gen.initial())
        run_dbt(["run"])
        oracle = Oracle(h, MODELS)
        for m in MODELS:
            assert oracle.compare(m.name) is None
        yield {"h": h, "gen": gen, "oracle": oracle}
        drop_schema(state_schema(project.test_schema))

    # ------------------------------------------------------------------ helpers
    def _schemas(self, project):
        return [project.test_schema, state_schema(project.test_schema)]

    def _expect_failure(self, project, ctx, fragments, change_table, models=(MODEL,)):
        """Run, expect ``models`` to fail; each one's message names the model, the change table and
        the problem; nothing changed (every Iceberg snapshot id is the same)."""
        before = fingerprint_schemas(self._schemas(project))
        assert f"{project.test_schema}.{MODEL.name}" in before, "target missing before the bad run"
        results, log = run_dbt_and_capture(["run"], expect_pass=False)
        by_name = {r.node.name: r for r in results}
        messages = " ".join(str(r.message or "") for r in results)
        text = (messages + "\n" + log).lower()
        assert "being refreshed by another run" not in text, (
            f"the model is still locked by an earlier (failed) run of this same process: {messages!r}"
        )
        for model in models:
            result = by_name[model.name]
            assert str(result.status) == "error", f"{model.name} did not fail: {result.message!r}"
            message = str(result.message or "").lower()
            missing = [f for f in [model.name, change_table] + fragments if f.lower() not in message]
            assert not missing, f"{model.name}: error lacks {missing}; its message: {result.message!r}"
        after = fingerprint_schemas(self._schemas(project))
        changed = {t: (before.get(t), after.get(t)) for t in set(before) | set(after) if before.get(t) != after.get(t)}
        assert not changed, f"a failed run changed tables (before, after): {changed}"
        return messages

    def _bad_batch(self, ctx, bad_rows):
        """Valid rows for both inputs + the bad orders rows, all with one new seq (not mirrored)."""
        h, gen = ctx["h"], ctx["gen"]
        seq = h.next_seq()
        valid = gen.batch(["orders", "customers"], ops=2)
        h.write_changes("customers", valid["customers"], seq)
        h.write_changes("orders", valid["orders"] + bad_rows, seq)
        return seq

    def _remove_seq(self, ctx, seq):
        h = ctx["h"]
        for name in ("orders", "customers"):
            sql(f"DELETE FROM {h.fq(h.inputs[name].changes)} WHERE _ivm_seq = {seq}")

    def _a_new_order(self, ctx):
        return ctx["h"].inputs["orders"].new_row(ctx["gen"].rng)

    # ------------------------------------------------------------------ tests
    def test_null_weight(self, project, ctx):
        seq = self._bad_batch(ctx, [(self._a_new_order(ctx), None)])
        try:
            self._expect_failure(project, ctx, ["NULL or zero _ivm_weight"], "orders_changes")
        finally:
            self._remove_seq(ctx, seq)

    def test_zero_weight(self, project, ctx):
        seq = self._bad_batch(ctx, [(self._a_new_order(ctx), 0), (self._a_new_order(ctx), 0)])
        try:
            msg = self._expect_failure(project, ctx, ["NULL or zero _ivm_weight"], "orders_changes")
            assert re.search(r"\b2\b", msg), f"message should say how many rows (2): {msg!r}"
        finally:
            self._remove_seq(ctx, seq)

    def test_delete_of_absent_row(self, project, ctx):
        h = ctx["h"]
        # a row that is surely not in orders (o_id outside the generator's domain), joinable customer key
        c_ids = [r[0] for r in h.inputs["customers"].rows if r[0] is not None]
        row = (ABSENT_ORDER, c_ids[0], 1, None, "open", None, None)
        assert row not in h.inputs["orders"].rows
        seq = self._bad_batch(ctx, [(row, -1)])
        try:
            msg = self._expect_failure(project, ctx, ["do not exist"], "orders_changes", models=MODELS)
            assert re.search(r"\b1 row", msg), f"message should say how many rows (1): {msg!r}"
        finally:
            self._remove_seq(ctx, seq)

    def test_delete_of_absent_value_beside_an_insert_into_its_group(self, project, ctx):
        """A customer's row count stays the same (an order that is not there deleted, a new one
        inserted): only the distinct order ids can tell, and the group state's update refuses
        the value of ``DISTINCT_MODEL_KEYED`` that would fall below none (its value state takes
        the change appended, which checks nothing itself)."""
        h = ctx["h"]
        c_id = next(r[1] for r in h.inputs["orders"].rows if r[1] is not None)
        absent = (ABSENT_ORDER, c_id, 1, None, "open", None, None)
        assert absent not in h.inputs["orders"].rows
        seq = self._bad_batch(ctx, [(absent, -1), ((NEW_ORDER, c_id, 1, None, "open", None, None), 1)])
        try:
            self._expect_failure(project, ctx, ["do not exist"], "orders_changes", models=MODELS)
        finally:
            self._remove_seq(ctx, seq)

    def test_delete_of_absent_row_that_joins_nothing(self, project, ctx):
        """Only the join index can tell: the deleted row would join no customer, so it changes no
        row of the join's result. The index's append refuses it, naming orders alone."""
        row = (ABSENT_ORDER, ABSENT_CUSTOMER, 1, None, "open", None, None)
        seq = self._bad_batch(ctx, [(row, -1)])
        try:
            msg = self._expect_failure(project, ctx, ["do not exist", "1 row(s) of the input"],
                                       "orders_changes")
            assert "customers_changes" not in msg, msg
        finally:
            self._remove_seq(ctx, seq)

    @pytest.mark.parametrize("model, held", [(AGG_MODEL_KEYED, f"{ABSENT_ORDER}, 1, CAST(5 AS DECIMAL(10,2))"),
                                             (AGG_MODEL_TWO_PASS, f"'{ABSENT_ORDER}', 1, CAST(5 AS DECIMAL(10,2))")])
    def test_insert_of_a_row_the_result_already_holds(self, project, ctx, model, held):
        """A result that holds every row once takes its change in one MERGE of whole rows (or, in
        two passes, the MERGE without its insert clause then an INSERT of the new rows). If its
        target and its state ever disagreed — here a row is written into the target and the log
        made to record that snapshot as committed, since a write the log does not record is
        rolled back by the next run — a change inserting that row would leave it there twice:
        the MERGE refuses it, the run names the target and says what to do, and the model's
        tables are as they were."""
        self._refused_after_a_write_the_log_records(
            project, ctx, model, f"INSERT INTO {{target}} VALUES ({held})",
            (ABSENT_ORDER, 1, 1, 5, "open", None, None), ("a row twice", "--full-refresh"))

    def test_delete_of_a_row_the_result_does_not_hold_in_two_passes(self, project, ctx):
        """In two passes the target is not read for the rows the change deletes: the first pass
        deletes those it holds; a row it does not hold — here one deleted from the target and the
        log made to record that snapshot as committed — is left, so the target holds one row more
        than the last commit less the change's deletes (Iceberg's metadata): the second pass
        refuses it, names the model, and the model's tables are as they were."""
        target = f"{project.test_schema}.{AGG_MODEL_TWO_PASS.relation_name}"
        key = collect(f"SELECT o_key FROM {target} WHERE o_key IS NOT NULL ORDER BY o_key LIMIT 1")[0][0]
        # another copy of that order: its group's row changes (deleted, then inserted)
        self._refused_after_a_write_the_log_records(
            project, ctx, AGG_MODEL_TWO_PASS, f"DELETE FROM {{target}} WHERE o_key = '{key}'",
            (int(key), 1, 1, 5, "open", None, None), ("do not exist", "of the model's result"))

    def _refused_after_a_write_the_log_records(self, project, ctx, model, write, order, fragments):
        """Write into ``model``'s target behind its back (``write``, with ``{target}``) and make the
        log record that snapshot as committed — a write the log does not record is rolled back by
        the next run — then insert ``order`` into orders: the run must fail with a message naming
        the model, the target and ``fragments``, and leave the model's tables as they were."""
        h = ctx["h"]
        name = model.relation_name
        target, log = f"{project.test_schema}.{name}", f"{state_schema(project.test_schema)}.{name}__log"
        committed = collect(f"SELECT snapshot_id FROM {target}.refs WHERE name = 'main'")[0][0]
        sql(write.format(target=target))
        written = collect(f"SELECT snapshot_id FROM {target}.refs WHERE name = 'main'")[0][0]
        last = collect(f"SELECT max(seq) FROM {log} WHERE status = 'committed'")[0][0]
        recorded = f"UPDATE {log} SET target_snapshot = {{to}}, snapshots = replace(snapshots, '{{from_}}', '{{to}}') " \
                   f"WHERE seq = {last} AND status = 'committed'"
        sql(recorded.format(from_=committed, to=written))
        seq = h.next_seq()
        h.write_changes("orders", [(order, 1)], seq)
        try:
            before = fingerprint_schemas(self._schemas(project))
            results, _ = run_dbt_and_capture(["run", "--select", model.name], expect_pass=False)
            message = str(results[0].message or "")
            assert str(results[0].status) == "error", message
            for fragment in (model.name, name, *fragments):
                assert fragment in message, f"error lacks {fragment!r}: {message!r}"
            after = fingerprint_schemas(self._schemas(project))
            changed = [t for t in set(before) | set(after) if name in t and before.get(t) != after.get(t)]
            assert not changed, f"the failed run changed {changed}"
        finally:
            self._remove_seq(ctx, seq)
            sql(f"CALL spark_catalog.system.rollback_to_snapshot('{target}', {committed})")
            sql(recorded.format(from_=written, to=committed))

    def _late_rows(self, ctx, seq_sql):
        h = ctx["h"]
        rows = [((LATE_ORDER, 1, 1, None, "open", None, None), 1), ((LATE_ORDER, 2, 1, None, "open", None, None), 1)]
        h.write_changes("orders", rows, 1)  # seq 1: consumed long ago
        if seq_sql != "1":
            sql(f"UPDATE {h.fq(h.inputs['orders'].changes)} SET _ivm_seq = {seq_sql} WHERE o_id = {LATE_ORDER}")

    def _remove_late_rows(self, ctx):
        h = ctx["h"]
        sql(f"DELETE FROM {h.fq(h.inputs['orders'].changes)} WHERE o_id = {LATE_ORDER}")

    @pytest.mark.parametrize("seq_sql", ["1", "NULL"])
    def test_late_write_into_the_past(self, project, ctx, seq_sql):
        """Rows appended below the consumed watermark (or with no seq) after the model consumed
        it: no new sequence at all (a run would otherwise be a silent no-op)."""
        self._late_rows(ctx, seq_sql)
        try:
            msg = self._expect_failure(project, ctx, ["late write", "2 row"], "orders_changes", models=MODELS)
            assert "--full-refresh" in msg
        finally:
            self._remove_late_rows(ctx)

    def test_late_write_beside_a_valid_batch(self, project, ctx):
        """The same late rows hidden among a new, valid batch (the window's own rows are counted
        by the validation scan the run does anyway)."""
        seq = self._bad_batch(ctx, [])
        self._late_rows(ctx, "1")
        try:
            self._expect_failure(project, ctx, ["late write", "2 row"], "orders_changes", models=MODELS)
        finally:
            self._remove_late_rows(ctx)
            self._remove_seq(ctx, seq)

    @pytest.mark.parametrize("column", ["_ivm_weight", "_ivm_seq"])
    def test_missing_column(self, project, ctx, column):
        h = ctx["h"]
        changes = h.fq(h.inputs["orders"].changes)
        # a valid batch is pending, then the column "disappears" (renamed; renamed back afterwards: Iceberg keeps
        # the data by field id)
        seq = h.apply(ctx["gen"].batch(["orders"], ops=2))
        sql(f"ALTER TABLE {changes} RENAME COLUMN {column} TO {column}_gone")
        try:
            self._expect_failure(project, ctx, ["missing column", column], "orders_changes")
        finally:
            sql(f"ALTER TABLE {changes} RENAME COLUMN {column}_gone TO {column}")
        assert seq == h.seq

    def test_valid_batch_after_bad_ones(self, project, ctx):
        """Nothing of the rejected batches leaked: a valid batch (plus the pending one) gives the exact result."""
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        run_dbt(["run"])
        for m in MODELS:
            diff = ctx["oracle"].compare(m.name)
            assert diff is None, diff
        assert MODEL.name in list_tables(project.test_schema)
