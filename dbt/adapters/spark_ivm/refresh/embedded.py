"""The embedded session (the ``session`` connection method) as a run reaches it from a dbt
thread: through the JVM it runs in, with no SQL statement — its Iceberg catalog (metadata.py)
and its SQL settings (``set_conf``, ``reset_conf``: ~1 ms against ~25 ms for a ``SET`` or
``RESET`` statement, parsed, analyzed and logged as any other)."""

from __future__ import annotations

import os
import threading
from typing import Any

from dbt.adapters.spark.connections import SparkConnectionMethod


def is_embedded(adapter: Any) -> bool:
    """Whether the adapter's connection is the embedded session (not ``thrift``, ``http``)."""
    credentials = getattr(getattr(adapter, "config", None), "credentials", None)
    return getattr(credentials, "method", None) == SparkConnectionMethod.SESSION


_THREAD = threading.local()  # the session this thread made active in its JVM thread


def session() -> Any:
    """The process's SparkSession (the one the connection opened), active in this thread's JVM
    thread: a dbt thread's has none, and Iceberg's session catalog then answers the Spark
    catalog's V1 table, not its own (seen on Iceberg 1.10). PySpark pins each Python thread to
    a JVM thread, so each thread makes it active once — and again when the session it made
    active was lost (its JVM exited: the connection's next session is a new one)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from dbt.adapters.spark_ivm.connections import last_session, session_loss

    spark: Any = getattr(_THREAD, "session", None)
    if spark is not None and session_loss(spark) is None:
        return spark
    spark = last_session()
    if spark is None:  # no statement of the connection ran yet (never: the run's statements opened it)
        if SparkContext._active_spark_context is None:
            raise RuntimeError("no SparkSession in this process")
        spark = SparkSession.builder.getOrCreate()
    java_class(spark, "org.apache.spark.sql.SparkSession").setActiveSession(spark._jsparkSession)
    if os.environ.get("PYSPARK_PIN_THREAD", "true").lower() == "true":  # (PySpark's default)
        _THREAD.session = spark
    return spark


def java_class(spark: Any, name: str) -> Any:
    """The JVM class of full name ``name``. Named so, py4j asks the JVM nothing; reached as
    ``spark._jvm.org.apache...`` it asks once per dot whether that prefix is a class, and each
    prefix that is not has the JVM search every jar of its class path (~3 ms a name)."""
    from py4j.java_gateway import JavaClass

    return JavaClass(name, spark._jvm._gateway_client)


def set_conf(key: str, value: str) -> None:
    """``SET key=value`` in the session."""
    session().conf.set(key, value)


def reset_conf(key: str) -> None:
    """``RESET key`` in the session, as Spark's ``ResetCommand`` does it: the value the session
    was built with (its builder's options, else the shared Spark configuration), else none."""
    spark = session()
    spark.conf.unset(key)
    jsession = spark._jsparkSession
    initial = jsession.initialSessionOptions().get(key)
    if not initial.isDefined():
        initial = jsession.sharedState().conf().getOption(key)
    if initial.isDefined():
        spark.conf.set(key, initial.get())
