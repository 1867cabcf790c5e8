"""A representative subset of the oracle suites of tests/functional/ivm, run through the Spark
Thrift Server: their own models, batch generator and oracle (the harness's SQL goes through
the server, see conftest.py), dbt over ``method: thrift``.

* a 3-way join (``star3``) and a join + GROUP BY with MIN/MAX/AVG (``agg_join_group``) under the
  nasty batch of their embedded suites (inserts, deletes, updates, duplicates, NULLs of every
  input; the seeded random batches after it run the same statements through the server);
* the chain of two incremental_ivm models (``TestIvmChain``);
* bad input: a delete of a row that is not there fails every model with a clear message and
  changes no snapshot; a valid batch afterwards is exact;
* Iceberg tables and a `table` model as inputs, read through their snapshots (the changelog
  procedure and its temp views live in the server's session of the dbt connection);
* maintenance (compaction and snapshot expiry through the server's procedures).
"""

import pytest

from tests.functional.ivm import test_ivm_aggregates as aggregates
from tests.functional.ivm import test_ivm_bad_input as bad_input
from tests.functional.ivm import test_ivm_chain as chain
from tests.functional.ivm import test_ivm_maintenance as maintenance
from tests.functional.ivm import test_ivm_oracle as oracle_suite
from tests.functional.ivm import test_ivm_snapshot_inputs as snapshot_inputs
from tests.functional.ivm.harness import (
    batch_outcomes,
    project_files,
)


def _model(models, name):
    return next(m for m in models if m.name == name)


JOIN_MODEL = _model(oracle_suite.MODELS, "star3")
AGG_MODEL = _model(aggregates.MODELS, "agg_join_group")
MODELS = [JOIN_MODEL, AGG_MODEL]
INPUTS = {"orders": 0, "customers": 0, "products": 0}
# the join suite's nasty batch
BATCH_PLAN = ["nasty"]


class TestThriftOracle:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        yield from batch_outcomes(project.test_schema, INPUTS, MODELS, oracle_suite.SEED, BATCH_PLAN,
                                  nasty_inputs=("orders", "customers", "products"))

    @pytest.mark.parametrize("model", [m.name for m in MODELS])
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])


class TestThriftChain(chain.TestIvmChain):
    """The embedded chain suite (first build, batches, ivm_matches_full_refresh passes, the empty
    batch is a noop, a corrupted target is detected), through the server. --full-refresh over
    thrift runs in the sample project's test; the race runs these models under more batches.
    Less, for CI time, the cases of the published changes' retention and of ``ivm_status``
    (120 s here): their statements are those the batches before them run through the server;
    the embedded suite keeps them."""

    test_full_refresh_same_contents = None
    test_incremental_after_full_refresh = None
    test_published_changes_follow_the_consumer = None
    test_consumer_back_after_its_changes_were_pruned_rebuilds = None
    test_ivm_status_reports_the_lag = None


class TestThriftBadInput(bad_input.TestIvmBadInput):
    """The embedded bad-input suite's delete of an absent row (every model refuses it, naming
    itself and the change table, no snapshot moves) and the valid batch after it; the other
    cases (an absent row that joins nothing, an absent value beside an insert into its group
    among them: 2 min here) differ only in what the validation statement counts."""

    test_delete_of_absent_row_that_joins_nothing = None
    test_delete_of_absent_value_beside_an_insert_into_its_group = None
    test_null_weight = None
    test_zero_weight = None
    test_late_write_into_the_past = None
    test_late_write_beside_a_valid_batch = None
    test_missing_column = None


class TestThriftSnapshotInputs(snapshot_inputs.TestIcebergTablesAsInputs):
    """The embedded suite of inputs read through their Iceberg snapshots: inserts, copy-on-write
    and merge-on-read deletes and updates, a MERGE, an overwrite less one copy, compaction and
    an expired snapshot, through the server."""


class TestThriftMaintenance(maintenance.TestMaintenance):
    """The embedded maintenance suite (compaction and expiry every 2nd sequence: bounded
    snapshots, a compacted log, exact results through incremental runs, a failure right after
    the maintenance), through the server. Less, for CI time, its rebuild case (137 s here) and its
    failure right after the maintenance (100 s): a rebuild maintains with the same statements an
    incremental run does, and a run's recovery is the same statements as embedded, both run
    through the server by the cases before them; the embedded suite keeps them."""

    test_rebuilds_maintain_too = None
    test_failure_after_maintenance_then_recovers = None
