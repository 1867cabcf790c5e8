"""Random change batches against many incremental_ivm models sharing one project; after every `dbt run` each
model is compared with a from-scratch recompute (multiset + column names/types).

All models live in one project so one `dbt run` per batch covers them all (every dbt invocation costs seconds);
the outcome is still reported per model (one parametrized test per model).
"""

from collections import Counter

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from .harness import (
    IS_IVM,
    KEYED_WRITES,
    BatchGenerator,
    IvmHarness,
    Model,
    collect,
    drop_schema,
    project_files,
    run_batches,
    shop_inputs,
    state_schema,
)

MODELS = [
    Model(
        "proj_filter",
        """
select
    o_id,
    upper(status) as status_u,
    amount * 2 as amount2,
    cast(amount as int) as amount_int,
    cast(o_id as string) as o_id_str,
    case when amount > 50 then 'big' when amount is null then 'unknown' else 'small' end as size,
    concat(coalesce(status, '?'), '-', cast(o_id as string)) as tag,
    substring(coalesce(note, 'none'), 1, 3) as note3,
    length(note) as note_len,
    date_add(odate, 7) as due,
    c_id is null as no_customer
from {orders}
where (status <> 'cancelled' or status is null) and (amount is null or amount < 110)
""",
    ),
    Model(
        "cte_subquery",
        """
with big as (
    select o_id, c_id, p_id, amount, status from {orders} where amount > 20
),
open_big as (
    select * from big where status in ('open', 'shipped')
)
select s.o_id, s.c_id, s.amount_x10, s.status
from (
    select o_id, c_id, amount * 10 as amount_x10, status from open_big where c_id is not null
) s
where s.amount_x10 < 1000
""",
    ),
    Model(
        "union_all",
        """
select o_id, c_id, amount, 'live' as src from {orders} where status = 'open'
union all
select o_id, c_id, amount, 'archived' as src from {archived_orders} where amount > 10 or amount is null
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(
        "join2",
        """
select o.o_id, o.amount, o.status, c.c_id, c.name, c.tier
from {orders} o
join {customers} c on o.c_id = c.c_id
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(
        "self_join",
        """
select a.c_id as c_id_a, b.c_id as c_id_b, a.name as name_a, b.name as name_b, a.region_id
from {customers} a
join {customers} b on a.region_id = b.region_id
where a.c_id < b.c_id
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(
        "chain3",
        """
select o.o_id, o.amount, c.name, r.rname
from {orders} o
join {customers} c on o.c_id = c.c_id
join {regions} r on c.region_id = r.region_id
where o.status is null or o.status <> 'cancelled'
""",
    ),
    Model(
        "star3",
        """
select o.o_id, c.name, p.pname, o.amount, p.price, o.amount - p.price as margin
from {orders} o
join {customers} c on o.c_id = c.c_id
join {products} p on o.p_id = p.p_id
""",
        ivm_config=KEYED_WRITES,
    ),
    Model(
        "join_or_one_side",
        """
select o.o_id, o.status, c.name
from {orders} o
join {customers} c on o.c_id = c.c_id
where o.status = 'open' or o.amount > 100
""",
    ),
    Model(
        "join_or_both_sides",
        """
select o.o_id, o.status, c.name, c.tier
from {orders} o
join {customers} c on o.c_id = c.c_id
where o.status = 'open' or c.tier = 'gold'
""",
    ),
    Model(
        "nonequi",
        """
select o.o_id, o.amount, c.c_id, c.credit_limit
from {orders} o
join {customers} c on o.c_id = c.c_id and o.amount > c.credit_limit
""",
        ivm_config=KEYED_WRITES,
    ),
]

SEED = 20240611
# which inputs change in each batch (None = random choice, usually several)
BATCH_PLAN = ["nasty"]


class TestIvmOracle:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS)

    @pytest.fixture(scope="class")
    def harness(self, project):
        h = IvmHarness(project.test_schema, shop_inputs())
        yield h
        drop_schema(state_schema(project.test_schema))

    @pytest.fixture(scope="class")
    def outcomes(self, project, harness):
        """Initial load + first build, then the batches; per model the list of problems seen."""
        return run_batches(harness, MODELS, BatchGenerator(harness, SEED), BATCH_PLAN)

    @pytest.mark.parametrize("model", [m.name for m in MODELS])
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])

    def test_batches_cover_the_nasty_cases(self, outcomes, harness):
        """The random batches really contained what the oracle tests claim to exercise."""
        seen = Counter()
        c_ids = Counter()
        for batch in harness.history[:1]:
            for row, w in batch.get("customers", []):
                c_ids[row[0]] += w
        for batch in harness.history[1:]:
            if "orders" in batch and "customers" in batch:
                seen["orders and customers in one batch"] += 1
            for row, w in batch.get("orders", []):
                if w > 0 and row[1] is None:
                    seen["insert with NULL join key"] += 1
                if w < 0 and c_ids.get(row[1], 0) > 0:
                    seen["delete of a joined order"] += 1
                if abs(w) == 2:
                    seen["weight +-2"] += 1
            for name, changes in batch.items():
                minus = {r for r, w in changes if w == -1}
                plus = {r for r, w in changes if w == 1}
                for o in minus:
                    for n in plus:
                        if name == "orders" and o[0] == n[0] and o[1] != n[1] and o[2:] == n[2:]:
                            seen["update of a join key"] += 1
            for row, w in batch.get("customers", []):
                c_ids[row[0]] += w
        for case in [
            "orders and customers in one batch",
            "insert with NULL join key",
            "delete of a joined order",
            "weight +-2",
            "update of a join key",
        ]:
            assert seen[case] > 0, f"generator never produced: {case} ({dict(seen)})"

    @pytest.mark.skipif(not IS_IVM, reason="the write paths are the incremental_ivm materialization's")
    def test_small_targets_rewritten_keyed_ones_updated(self, outcomes, project):
        """Both write paths ran: after its build, a small target is rewritten (an Iceberg
        'overwrite' snapshot); one with ``KEYED_WRITES`` only ever gets deletes and appends."""
        for m in MODELS:
            snaps = collect(
                f"SELECT operation FROM {project.test_schema}.{m.relation_name}.snapshots ORDER BY committed_at"
            )
            ops = {r[0] for r in snaps[1:]}  # after the build (CREATE OR REPLACE: an 'overwrite')
            if m.ivm_config == KEYED_WRITES:
                assert "overwrite" not in ops, f"{m.name} was rewritten: {ops}"
            else:
                assert "overwrite" in ops, f"{m.name} was never rewritten: {ops}"
        for name, way in (("join2", "takes each change in two statements (the result may repeat rows)"),
                          ("chain3", "takes each change rewritten: the target plus the change")):
            _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", f"{{model: {name}}}"])
            assert way in explained, f"{name}: {explained}"

    @pytest.mark.skipif(not IS_IVM, reason="ivm_matches_full_refresh needs the spark_ivm adapter")
    def test_ivm_matches_full_refresh_passes(self, outcomes, project):
        results = run_dbt(["test"], expect_pass=None)
        failed = [f"{r.node.name}: {r.status} {r.message}" for r in results if str(r.status) != "pass"]
        assert not failed, "\n".join(failed)
