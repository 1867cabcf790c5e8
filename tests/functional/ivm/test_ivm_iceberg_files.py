"""Plain Iceberg inputs read by the data files their change touched (iceberg_files.py, the
embedded session): merge-on-read tables of format v2 (position delete files) and v3 (deletion
vectors) and a copy-on-write v3 table, each written in several files, changed by DELETE, UPDATE,
MERGE and INSERT with duplicates and NULLs and by an equality delete file, compacted and their
deletes rewritten between runs.
Every run is incremental, equals the full recompute, and reads only the files its change touched
(``inputs_read`` in the run's result): a delete from one file reads that file at both snapshots,
never the table's other files; a compaction reads nothing. The methods run in order, on one
project."""

import random

import pytest

from . import test_ivm_snapshot_inputs as snapshot_inputs
from .harness import (
    IS_IVM,
    Model,
    Oracle,
    adapter_response,
    drop_schema,
    models_files,
    run_and_compare,
    spark,
    sql,
    state_schema,
)

INCREMENTAL = {"ivm_policy": "incremental"}
MODELS = [
    Model("orders_by_customer",
          "select c_id, count(*) as n, sum(amount) as total, max(odate) as last_date from {orders} group by c_id",
          ivm_config=INCREMENTAL),
    Model("order_lines", """
select o.o_id, o.amount, c.name, p.pname
from {orders} o join {customers} c on o.c_id = c.c_id left join {products} p on o.p_id = p.p_id
""", ivm_config=INCREMENTAL),
]
NAMES = [m.name for m in MODELS]
MOR = "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"
PROPERTIES = {  # orders: deletion vectors; customers: position delete files; products: rewritten files
    "orders": f"'format-version'='3', {MOR}",
    "customers": f"'format-version'='2', {MOR}",
    "products": "'format-version'='3'",
}


class Tables(snapshot_inputs.Tables):
    def __init__(self, schema: str, seed: int):
        super().__init__(schema, seed, PROPERTIES)

    def data_files(self, name: str) -> int:
        return sql(f"SELECT count(*) FROM {self.fq(name)}.data_files").collect()[0][0]

    def only_in_one_file(self, name: str, key: str) -> str:
        """A condition selecting the rows of one data file of ``name`` whose ``key`` no other of
        its files holds (the file with most such keys)."""
        t = self.fq(name)
        rows = sql(f"""SELECT file, collect_list({key}) FROM (
  SELECT {key}, min(_file) AS file FROM {t} WHERE {key} IS NOT NULL GROUP BY {key} HAVING count(DISTINCT _file) = 1
) GROUP BY file ORDER BY size(collect_list({key})) DESC LIMIT 1""").collect()
        assert rows, f"every key of {name} is in two files"
        return f"{key} IN ({', '.join(str(k) for k in rows[0][1])})"


def write_equality_delete(table: str, column: str, value: int) -> None:
    """Commit to ``table`` an equality delete file that deletes its rows whose ``column`` (an
    int) is ``value``, through Iceberg's Java API in this process's session."""
    from py4j.java_gateway import JavaClass

    session = spark()
    gateway = session.sparkContext._gateway

    def java(name):
        return JavaClass(name, gateway._gateway_client)

    iceberg = java("org.apache.iceberg.spark.Spark3Util").loadIcebergTable(session._jsparkSession, table)
    schema = iceberg.schema()
    names = session._jvm.java.util.ArrayList()
    names.add(column)
    delete_schema = schema.select(names)
    field_ids = gateway.new_array(session._jvm.int, 1)
    field_ids[0] = schema.findField(column).fieldId()
    factory = java("org.apache.iceberg.data.GenericAppenderFactory")(schema, iceberg.spec(), field_ids, delete_schema,
                                                                     None)
    path = f"{iceberg.location()}/data/equality-delete-{column}-{value}.parquet"
    writer = factory.newEqDeleteWriter(iceberg.encryption().encrypt(iceberg.io().newOutputFile(path)),
                                       java("org.apache.iceberg.FileFormat").PARQUET, None)
    record = java("org.apache.iceberg.data.GenericRecord").create(delete_schema)
    record.setField(column, value)
    writer.write(record)
    writer.close()
    iceberg.newRowDelta().addDeletes(writer.toDeleteFile()).commit()


def reads(project, model: str, schema: str, table: str) -> dict:
    read = adapter_response(project.project_root, model).get("inputs_read") or {}
    return read.get(f"{schema}.{table}", {})


@pytest.mark.skipif(not IS_IVM, reason="Iceberg inputs are the spark_ivm adapter's")
class TestInputsReadByTheirFiles:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = models_files(MODELS)
        files["sources.yml"] = f"""version: 2
sources:
  - name: raw
    schema: {unique_schema}
    tables: [{{name: orders}}, {{name: customers}}, {{name: products}}]
"""
        return files

    @pytest.fixture(scope="class")
    def ctx(self, project):
        tables = Tables(project.test_schema, 11)
        tables.create()
        yield {"t": tables, "oracle": Oracle(tables.h, MODELS)}
        drop_schema(state_schema(project.test_schema))

    def check(self, ctx, label: str) -> None:
        run_and_compare(ctx["oracle"], NAMES, label=label)

    def test_first_build(self, project, ctx):
        t = ctx["t"]
        for _ in range(6):  # six files each
            t.insert("orders", 12, duplicates=2)
            t.insert("customers", 3)
            t.insert("products", 2)
        assert t.data_files("orders") == 6
        run_and_compare(ctx["oracle"], NAMES, label="first build", rebuilds=NAMES)

    def test_a_delete_reads_the_file_it_deleted_from(self, project, ctx):
        """One file of orders loses rows to a deletion vector, one of customers to a position
        delete file: each change reads that file at both snapshots, and nothing else."""
        t = ctx["t"]
        sql(f"DELETE FROM {t.fq('orders')} WHERE {t.only_in_one_file('orders', 'o_id')}")
        sql(f"DELETE FROM {t.fq('customers')} WHERE {t.only_in_one_file('customers', 'c_id')}")
        assert sql(f"SELECT count(*) FROM {t.fq('orders')}.delete_files").collect()[0][0] >= 1
        self.check(ctx, "mor deletes")
        schema = project.test_schema
        for model in NAMES:
            orders = reads(project, model, schema, "orders")
            assert orders["how"] == "files" and orders["files"] == 2 and orders["delete_files"] >= 1, orders
            assert orders["rows"] <= 2 * 14, orders  # the one file of 14 rows, read at both ends
        customers = reads(project, "order_lines", schema, "customers")
        assert customers["how"] == "files" and customers["files"] == 2, customers

    def test_updates_merges_and_inserts(self, project, ctx):
        t = ctx["t"]
        sql(f"UPDATE {t.fq('orders')} SET amount = amount + 1, c_id = coalesce(c_id, 0) + 1 WHERE o_id % 5 = 1")
        sql(f"UPDATE {t.fq('customers')} SET name = 'renamed' WHERE c_id % 2 = 0")
        sql(f"DELETE FROM {t.fq('products')} WHERE p_id % 3 = 0")  # copy-on-write: rewrites its files
        sql(f"""MERGE INTO {t.fq('orders')} AS o
USING (SELECT * FROM VALUES (1, 'd'), (2, 'u'), (3, 'u'), (4000, 'i') AS s(id, op)) AS s ON o.o_id = s.id
WHEN MATCHED AND s.op = 'd' THEN DELETE
WHEN MATCHED THEN UPDATE SET o.amount = 99.50, o.note = 'merged'
WHEN NOT MATCHED THEN INSERT (o_id, c_id, p_id, amount, status, odate, note)
  VALUES (s.id, NULL, 3, 42.00, 'open', DATE'2024-02-02', NULL)""")
        t.insert("orders", 5, duplicates=2)
        self.check(ctx, "updates, merge, inserts")
        products = reads(project, "order_lines", project.test_schema, "products")
        assert products["how"] == "files", products

    def test_equality_deletes(self, project, ctx):
        """An equality delete file (as Flink and other writers commit them; Spark writes none) that
        deletes every customer of one ``c_id`` from the files written before it."""
        t = ctx["t"]
        c_id = sql(f"SELECT c_id FROM {t.fq('customers')} WHERE c_id IS NOT NULL GROUP BY c_id "
                   "ORDER BY count(*) DESC, c_id LIMIT 1").collect()[0][0]
        write_equality_delete(f"{project.test_schema}.customers", "c_id", c_id)
        assert sql(f"SELECT count(*) FROM {t.fq('customers')} WHERE c_id = {c_id}").collect()[0][0] == 0
        self.check(ctx, "equality delete")
        customers = reads(project, "order_lines", project.test_schema, "customers")
        assert customers["how"] == "files" and customers["delete_files"] >= 1, customers

    def test_rewritten_deletes_and_a_compaction_read_nothing(self, project, ctx):
        t = ctx["t"]
        schema = project.test_schema
        sql(f"CALL spark_catalog.system.rewrite_position_delete_files(table => '{schema}.customers', "
            "options => map('rewrite-all', 'true'))")
        sql(f"CALL spark_catalog.system.rewrite_data_files(table => '{schema}.orders', "
            "options => map('min-input-files', '1', 'rewrite-all', 'true'))")
        assert t.data_files("orders") == 1
        self.check(ctx, "compactions")
        for model in NAMES:
            response = adapter_response(project.project_root, model)
            assert (response.get("rows_inserted"), response.get("rows_deleted")) == (0, 0), response
            for table, read in (response.get("inputs_read") or {}).items():  # (absent: nothing to read)
                assert read["files"] == 0, (model, table, read)

    def test_random_batches(self, project, ctx):
        """Random DELETE, UPDATE, MERGE and INSERT batches over all three tables, a run after each."""
        t = ctx["t"]
        rng = random.Random(5)
        for batch in range(4):
            for name, key in (("orders", "o_id"), ("customers", "c_id"), ("products", "p_id")):
                m = rng.randint(2, 5)
                op = rng.choice(["delete", "update", "merge", "insert"])
                if op == "delete":
                    sql(f"DELETE FROM {t.fq(name)} WHERE {key} % {m} = {rng.randint(0, m - 1)}")
                elif op == "update":
                    other = {"orders": "amount = amount * 2", "customers": "name = concat(name, 'x')",
                             "products": "category = NULL"}[name]
                    sql(f"UPDATE {t.fq(name)} SET {other} WHERE {key} % {m} = 0 OR {key} IS NULL")
                elif op == "merge":
                    picked = f"SELECT DISTINCT {key} FROM {t.fq(name)} WHERE {key} % {m} = 1"
                    sql(f"""MERGE INTO {t.fq(name)} AS x USING ({picked}) AS s
ON x.{key} = s.{key} WHEN MATCHED AND x.{key} % 2 = 0 THEN DELETE""")
                t.insert(name, rng.randint(1, 4), duplicates=1)
            self.check(ctx, f"batch {batch}")
