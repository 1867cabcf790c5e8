"""Rebuilds from the base, not the history (SPEC §2.1): a change-table source whose base table is
tagged ``ivm_seq_<s>`` at a snapshot holding its changes up to ``s`` is rebuilt from that
snapshot plus the changes above it. Shown by pruning the consumed change history: a rebuild
from the history would then lose rows, one from the base equals the full recompute. Covers a
join model (no join index: it reads its inputs at their tags; and its twin with
``ivm_join_index: always``, whose indexes are built from the base), a single-table aggregate (its state), a model that
falls back to a full recompute on every run (the base read as it is) and a model downstream of
another (its input read at the upstream target's snapshot). The methods run in order and share
one project."""

import os

import pytest
from dbt.tests.util import run_dbt, write_file

from .harness import (
    IS_IVM,
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    adapter_response,
    drop_schema,
    list_tables,
    project_files,
    run_and_compare,
    shop_inputs,
    sql,
    sql_literal,
    state_schema,
    table_fingerprint,
)
from .test_ivm_chain import MODELS as CHAIN

CHAIN_A, CHAIN_B = CHAIN  # a join, and a join reading it (ref)
MODELS = [
    CHAIN_A,
    Model(
        "orders_by_customer",
        """
select c_id, count(*) as n, sum(amount) as total, max(odate) as last_date
from {orders}
group by c_id
""",
    ),
    Model(
        "ranked_orders",  # a window over all rows (no PARTITION BY): recomputed in full on every run
        """
select o_id, c_id, amount, row_number() over (order by c_id, o_id, amount, note) as rn
from {orders}
""",
        modes=("full",),
    ),
    CHAIN_B,
    Model(  # CHAIN_A keeping join indexes, as a model whose bases are not sorted by their join keys would
        "a_order_customers_indexed",
        CHAIN_A.template,
        ivm_config={"ivm_join_index": "always"},
    ),
]
NAMES = [m.name for m in MODELS]
INPUTS = {"orders": 0, "customers": 0, "products": 0}


def tag(h: IvmHarness, seq: int) -> None:
    """Tag every base table's current snapshot as holding the changes up to ``seq``."""
    for name in h.inputs:
        sql(f"ALTER TABLE {h.fq(name)} CREATE OR REPLACE TAG ivm_seq_{seq}")


def apply_after_pruning(h: IvmHarness, batch) -> None:
    """Commit ``batch``'s change rows and apply it to the base tables as the mirror holds them."""
    seq = h.next_seq()
    for name, changes in batch.items():
        rows = h.inputs[name].rows
        for row, w in changes:
            rows[row] += w
        rows += type(rows)()  # drop rows at zero
        h.write_changes(name, changes, seq)
    h.history.append(batch)
    write_bases_from_mirror(h)
    h.check_bases()


def write_bases_from_mirror(h: IvmHarness) -> None:
    """The base tables as the harness's mirror holds them (once the history is pruned, the
    harness can no longer derive them from the change tables)."""
    for inp in h.inputs.values():
        types = [c.type for c in inp.columns]
        rows = [row for row, k in sorted(inp.rows.items(), key=repr) for _ in range(k)]
        values = ", ".join("(" + ", ".join(sql_literal(v, t) for v, t in zip(r, types)) + ")" for r in rows)
        sql(f"DELETE FROM {h.fq(inp.name)}")
        if values:
            sql(f"INSERT INTO {h.fq(inp.name)} VALUES {values}")


def prune(h: IvmHarness) -> None:
    """Delete every change row below each change table's latest batch (all at or below a tag)."""
    for inp in h.inputs.values():
        changes = h.fq(inp.changes)
        sql(f"DELETE FROM {changes} WHERE _ivm_seq < (SELECT max(_ivm_seq) FROM {changes})")


@pytest.mark.skipif(not IS_IVM, reason="rebuilds from tagged bases are the spark_ivm adapter's")
class TestRebuildFromTaggedBase:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS, base="tagged")

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS), base_kind="table")
        h.create_inputs()
        ctx = {"h": h, "oracle": Oracle(h, MODELS), "gen": BatchGenerator(h, 4242)}
        yield ctx
        drop_schema(state_schema(project.test_schema))

    def test_first_build_reads_the_base_at_its_tag_and_the_changes_above(self, project, ctx):
        h, gen = ctx["h"], ctx["gen"]
        h.apply(gen.initial())
        tag(h, h.seq)
        h.apply(gen.nasty_batch(["orders", "customers", "products"]))  # above the tag: deletes, duplicates
        h.check_bases()
        run_and_compare(ctx["oracle"], NAMES, label="first build from tag 1 plus seq 2")

    def test_incremental_runs_accept_a_pruned_history(self, project, ctx):
        """The documented rule: tag the base, then delete change rows below the latest batch."""
        h, gen = ctx["h"], ctx["gen"]
        h.apply(gen.batch(["orders", "customers", "products"]))
        tag(h, h.seq)
        prune(h)
        apply_after_pruning(h, gen.batch(["orders", "customers", "products"]))
        run_and_compare(ctx["oracle"], NAMES, label="incremental after pruning")
        for n in (CHAIN_A.name, "orders_by_customer", CHAIN_B.name, "a_order_customers_indexed"):
            assert adapter_response(project.project_root, n).get("mode") == "incremental", n
        # the join reads its tagged inputs at their tags (the tag at or above what it consumed,
        # patched with the change rows in between); its twin keeps an index of each
        companions = list_tables(state_schema(project.test_schema))
        assert not [t for t in companions if t.startswith(f"{CHAIN_A.name}__index__")], companions
        assert {f"a_order_customers_indexed__index__{project.test_schema}__{n}" for n in ("orders", "customers")} \
            <= set(companions), companions

    def test_rebuild_after_pruning_reads_the_base(self, project, ctx):
        """A rebuild from the history would now lose every pruned row."""
        h = ctx["h"]
        tag(h, h.seq)
        prune(h)
        run_and_compare(ctx["oracle"], NAMES, ("run", "--full-refresh"), label="rebuild from the base alone")
        for n in NAMES:
            assert adapter_response(project.project_root, n).get("mode") == "full"

    def test_a_recomputed_model_over_unchanged_inputs_is_a_noop(self, project, ctx):
        """ranked_orders reads only orders: a batch of other inputs leaves it as it is, without
        a recompute; a batch of orders recomputes it."""
        h, gen = ctx["h"], ctx["gen"]
        target = ctx["oracle"].target("ranked_orders")
        before = table_fingerprint(target)
        apply_after_pruning(h, gen.batch(["customers", "products"]))
        run_and_compare(ctx["oracle"], NAMES, label="a batch without orders")
        assert adapter_response(project.project_root, "ranked_orders").get("mode") == "noop"
        assert table_fingerprint(target) == before
        apply_after_pruning(h, gen.batch(["orders"]))
        run_and_compare(ctx["oracle"], NAMES, label="a batch of orders")
        assert adapter_response(project.project_root, "ranked_orders").get("mode") == "full"

    def test_an_index_no_longer_kept_is_dropped(self, project, ctx):
        """The indexed twin switched to ``ivm_join_index: auto``: its next run rebuilds (the
        fingerprint names the indexed inputs) and, after that rebuild's commit, drops the
        indexes it no longer keeps."""
        h, gen = ctx["h"], ctx["gen"]
        twin = "a_order_customers_indexed"
        path = os.path.join(project.project_root, "models", f"{twin}.sql")
        with open(path) as f:
            text = f.read()
        assert "ivm_join_index='always'" in text, text
        write_file(text.replace("ivm_join_index='always'", "ivm_join_index='auto'"), path)
        apply_after_pruning(h, gen.batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="the twin without its indexes", rebuilds=[twin])
        assert adapter_response(project.project_root, twin).get("mode") == "full"
        companions = list_tables(state_schema(project.test_schema))
        assert not [t for t in companions if t.startswith(f"{twin}__index__")], companions
        apply_after_pruning(h, gen.batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="the twin joining at the tags")
        assert adapter_response(project.project_root, twin).get("mode") == "incremental"

    def test_state_tables_of_another_layout_are_dropped(self, project, ctx):
        """orders_by_customer keeps its MAX's values with its groups, in one table of states
        (``__agg0__states``); without the MAX it keeps a group state only (``__agg0__groups``:
        a group's SUM has a NULL amount, so its target cannot hold it, rules/aggregate/held.py):
        its next run rebuilds (the SQL changed) and, after that rebuild's commit, drops the
        table of states; with the MAX again, the group state's table goes."""
        h, gen, oracle = ctx["h"], ctx["gen"], ctx["oracle"]
        name = "orders_by_customer"
        path = os.path.join(project.project_root, "models", f"{name}.sql")
        with open(path) as f:
            text = f.read()
        template = oracle.models[name].template
        schema = state_schema(project.test_schema)
        assert f"{name}__agg0__states" in list_tables(schema)
        for dropped, kept in (("states", "groups"), ("groups", "states")):
            with_max = kept == "states"
            write_file(text if with_max else text.replace(", max(odate) as last_date", ""), path)
            oracle.models[name] = Model(name, template if with_max else
                                        template.replace(", max(odate) as last_date", ""))
            apply_after_pruning(h, gen.batch(["orders"]))
            run_and_compare(oracle, NAMES, label=f"{name} keeping its {kept}", rebuilds=[name])
            assert adapter_response(project.project_root, name).get("mode") == "full"
            companions = list_tables(schema)
            assert f"{name}__agg0__{kept}" in companions and f"{name}__agg0__{dropped}" not in companions, \
                companions

    def test_a_delete_of_a_row_the_base_lacks_is_refused(self, project, ctx):
        h = ctx["h"]
        tag(h, h.seq)
        absent = (999, 1, 1, "1.00", "open", None, "not there")
        h.write_changes("orders", [(absent, -1)], h.next_seq())
        results = run_dbt(["run", "--full-refresh", "--select", "orders_by_customer"], expect_pass=False)
        message = str(results[0].message)
        assert "orders_changes" in message and "do not exist" in message, message
        assert f"ivm_seq_{h.seq - 1}" in message, message


@pytest.mark.skipif(not IS_IVM, reason="rebuilds from tagged bases are the spark_ivm adapter's")
class TestTaggedBaseThatIsAView:
    """``base: tagged`` on a source that is a view: the first build fails naming the source and
    why, and writes nothing of the model."""

    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS[1:2], {"orders": 0}, base="tagged")

    def test_the_run_names_the_source(self, project):
        h = IvmHarness(project.test_schema, shop_inputs({"orders": 0}), base_kind="view")
        h.create_inputs()
        h.apply(BatchGenerator(h, 5).initial())
        results = run_dbt(["run"], expect_pass=False)
        message = str(results[0].message)
        assert "orders is declared base: tagged" in message and "Iceberg table" in message, message
        assert "orders_by_customer" not in list_tables(project.test_schema)
        drop_schema(state_schema(project.test_schema))
