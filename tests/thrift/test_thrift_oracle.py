"""The oracle suite of tests/functional/ivm whose statements need the server's session, run
through the Spark Thrift Server: its own models, batch generator and oracle (the harness's SQL
goes through the server, see conftest.py), dbt over ``method: thrift``: Iceberg tables and a
`table` model as inputs, read through their snapshots (the changelog procedure and its temp
views live in the server's session of the dbt connection).

The other suites' refresh statements are the embedded session's, sent through dbt-spark's
thrift cursor; the sample project (test_thrift_sample_project.py: its ten models of joins,
aggregates, windows and a chain, each checked against its full recompute after every batch)
and the race of two dbt processes over a chain (test_thrift_race.py: the lock row) send them
through the server. Maintenance's statements there that the embedded session does not run
(the metadata-table probe and the ``expire_snapshots`` procedure, where the embedded session
uses Iceberg's catalog and table API) run on the embedded session in test_session.py's catalog
agreement test; compaction is the same ``rewrite_data_files`` procedure on both.
The 3-way join and aggregate oracle, the chain, the bad-input and the maintenance suites ran
here too, until the tier took 37 min of a slow machine's CI (17 of them theirs).
"""

from tests.functional.ivm import test_ivm_snapshot_inputs as snapshot_inputs


class TestThriftSnapshotInputs(snapshot_inputs.TestIcebergTablesAsInputs):
    """The embedded suite of inputs read through their Iceberg snapshots, through the server:
    the first build at a snapshot, inserts, copy-on-write and merge-on-read deletes and updates
    (the changelog procedure's temp views, in the server's session) and a compaction. Its MERGE,
    overwrite and expired-snapshot cases read their changes through the same statements and run
    in the embedded suite only, for CI time."""

    READ_BY = ("changelog", "difference")  # the server's session has no file reader (iceberg_files.py)
    test_merge = None
    test_an_overwrite_that_removes_one_of_equal_rows = None
    test_an_expired_consumed_snapshot_rebuilds = None


from tests.functional.ivm import test_ivm_held_groups as held_groups  # noqa: E402


class TestThriftHeldGroups(held_groups.TestIvmHeldGroups):
    """The suite of aggregates whose targets hold their group states, through the server: a
    rebuild's target that fails at a group with a NULL or an overflowed sum (``raise_error``,
    recognized in the error the server returns), a run's change that does, the rebuild with the
    group state apart, killed after its target and recovered."""
