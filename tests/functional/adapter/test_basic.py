"""dbt-tests-adapter's basic suites against `type: spark_ivm`, `method: session`.

Compared with dbt-spark's own tests/functional/adapter/test_basic.py, no suite needs an
override here: dbt-spark skips the two snapshot suites for its session profile because they
need a table format that supports MERGE (it configures delta, unavailable offline), while
spark_ivm defaults every table-building node to Iceberg.
"""

from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp


class TestSimpleMaterializationsSparkIvm(BaseSimpleMaterializations):
    pass


class TestSingularTestsSparkIvm(BaseSingularTests):
    pass


class TestEmptySparkIvm(BaseEmpty):
    pass


class TestEphemeralSparkIvm(BaseEphemeral):
    pass


class TestIncrementalSparkIvm(BaseIncremental):
    pass


class TestGenericTestsSparkIvm(BaseGenericTests):
    pass


class TestSnapshotCheckColsSparkIvm(BaseSnapshotCheckCols):
    pass


class TestSnapshotTimestampSparkIvm(BaseSnapshotTimestamp):
    pass


class TestBaseAdapterMethodSparkIvm(BaseAdapterMethod):
    pass
