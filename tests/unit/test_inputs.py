"""Where each input of a model gets its changes from (``ivm_inputs.resolve_inputs``, SPEC §2), from dbt's graph:
a declared change table, another incremental_ivm model, Iceberg snapshots, and — for anything else — a
difference against the model's copy."""

from dbt.adapters.spark_ivm.ivm_inputs import (
    CHANGE_TABLE,
    DIFFED,
    IVM_MODEL,
    SNAPSHOTS,
    VIEW,
    Invocation,
    find_consumers,
    resolve_inputs,
    with_inner,
)


def node(name: str, materialized: str, resource_type: str = "model", depends_on=(), file_format=None) -> dict:
    config = {"materialized": materialized}
    if file_format:
        config["file_format"] = file_format
    return {"resource_type": resource_type, "name": name, "schema": "dev", "config": config,
            "depends_on": {"nodes": list(depends_on)}}


GRAPH = {
    "sources": {
        "source.p.raw.orders": {"schema": "raw", "name": "orders", "source_meta": {},
                                "meta": {"ivm": {"changes": "orders_changes"}}},
        "source.p.raw.customers": {"schema": "raw", "name": "customers", "meta": {}},
        "source.p.raw.regions": {"schema": "raw", "name": "regions", "meta": {"ivm": {"changes": "snapshots"}}},
    },
    "nodes": {
        "model.p.upstream": node("upstream", "incremental_ivm"),
        "model.p.a_view": node("a_view", "view"),
        "model.p.a_table": node("a_table", "table"),
        "model.p.a_parquet_table": node("a_parquet_table", "table", file_format="parquet"),
        "seed.p.a_seed": node("a_seed", "seed", resource_type="seed"),
        "model.p.inlined": node("inlined", "ephemeral", depends_on=["model.p.a_view"]),
    },
}


def test_each_input_gets_its_change_source():
    model = node("m", "incremental_ivm", depends_on=[
        "source.p.raw.orders", "source.p.raw.customers", "source.p.raw.regions", "model.p.upstream",
        "model.p.a_view", "model.p.a_table", "model.p.a_parquet_table", "seed.p.a_seed", "model.p.inlined"])
    kinds = {i.key: i.kind for i in resolve_inputs(model, GRAPH)}
    assert kinds == {
        "raw.orders": CHANGE_TABLE,
        "raw.customers": SNAPSHOTS,  # diffed instead if it turns out not to be Iceberg (refresh.context)
        "raw.regions": SNAPSHOTS,
        "dev.upstream": IVM_MODEL,
        "dev.a_view": VIEW,  # inlined by the run (refresh/views.py); also reached through the ephemeral model, once
        "dev.a_table": SNAPSHOTS,
        "dev.a_parquet_table": DIFFED,
        "dev.a_seed": SNAPSHOTS,
    }


def test_a_diffed_input_says_what_it_is_and_stages_its_difference_apart():
    inputs = {i.key: i for i in resolve_inputs(node("m", "incremental_ivm", depends_on=["model.p.a_view"]), GRAPH)}
    view = inputs["dev.a_view"]
    assert view.base == "`dev`.`a_view`" and "view" in view.what
    other = resolve_inputs(node("n", "incremental_ivm", depends_on=["model.p.a_view"]), GRAPH)[0]
    assert view.changes != other.changes  # each model's run stages its own temp view


def deferred(name: str, materialized: str) -> dict:
    n = node(name, materialized)
    n["defer_relation"] = {"schema": "prod", "alias": name, "name": name, "resource_type": "model",
                           "config": {"materialized": materialized}}
    return n


DEFERRED_GRAPH = {"sources": {}, "nodes": {"model.p.up": deferred("up", "incremental_ivm"),
                                            "model.p.v": deferred("v", "view")}}


def test_a_deferred_node_is_read_where_refs_read_it():
    """Under ``--defer`` dbt's ``ref`` may read a node's relation in the ``--state`` environment: the input is
    the relation the SQL names — an incremental_ivm model's target there read through its snapshots (its
    published changes are that environment's), a view there diffed."""
    model = node("m", "incremental_ivm", depends_on=["model.p.up", "model.p.v"])
    model["compiled_code"] = "select * from `prod`.`up` u join prod.v on u.a = v.a"
    inputs = {i.key: i for i in resolve_inputs(model, DEFERRED_GRAPH)}
    assert {k: i.kind for k, i in inputs.items()} == {"prod.up": SNAPSHOTS, "prod.v": DIFFED}
    assert inputs["prod.up"].base == "`prod`.`up`"
    model["compiled_code"] = "select * from dev.up u join dev.v on u.a = v.a"  # built in dev: not deferred
    assert {i.key: i.kind for i in resolve_inputs(model, DEFERRED_GRAPH)} == {"dev.up": IVM_MODEL, "dev.v": VIEW}


def test_a_consumer_rebuilds_when_the_invocation_selects_it_with_a_full_refresh():
    """``find_consumers`` marks a reader the invocation rebuilds after its upstream (selected, and
    its ``full_refresh`` config — else ``--full-refresh`` — true): a rebuild of the upstream
    then publishes nothing for it (refresh/rebuild.py)."""
    def reader(name: str, full_refresh=None) -> dict:
        n = node(name, "incremental_ivm", depends_on=["model.p.upstream"])
        n["unique_id"] = f"model.p.{name}"
        if full_refresh is not None:
            n["config"]["full_refresh"] = full_refresh
        return n

    graph = {"sources": {}, "nodes": {"model.p.upstream": node("upstream", "incremental_ivm"),
                                      "model.p.r1": reader("r1"), "model.p.r2": reader("r2", full_refresh=False),
                                      "model.p.r3": reader("r3", full_refresh=True)}}

    def rebuilding(selected, flag):
        return {c.name for c in find_consumers(graph, "dev", "upstream", Invocation(frozenset(selected), flag))
                if c.rebuilds}

    everything = {"model.p.upstream", "model.p.r1", "model.p.r2", "model.p.r3"}
    assert {c.name for c in find_consumers(graph, "dev", "upstream")} == {"r1", "r2", "r3"}
    assert rebuilding(everything, True) == {"r1", "r3"}  # r2's config keeps it incremental
    assert rebuilding(everything, False) == {"r3"}  # r3's config rebuilds it on every run
    assert rebuilding({"model.p.upstream", "model.p.r2"}, True) == set()  # r1 not selected
    assert rebuilding(set(), True) == set()  # an operation, or a model read outside the selection


VIEW_GRAPH = {
    "sources": GRAPH["sources"],
    "nodes": {
        "model.p.upstream": node("upstream", "incremental_ivm"),
        "model.p.a_table": node("a_table", "table"),
        "model.p.stg_orders": node("stg_orders", "view", depends_on=["source.p.raw.orders", "model.p.a_table"]),
        "model.p.eph": node("eph", "ephemeral", depends_on=["model.p.upstream"]),
        "model.p.over_views": node("over_views", "view", depends_on=["model.p.stg_orders", "model.p.eph"]),
        "model.p.mart": node("mart", "incremental_ivm", depends_on=["model.p.over_views", "source.p.raw.customers"]),
    },
}


def test_a_view_holds_its_own_inputs_resolved_as_the_models():
    """SPEC §2.4: a ``ref`` to a dbt view is a VIEW the run inlines; its own inputs (through ephemeral models and
    other views) are resolved from its ``depends_on`` exactly as the model's are."""
    inputs = resolve_inputs(VIEW_GRAPH["nodes"]["model.p.mart"], VIEW_GRAPH)
    assert [(i.key, i.kind) for i in inputs] == [("dev.over_views", VIEW), ("raw.customers", SNAPSHOTS)]
    over = inputs[0]
    assert over.base == "`dev`.`over_views`" and over.what == "model over_views (view)" and over.view_sql == ""
    assert [(i.key, i.kind) for i in over.inner] == [("dev.stg_orders", VIEW), ("dev.upstream", IVM_MODEL)]
    assert [(i.key, i.kind) for i in over.inner[0].inner] == [("raw.orders", CHANGE_TABLE), ("dev.a_table", SNAPSHOTS)]
    assert [i.key for i in with_inner(inputs)] == [
        "dev.over_views", "dev.stg_orders", "raw.orders", "dev.a_table", "dev.upstream", "raw.customers"]


def test_a_view_carries_its_compiled_sql_when_the_graph_has_it():
    graph = {"sources": {}, "nodes": {"model.p.v": {**node("v", "view"), "compiled_code": "select 1 as a"}}}
    (view,) = resolve_inputs(node("m", "incremental_ivm", depends_on=["model.p.v"]), graph)
    assert (view.kind, view.view_sql) == (VIEW, "select 1 as a")


def test_a_model_read_through_a_view_has_its_consumer():
    (consumer,) = find_consumers(VIEW_GRAPH, "dev", "upstream")
    assert (consumer.name, consumer.key) == ("mart", "dev.upstream")
