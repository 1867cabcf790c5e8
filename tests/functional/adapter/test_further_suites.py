"""dbt-tests-adapter's further suites against `type: spark_ivm`, `method: session`.

dbt-spark runs few of these for its session profile (its constraints and persist_docs suites
need Delta). spark_ivm defaults tables to Iceberg, so most apply; where a suite is written in
Postgres' SQL, the fixtures below say the same in Spark's. Not run, and why:

- BaseTestEmptySeedFlag: `dbt seed --empty` is newer than the dbt-core this adapter pins (1.11).
- The contract SQL-header suites: their header is a statement (`set session time zone ...`)
  and Spark runs one statement per call, in dbt-spark as here.
- The constraint DDL/rollback suites: Spark enforces no constraint on Iceberg tables (dbt-spark
  warns and creates the table), so there is no DDL to compare nor failing insert to roll back.
- BaseDocsGenerate/BaseDocsGenReferences: their expected catalog is Postgres'; the catalog of
  spark_ivm (its companion tables) is tested in ivm/test_ivm_chain.py, its comments below.
"""

import pytest
from dbt.tests.adapter.caching.test_caching import (
    BaseCachingLowercaseModel,
    BaseCachingSelectedSchemaOnly,
    BaseCachingUppercaseModel,
    BaseNoPopulateCache,
)
from dbt.tests.adapter.concurrency.test_concurrency import BaseConcurrency
from dbt.tests.adapter.constraints import fixtures as constraint_fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintsColumnsEqual,
    BaseIncrementalConstraintsColumnsEqual,
    BaseTableConstraintsColumnsEqual,
    BaseViewConstraintsColumnsEqual,
)
from dbt.tests.adapter.empty.test_empty import BaseTestEmpty, BaseTestEmptyInlineSourceRef
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChangeSetup,
)
from dbt.tests.adapter.persist_docs.test_persist_docs import (
    BasePersistDocs,
    BasePersistDocsAllColumnsMissing,
    BasePersistDocsColumnMissing,
    BasePersistDocsCommentOnQuotedColumn,
    BasePersistDocsQuotedColumnCaseSensitive,
    BasePersistDocsQuotedDescriptionNotAppliedOnMismatch,
)
from dbt.tests.util import run_dbt

# --- caching ---------------------------------------------------------------------------------


class SparkCaching:
    """The suite's check with Spark's relations, which have no database (None): the relation a
    model's run put in the cache and the one the next run's cache population found name the
    same schema and table."""

    def run_and_inspect_cache(self, project, run_args=None):
        cached = []
        for _ in range(2):
            run_dbt(run_args)
            relations = list(project.adapter.cache.relations)
            assert len(relations) == 1
            cached.append(relations[0])
        first, second = cached
        assert first.schema == project.test_schema.lower()
        assert first.database is None and second.database is None
        for key in ("schema", "identifier"):
            assert getattr(first, key).lower() == getattr(second, key).lower()


class TestCachingLowercaseModel(SparkCaching, BaseCachingLowercaseModel):
    pass


class TestCachingUppercaseModel(SparkCaching, BaseCachingUppercaseModel):
    pass


class TestCachingSelectedSchemaOnly(SparkCaching, BaseCachingSelectedSchemaOnly):
    pass


class TestNoPopulateCache(SparkCaching, BaseNoPopulateCache):
    pass


# --- concurrency -----------------------------------------------------------------------------


class TestConcurrency(BaseConcurrency):
    pass


# --- contracts: column names and Spark types checked before anything is written --------------

# the suite's schema files declare Postgres' `text`; Spark's name for it is `string`
_SPARK_MODEL_SCHEMA_YML = constraint_fixtures.model_schema_yml.replace("data_type: text", "data_type: string")


class SparkTypes(BaseConstraintsColumnsEqual):
    """Spark's type names, as its mismatch table prints them, and the suite's models (the
    materialization's two, set by each class) with a schema file in those names."""

    wrong_order_sql: str
    wrong_name_sql: str

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": self.wrong_order_sql,
            "my_model_wrong_name.sql": self.wrong_name_sql,
            "constraints_schema.yml": _SPARK_MODEL_SCHEMA_YML,
        }

    @pytest.fixture
    def string_type(self):
        return "string"

    @pytest.fixture
    def int_type(self):
        return "int"

    @pytest.fixture
    def data_types(self):
        # SQL value, the type a contract declares, the type the mismatch table names
        return [
            ["1", "int", "int"],
            ["'1'", "string", "string"],
            ["true", "boolean", "boolean"],
            ["timestamp'2013-11-03 00:00:00'", "timestamp", "timestamp"],
            ["array('a','b','c')", "array<string>", "array<string>"],
            ["array(1,2,3)", "array<int>", "array<int>"],
            ["cast(1 as decimal(10,2))", "decimal(10,2)", "decimal(10,2)"],
            ["map('a', 1)", "map<string,int>", "map<string,int>"],
        ]


class TestTableConstraintsColumnsEqual(SparkTypes, BaseTableConstraintsColumnsEqual):
    wrong_order_sql = constraint_fixtures.my_model_wrong_order_sql
    wrong_name_sql = constraint_fixtures.my_model_wrong_name_sql


class TestViewConstraintsColumnsEqual(SparkTypes, BaseViewConstraintsColumnsEqual):
    wrong_order_sql = constraint_fixtures.my_model_view_wrong_order_sql
    wrong_name_sql = constraint_fixtures.my_model_view_wrong_name_sql


class TestIncrementalConstraintsColumnsEqual(SparkTypes, BaseIncrementalConstraintsColumnsEqual):
    wrong_order_sql = constraint_fixtures.my_model_incremental_wrong_order_sql
    wrong_name_sql = constraint_fixtures.my_model_incremental_wrong_name_sql


def _as_incremental_ivm(model_sql: str) -> str:
    assert 'materialized = "incremental"' in model_sql
    return model_sql.replace('materialized = "incremental"', 'materialized = "incremental_ivm"')


class TestIncrementalIvmConstraintsColumnsEqual(SparkTypes):
    """The same suite on incremental_ivm models (its data-type cases write `table` models)."""

    wrong_order_sql = _as_incremental_ivm(constraint_fixtures.my_model_incremental_wrong_order_sql)
    wrong_name_sql = _as_incremental_ivm(constraint_fixtures.my_model_incremental_wrong_name_sql)


# --- dbt run --empty ---------------------------------------------------------------------------


class TestEmpty(BaseTestEmpty):
    pass


class TestEmptyInlineSourceRef(BaseTestEmptyInlineSourceRef):
    pass


# --- persist_docs: comments written, and read back into catalog.json ---------------------------


class TestPersistDocs(BasePersistDocs):
    pass


class TestPersistDocsColumnMissing(BasePersistDocsColumnMissing):
    pass


class TestPersistDocsAllColumnsMissing(BasePersistDocsAllColumnsMissing):
    pass


class TestPersistDocsQuotedColumnCaseSensitive(BasePersistDocsQuotedColumnCaseSensitive):
    pass


class TestPersistDocsQuotedDescriptionNotAppliedOnMismatch(
    BasePersistDocsQuotedDescriptionNotAppliedOnMismatch
):
    pass


class TestPersistDocsCommentOnQuotedColumn(BasePersistDocsCommentOnQuotedColumn):
    pass


# --- on_schema_change of dbt's incremental materialization on Iceberg -------------------------


class TestIncrementalOnSchemaChange(BaseIncrementalOnSchemaChangeSetup):
    """The suite less one case: a column removed from the SELECT under `append_new_columns`
    fails in dbt-spark's insert (it selects the target's columns from the new rows), which
    spark_ivm keeps as dbt-spark has it. `sync_all_columns` drops the removed columns of an
    Iceberg table (dbt-spark refused it for every format)."""

    def test_run_incremental_ignore(self, project):
        self.run_twice_and_assert(
            "model_a incremental_ignore incremental_ignore_target",
            "incremental_ignore",
            "incremental_ignore_target",
            project,
        )

    def test_run_incremental_append_new_columns(self, project):
        self.run_incremental_append_new_columns(project)

    def test_run_incremental_sync_all_columns(self, project):
        self.run_incremental_sync_all_columns(project)
        self.run_incremental_sync_remove_only(project)

    def test_run_incremental_fail_on_schema_change(self, project):
        run_dbt(["run", "--models", "model_a incremental_fail", "--full-refresh"])
        results = run_dbt(["run", "--models", "model_a incremental_fail"], expect_pass=False)
        assert "Compilation Error" in results[1].message
