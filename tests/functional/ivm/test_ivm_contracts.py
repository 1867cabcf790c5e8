"""dbt model contracts on incremental_ivm (`contract: {enforced: true}`): a model whose SELECT
has the contract's column names and Spark types builds and refreshes as usual; one whose types
differ fails with dbt's own contract error before anything is written — no target, no state."""

import pytest
from dbt.tests.util import run_dbt

from .harness import (
    IS_IVM,
    Model,
    list_tables,
    oracle_suite,
    project_files,
    run_and_compare,
    state_schema,
)

MODELS = [
    Model("order_totals", """
select c_id, count(*) as n, sum(amount) as total
from {orders}
group by c_id
"""),
    Model("order_totals_wrong_types", """
select c_id, count(*) as n, sum(amount) as total
from {orders}
group by c_id
"""),
]
INPUTS = {"orders": 0}

CONTRACTS = """
version: 2
models:
  - name: order_totals
    config:
      contract: {enforced: true}
    columns:
      - {name: c_id, data_type: int}
      - {name: n, data_type: bigint}
      - {name: total, data_type: "decimal(20,2)"}
  - name: order_totals_wrong_types
    config:
      contract: {enforced: true}
    columns:
      - {name: c_id, data_type: int}
      - {name: n, data_type: int}
      - {name: total, data_type: string}
"""


@pytest.mark.skipif(not IS_IVM, reason="the incremental_ivm materialization's contracts")
class TestContracts:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = project_files(unique_schema, MODELS, INPUTS, with_tests=False)
        files["schema.yml"] = CONTRACTS
        return files

    @pytest.fixture(scope="class")
    def ctx(self, project):
        yield from oracle_suite(project.test_schema, INPUTS, MODELS, 99)

    def test_a_kept_contract_builds_and_refreshes(self, project, ctx):
        h, gen = ctx["h"], ctx["gen"]
        h.apply(gen.initial())
        run_and_compare(ctx["oracle"], ["order_totals"], ("run", "--select", "order_totals"), label="first build")
        h.apply(gen.batch(["orders"]))
        run_and_compare(ctx["oracle"], ["order_totals"], ("run", "--select", "order_totals"), label="a batch")

    def test_a_broken_contract_fails_before_anything_is_written(self, project, ctx):
        results = run_dbt(["run", "--select", "order_totals_wrong_types"], expect_pass=False)
        message = str(results[0].message)
        assert "contract" in message and "total" in message, message
        assert "order_totals_wrong_types" not in list_tables(project.test_schema)
        assert not [t for t in list_tables(state_schema(project.test_schema)) if t.startswith("order_totals_wrong")]
