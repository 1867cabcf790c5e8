"""A large target whose rows may repeat (a join, no aggregate), updated in place: a change that
deletes each of its rows once, within key ranges, is taken by one MERGE that deletes every copy
of those rows, then an INSERT of the new rows — and of the copies a deleted row had besides,
counted in the target as the last commit left it; a change that only inserts, one INSERT. A
delete of a row that is not there is refused (here by the join index's append, before the MERGE
that would refuse it too) and changes nothing. Every run is compared with the oracle (a full
recompute)."""

import datetime
import os
import re
from decimal import Decimal

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from .harness import (
    IS_IVM,
    KEYED_WRITES,
    Model,
    built_and_checked,
    drop_schema,
    fingerprint_schemas,
    project_files,
    shop_harness,
    state_schema,
)

pytestmark = pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization")

MODEL = Model(  # sorted by c_id, the join key it selects: the target is read within the deleted rows' c_ids
    "bag_join",
    """
select o.c_id, o.o_id, o.amount, c.name
from {orders} o
join {customers} c on o.c_id = c.c_id
""",
    ivm_config=KEYED_WRITES,
)
INPUTS = {"orders": 0, "customers": 0}


def order(o_id: int, c_id: int):
    return (o_id, c_id, 1, Decimal("10.00"), "open", datetime.date(2024, 1, 1), None)


def customer(c_id: int):
    return (c_id, f"name{c_id}", 1, Decimal("50.00"), "gold")


class TestIvmBagTarget:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, [MODEL], INPUTS, with_tests=False)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = shop_harness(project.test_schema, INPUTS)
        # customers 1..20, orders 1..40 over them; order 3 twice: its result row has two copies
        h.apply({"customers": [(customer(c), 1) for c in range(1, 21)],
                 "orders": [(order(o, o % 20 + 1), 1) for o in range(1, 41)] + [(order(3, 4), 1)]})
        oracle = built_and_checked(h, MODEL)
        yield {"h": h, "oracle": oracle}
        drop_schema(state_schema(project.test_schema))

    def _run(self, project, logs_dir):
        """`dbt run`; the statements of this run that wrote the target (from dbt's log)."""
        path = os.path.join(logs_dir, "dbt.log")
        start = os.path.getsize(path) if os.path.exists(path) else 0
        run_dbt(["run"])
        with open(path, errors="replace") as f:
            f.seek(start)
            log = f.read()
        return re.findall(rf"((?:MERGE INTO|INSERT INTO|DELETE FROM|CACHE TABLE) `[^`]+`\.`{MODEL.name}`.*?)\n\x1b",
                          log, flags=re.S)

    def test_a_change_deleting_each_row_once_is_one_merge_and_an_insert(self, project, ctx, logs_dir):
        h = ctx["h"]
        h.apply({"orders": [(order(1, 2), -1), (order(5, 6), -1), (order(100, 20), 1)]})
        writes = self._run(project, logs_dir)
        assert ctx["oracle"].compare(MODEL.name) is None
        assert [w.split("\n")[0].split(" `")[0] for w in writes] == ["MERGE INTO", "INSERT INTO"], writes
        assert "WHEN MATCHED THEN DELETE" in writes[0] and "count(*) - 1" not in writes[1], writes

    def test_a_deleted_row_with_more_copies_gets_them_back(self, project, ctx, logs_dir):
        """Order 3 is there twice: deleting one copy deletes the result row's two copies, then
        the INSERT puts one back, counted in the target as the last commit left it."""
        h = ctx["h"]
        h.apply({"orders": [(order(3, 4), -1), (order(101, 19), 1)]})
        writes = self._run(project, logs_dir)
        assert ctx["oracle"].compare(MODEL.name) is None
        assert [w.split("\n")[0].split(" `")[0] for w in writes] == ["MERGE INTO", "INSERT INTO"], writes
        assert "count(*) - 1" in writes[1], writes

    def test_a_run_that_dies_between_the_merge_and_the_insert_is_rolled_back(self, project, ctx):
        """The MERGE is written, the INSERT not: the next run sets the target back to the last
        commit and applies the change again, exactly."""
        h = ctx["h"]
        h.apply({"orders": [(order(7, 8), -1), (order(104, 18), 1)]})
        os.environ["DBT_SPARK_IVM_FAULT"] = f"{MODEL.name}:between_passes"
        try:
            results, _ = run_dbt_and_capture(["run"], expect_pass=False)
        finally:
            os.environ.pop("DBT_SPARK_IVM_FAULT", None)
        assert "injected failure" in str(results[0].message), results[0].message
        run_dbt(["run"])
        assert ctx["oracle"].compare(MODEL.name) is None

    def test_a_delete_of_a_row_that_is_not_there_is_refused(self, project, ctx):
        h = ctx["h"]
        schemas = [project.test_schema, state_schema(project.test_schema)]
        h.write_changes("orders", [(order(500, 7), -1), (order(102, 7), 1)], h.next_seq())  # order 500 never existed
        before = fingerprint_schemas(schemas)
        results, _ = run_dbt_and_capture(["run"], expect_pass=False)
        message = str(results[0].message or "")
        assert str(results[0].status) == "error" and "do not exist" in message and "orders" in message, message
        assert fingerprint_schemas(schemas) == before
        h.write_changes("orders", [(order(500, 7), 1), (order(102, 7), -1)], h.next_seq())  # undone
        run_dbt(["run"])
        assert ctx["oracle"].compare(MODEL.name) is None

    def test_a_change_that_only_inserts_is_one_insert(self, project, ctx, logs_dir):
        h = ctx["h"]
        h.apply({"orders": [(order(103, 2), 1), (order(103, 2), 1)]})
        writes = self._run(project, logs_dir)
        assert ctx["oracle"].compare(MODEL.name) is None
        assert [w.split("\n")[0].split(" `")[0] for w in writes] == ["INSERT INTO"], writes
