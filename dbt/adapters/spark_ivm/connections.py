"""Credentials and connection manager for the ``spark_ivm`` adapter.

Everything here extends dbt-spark. The only behavioural differences are for
``method: session`` (the default):

* ``host`` is not required;
* the embedded SparkSession is configured for Apache Iceberg with a Hive/Derby
  metastore whose files all live under ``session_dir`` (default
  ``<dbt project dir>/.spark_ivm``), never in the current working directory;
* its driver heap is sized for the machine (``default_driver_memory``), and the profile's
  ``server_side_parameters: {spark.driver.memory: ...}`` overrides it;
* the user's ``server_side_parameters`` win over those defaults;
* a statement that finds the session lost (its JVM exited, its SparkContext shut down) fails
  saying so, and the next statement starts a new session (a new JVM): see docs/session.md.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shlex
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt_common.exceptions import DbtRuntimeError

logger = AdapterLogger("SparkIvm")

DEFAULT_SESSION_DIR_NAME = ".spark_ivm"
SESSION_HOST_PLACEHOLDER = "session"


def _project_dir() -> str:
    """The dbt project directory of this invocation (absolute), else the cwd."""
    project_dir: Optional[str] = None
    try:
        from dbt.flags import get_flags

        project_dir = getattr(get_flags(), "PROJECT_DIR", None)
    except Exception:  # pragma: no cover - flags not set (library use)
        project_dir = None
    return os.path.abspath(project_dir or os.getcwd())


def resolve_session_dir(session_dir: Optional[str]) -> str:
    """Absolute session directory; relative paths are taken from the project dir."""
    if not session_dir:
        return os.path.join(_project_dir(), DEFAULT_SESSION_DIR_NAME)
    expanded = os.path.expanduser(session_dir)
    if os.path.isabs(expanded):
        return os.path.normpath(expanded)
    return os.path.normpath(os.path.join(_project_dir(), expanded))


def iceberg_jar_path() -> str:
    """Path of the Iceberg Spark runtime jar shipped by snowpark-connect-deps-iceberg."""
    spec = importlib.util.find_spec("snowpark_connect_deps_iceberg")
    if spec is None or not spec.submodule_search_locations:
        raise DbtRuntimeError(
            "The Iceberg runtime jar package `snowpark-connect-deps-iceberg` is not installed; "
            "reinstall dbt-spark-ivm (it pins snowpark-connect-deps-iceberg==1.0.2)."
        )
    jars = []
    for location in spec.submodule_search_locations:
        jars.extend(glob.glob(os.path.join(location, "jars", "iceberg-spark-runtime-3.5_2.12-*.jar")))
    if not jars:
        raise DbtRuntimeError(
            "No iceberg-spark-runtime jar for Spark 3.5 / Scala 2.12 found in the "
            "snowpark_connect_deps_iceberg package."
        )
    # The 1.0.2 package ships runtime and extensions jars for Scala 2.12 and 2.13; the runtime
    # jar is complete (it contains the SQL extensions) and pyspark 3.5 is built for Scala 2.12.
    return sorted(jars)[-1]


# --- the driver heap ----------------------------------------------------------------------------

HEAP_KEY = "spark.driver.memory"
MiB = 1 << 20
GiB = 1 << 30
#: the heap the machine's memory is not enough for (Spark's own default)
MIN_HEAP = 1 * GiB
#: memory left to the OS (and its page cache, which Spark's shuffle and Parquet writes go
#: through), the Python process (dbt) and the JVM's memory beyond its heap (metaspace, threads,
#: direct buffers), on top of the half of the machine the heap leaves
RESERVED = 4 * GiB
#: above ~32 GiB the JVM can no longer compress its object pointers: a 33 GiB heap holds less
#: than a 31 GiB one
MAX_HEAP = 31 * GiB

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)
_UNIT = {"": MiB, "k": 1 << 10, "m": MiB, "g": GiB, "t": 1 << 40}


def parse_memory(value: Any) -> Optional[int]:
    """Bytes of a JVM memory size as Spark reads ``spark.driver.memory`` (``8g``, ``4096m``,
    ``512M``; a bare number is MiB), else None."""
    match = _SIZE.match(str(value))
    if not match:
        return None
    return int(match.group(1)) * _UNIT[match.group(2).lower()]


def format_memory(size: int) -> str:
    """``size`` bytes as a JVM memory size: whole GiB as ``11g``, else MiB."""
    return f"{size // GiB}g" if size % GiB == 0 else f"{size // MiB}m"


def machine_memory() -> Optional[int]:
    """Bytes of memory this process may use: the machine's physical memory, or the memory limit
    of its container (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``) when lower; None
    where the OS says neither."""
    try:
        total: Optional[int] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows)
        total = None
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(limit_file) as f:
                limit = int(f.read().strip())  # "max" (no limit) fails here
        except (OSError, ValueError):
            continue
        if limit > 0 and (total is None or limit < total):
            total = limit
    return total


def default_driver_memory(total: Optional[int]) -> str:
    """The driver heap for a machine of ``total`` bytes: half of it, at most all but
    ``RESERVED`` and at most ``MAX_HEAP``, in whole GiB; at least Spark's own 1 GiB (also when
    the memory is unknown). 24 GiB -> 11g, 16 GiB -> 8g, 8 GiB -> 4g, 4 GiB -> 1g, 128 GiB ->
    31g. The JVM reserves it, it does not take it: the heap grows as the session needs it."""
    if not total:
        return format_memory(MIN_HEAP)
    heap = min(total // 2, total - RESERVED, MAX_HEAP)
    return format_memory(max(MIN_HEAP, heap // GiB * GiB))


def _submit_args_memory(env: Mapping[str, str]) -> Optional[str]:
    """The driver memory ``PYSPARK_SUBMIT_ARGS`` sets (``--driver-memory 3g`` or ``--conf
    spark.driver.memory=3g``): PySpark passes those to spark-submit after the session's own
    configuration, so they win over it."""
    try:
        args = shlex.split(env.get("PYSPARK_SUBMIT_ARGS", ""))
    except ValueError:
        return None
    found: Optional[str] = None
    for option, value in zip(args, args[1:] + [""]):
        if "=" in option and option.startswith("--"):  # --driver-memory=3g, --conf=k=v
            option, value = option.split("=", 1)
        if option == "--driver-memory" and value:
            found = value
        elif option == "--conf" and value.startswith(HEAP_KEY + "="):
            found = value.split("=", 1)[1]
    return found


def driver_memory(
    overrides: Mapping[str, Any], env: Optional[Mapping[str, str]] = None, total: Optional[int] = None
) -> Tuple[str, str]:
    """The driver heap a session launched now runs with, and where it comes from: a
    ``--driver-memory`` in ``PYSPARK_SUBMIT_ARGS`` (spark-submit reads it last), else the profile's
    ``server_side_parameters: {spark.driver.memory: ...}``, else ``SPARK_DRIVER_MEMORY``, else
    ``default_driver_memory`` of the machine's memory (``total``, read when not given)."""
    env = os.environ if env is None else env
    launcher = _submit_args_memory(env)
    if launcher:
        return launcher, "PYSPARK_SUBMIT_ARGS"
    if overrides.get(HEAP_KEY):
        return str(overrides[HEAP_KEY]), "profile: server_side_parameters"
    if env.get("SPARK_DRIVER_MEMORY"):
        return env["SPARK_DRIVER_MEMORY"], "SPARK_DRIVER_MEMORY"
    total = machine_memory() if total is None else total
    if not total:
        return default_driver_memory(None), "default: the machine's memory is unknown"
    return default_driver_memory(total), f"default: half of the machine's {total / GiB:.1f} GiB"


LOCK_ENABLED_KEY = "spark.hadoop.iceberg.engine.hive.lock-enabled"


def iceberg_session_defaults(session_dir: str) -> Dict[str, str]:
    """The SparkSession configuration for an embedded Iceberg + Hive/Derby catalog.

    All state (warehouse, Derby metastore, derby.log) lives under ``session_dir``.
    See STACK.md for why each setting is needed.
    """
    session_dir = os.path.abspath(session_dir)
    warehouse = os.path.join(session_dir, "warehouse")
    metastore = os.path.join(session_dir, "metastore_db")
    derby_log = os.path.join(session_dir, "derby.log")
    return {
        "spark.master": "local[2]",
        "spark.jars": iceberg_jar_path(),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
        "spark.sql.catalog.spark_catalog.type": "hive",
        "spark.sql.catalog.spark_catalog.cache-enabled": "false",
        # commits take the metastore's table lock (prepare_embedded_metastore creates Derby's lock
        # tables): without it two concurrent commits from one JVM can both succeed, one lost
        LOCK_ENABLED_KEY: "true",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        # the metastore refuses a column type change it deems incompatible (array -> boolean,
        # string -> int) with a CommitStateUnknownException, though Iceberg replaces a table with
        # any schema: a model whose SELECT changed a column's type could not be rebuilt
        "spark.hadoop.hive.metastore.disallow.incompatible.col.type.changes": "false",
        "spark.sql.warehouse.dir": warehouse,
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={metastore};create=true"
        ),
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={session_dir} -Dderby.stream.error.file={derby_log}"
        ),
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
    }


_METASTORE_URL_KEY = "spark.hadoop.javax.jdo.option.ConnectionURL"
_PREPARED_METASTORES: set[str] = set()


def prepare_embedded_metastore(spark, params: Dict[str, str]) -> None:
    """Make the embedded Derby metastore fit for the catalog's use. Its schema is created by
    DataNucleus, which (a) does not create Hive's transaction tables (HIVE_LOCKS, NEXT_LOCK_ID,
    ...): created here as Hive's own test utility does, so Iceberg's commits take the metastore's
    table lock and each commit either lands or fails, also when two commits race in one JVM (a
    Thrift Server runs every client's statements in one); and (b) gives a column's comment 256
    characters, so a dbt column description any longer (persist_docs) failed the commit with
    CommitStateUnknownException: widened to Derby's longest VARCHAR. Idempotent; once per
    metastore and process."""
    url = params.get(_METASTORE_URL_KEY)
    if not url or url in _PREPARED_METASTORES:
        return
    jvm = spark._jvm
    if params.get(LOCK_ENABLED_KEY, "true") == "true":
        conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
        conf.set("javax.jdo.option.ConnectionURL", url)
        try:
            jvm.org.apache.hadoop.hive.metastore.txn.TxnDbUtil.prepDb(conf)
        except Exception as exc:  # py4j error: tables already there (a metastore prepared before)
            if "already exists" not in str(exc):
                raise DbtRuntimeError(f"Cannot create the metastore's lock tables in {url}: {exc}") from exc
    spark.sql("SHOW DATABASES").collect()  # DataNucleus creates the metastore's tables on first use
    connection = jvm.java.sql.DriverManager.getConnection(url)
    try:
        connection.createStatement().execute(
            'ALTER TABLE COLUMNS_V2 ALTER COLUMN "COMMENT" SET DATA TYPE VARCHAR(32672)'
        )
    finally:
        connection.close()
    _PREPARED_METASTORES.add(url)


_APPLIED: Dict[str, Any] = {}  # the session embedded_session last returned and the params it laid over it
_SESSION_LOCK = threading.RLock()  # one thread at a time finds the session lost and starts the next
#: seconds a JVM that lost its session has to exit by itself (its shutdown hooks) before it is
#: terminated, then killed: it holds the Derby metastore until it is gone
JVM_EXIT_WAIT = 15
#: the exit code Spark's uncaught-exception handler gives the JVM on an OutOfMemoryError
SPARK_OOM_EXIT_CODE = 52


def _gateway_process() -> Any:
    """The JVM process PySpark launched for this process (None: none yet, or the gateway is
    one PySpark did not launch, PYSPARK_GATEWAY_PORT)."""
    from pyspark import SparkContext

    return getattr(SparkContext._gateway, "proc", None)


def session_loss(spark: Any, probe: bool = False) -> Optional[str]:
    """Why ``spark`` can run no more statements, or None while it can: its SparkContext was
    stopped, its JVM exited (no call to the JVM: a check per statement costs a few µs), or,
    with ``probe`` (after a statement failed), the JVM does not answer or its SparkContext was
    shut down (the JVM exits after that, and the statement's error may arrive before it has)."""
    if spark._sc._jsc is None:
        return "its SparkContext was stopped"
    proc = _gateway_process()
    if proc is not None and proc.poll() is not None:
        return _exited(proc.returncode)
    if not probe:
        return None
    try:
        stopped = spark._jsc.sc().isStopped()
    except Exception as exc:  # py4j's network errors, ConnectionRefusedError
        return f"its JVM does not answer ({type(exc).__name__}: {exc})"
    return "its SparkContext was shut down" if stopped else None


def _exited(code: Optional[int]) -> str:
    if code == SPARK_OOM_EXIT_CODE:
        return f"its JVM ran out of memory and exited (exit code {code})"
    if code is not None and code < 0:
        return f"its JVM was killed (signal {-code})"
    return f"its JVM exited (exit code {code})"


def discard_session(spark: Any) -> Optional[str]:
    """Forget the lost session ``spark`` and everything of this process tied to it, so that the
    next statement starts a new session and, when PySpark launched the old JVM, a new JVM: the
    old JVM is given JVM_EXIT_WAIT s to exit, then terminated (it holds the Derby metastore);
    PySpark's class-level gateway, JVM view, active context and sessions are reset (PySpark
    launches a gateway only while ``SparkContext._gateway`` is None); the old context is marked
    stopped (``_jsc = None``: each thread's cached session in refresh/embedded.py sees that);
    the metastore is prepared again in the new JVM. Returns how the JVM ended, when it did.
    Idempotent: a session already discarded is left alone."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    from pyspark.sql.context import SQLContext

    with _SESSION_LOCK:
        if _APPLIED.get("session") is not spark and spark._sc._jsc is None:
            return None
        sc = spark._sc
        ended: Optional[str] = None
        with SparkContext._lock:
            gateway = SparkContext._gateway
            proc = getattr(gateway, "proc", None)
            if proc is not None:
                ended = _exited(_end_process(proc))
            try:
                if sc._accumulatorServer is not None:
                    sc._accumulatorServer.shutdown()
            except Exception:  # pragma: no cover - already shut
                pass
            sc._accumulatorServer = None
            sc._jsc = None
            if SparkContext._active_spark_context is sc:
                SparkContext._active_spark_context = None
            SparkSession._instantiatedSession = None
            SparkSession._activeSession = None
            SQLContext._instantiatedContext = None
            if gateway is not None and proc is not None:
                try:
                    gateway.shutdown()
                except Exception:  # pragma: no cover - its JVM is gone
                    pass
                SparkContext._gateway = None
                SparkContext._jvm = None
        _APPLIED.pop("session", None)
        _APPLIED.pop("heap", None)
        _PREPARED_METASTORES.clear()
        return ended


def _end_process(proc: Any) -> Optional[int]:
    """Wait for ``proc`` to exit, terminate it after JVM_EXIT_WAIT s and kill it after as many
    more: its exit code."""
    import subprocess

    for end in (None, proc.terminate, proc.kill):
        if end is not None:
            end()
        try:
            return proc.wait(timeout=JVM_EXIT_WAIT)
        except subprocess.TimeoutExpired:
            continue
    return proc.poll()


def _jvm_heap(spark: Any) -> str:
    """The maximum heap of the JVM the session runs in, as the JVM reports it."""
    from py4j.java_gateway import JavaClass

    runtime = JavaClass("java.lang.Runtime", spark._jvm._gateway_client).getRuntime()
    return format_memory(int(runtime.maxMemory()))


def embedded_session(params: Dict[str, str]):
    """The process's SparkSession with ``params`` (created on first use, as dbt-spark's session
    cursor creates it), its Derby metastore prepared (prepare_embedded_metastore). The params are
    laid over a running session only when they differ from those last laid (another profile in
    this process): each lay is a py4j call per setting, and dbt-spark's cursor laid them for
    every statement (~40 calls, ~20 ms). A session found lost (``session_loss``: its JVM exited)
    is discarded and a new one started, in a new JVM."""
    from pyspark.sql import SparkSession

    spark = _APPLIED.get("session")
    if spark is not None and _APPLIED.get("params") == params and session_loss(spark) is None:
        return spark
    with _SESSION_LOCK:
        spark = _APPLIED.get("session")
        if spark is not None:
            loss = session_loss(spark)
            if loss is None and _APPLIED.get("params") == params:
                return spark
            if loss is not None:
                discard_session(spark)
                logger.info(f"spark_ivm: the Spark session was lost ({loss}); starting a new one")
        started = time.monotonic()
        builder = SparkSession.builder.enableHiveSupport()
        for key, value in params.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        if params.get(_METASTORE_URL_KEY, "").startswith("jdbc:derby:"):
            prepare_embedded_metastore(spark, params)
        if "heap" not in _APPLIED:  # a new JVM (or the first session of this process)
            _APPLIED["heap"] = _jvm_heap(spark)
            logger.debug(
                f"spark_ivm session ready in {time.monotonic() - started:.1f} s: "
                f"JVM max heap {_APPLIED['heap']} (requested {params.get(HEAP_KEY)})"
            )
        _APPLIED.update(session=spark, params=dict(params))
        return spark


def replace_lost_session() -> Optional[str]:
    """Before a model: ask the JVM whether the session is still there (one call), and when it is
    lost discard it (the model's first statement starts a new one); why it was lost, else None.
    A JVM that died in the adapter's own calls to it (refresh/metadata.py), not in a statement,
    failed its model with py4j's error and may still be exiting when the next model starts: its
    first statement would find it alive without asking, and fail."""
    spark = _APPLIED.get("session")
    if spark is None:
        return None
    loss = session_loss(spark, probe=True)
    if loss is None:
        return None
    ended = discard_session(spark)
    if ended:
        loss = ended if loss.startswith("its JVM") else f"{loss}; {ended}"
    logger.info(f"spark_ivm: the Spark session was lost ({loss}); the next statement starts a new one")
    return loss


def last_session() -> Any:
    """The session the connection's statements run on (``embedded_session`` of the params last
    laid: a new one when it was lost); None when no statement has run in this process."""
    params = _APPLIED.get("params")
    return None if params is None else embedded_session(params)


def _error_text(exc: BaseException) -> str:
    """What a failed statement's error says: a Py4JJavaError's text is asked of the JVM, which
    may be gone (then only its ``An error occurred while calling o64.sql.``)."""
    try:
        return str(exc)
    except Exception:
        return str(getattr(exc, "errmsg", "") or "")


def _first_line(text: str, exc: BaseException) -> str:
    """The line of an error's text that says what failed: not py4j's ``An error occurred while
    calling o64.sql.`` but the Java exception after it."""
    lines = [line.strip().lstrip(": ").strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line and not line.startswith("An error occurred while calling")]
    return (lines[0][:500] if lines else "") or type(exc).__name__


def session_lost_error(spark: Any, exc: BaseException) -> BaseException:
    """The error a statement that failed with ``exc`` on ``spark`` fails with: when the session
    is lost (``session_loss``), it is discarded (the next statement starts a new one) and the
    error says so, the driver heap it had and what the statement failed with; else ``exc``."""
    text = _error_text(exc)  # first: the JVM may still answer
    loss = session_loss(spark, probe=True)
    if loss is None:
        return exc
    heap = _APPLIED.get("heap")
    ended = discard_session(spark)
    if ended:  # how the JVM ended says more than that it did not answer
        loss = ended if loss.startswith("its JVM") else f"{loss}; {ended}"
    logger.info(f"spark_ivm: the Spark session was lost ({loss}); the next statement starts a new one")
    cause = _first_line(text, exc)
    out_of_memory = "OutOfMemoryError" in text or f"exit code {SPARK_OOM_EXIT_CODE}" in loss
    hint = (
        " If it ran out of memory, give it a larger heap (the profile's server_side_parameters: "
        "spark.driver.memory; see docs/session.md)."
        if out_of_memory
        else ""
    )
    return DbtRuntimeError(
        f"The Spark session was lost while this statement ran: {loss}. "
        f"The models after this one run in a new Spark session. "
        f"The session's driver heap was {heap or 'unknown'}.{hint} The statement failed with: {cause}"
    )


def _session_connection(params: Dict[str, str]) -> Any:
    """dbt-spark's session connection whose cursors run each statement on
    ``embedded_session(params)``, and fail saying so when the session was lost
    (``session_lost_error``)."""
    from dbt.adapters.spark.session import Connection as SessionConnection
    from dbt.adapters.spark.session import Cursor as SessionCursor
    from pyspark.sql.utils import AnalysisException

    class EmbeddedCursor(SessionCursor):
        _spark: Any = None

        def execute(self, sql: str, *parameters: Any) -> None:
            if parameters:
                sql = sql % parameters
            self._spark = embedded_session(self.server_side_parameters)
            try:
                self._df = self._spark.sql(sql)
            except AnalysisException as exc:
                raise DbtRuntimeError(str(exc)) from exc
            except Exception as exc:
                self._raise_lost(exc)
                raise

        def fetchall(self) -> Any:
            try:
                return super().fetchall()
            except Exception as exc:
                self._raise_lost(exc)
                raise

        def fetchone(self) -> Any:
            try:
                return super().fetchone()
            except Exception as exc:
                self._raise_lost(exc)
                raise

        def _raise_lost(self, exc: Exception) -> None:
            """Raise what ``session_lost_error`` makes of ``exc`` when the session was lost."""
            if self._spark is not None:
                lost = session_lost_error(self._spark, exc)
                if lost is not exc:
                    raise lost from exc

    class EmbeddedConnection(SessionConnection):
        def cursor(self) -> SessionCursor:
            return EmbeddedCursor(server_side_parameters=self.server_side_parameters)

    return EmbeddedConnection(server_side_parameters=params)


# settings that, left at our defaults, make the catalog the session's own Derby metastore
_EMBEDDED_CATALOG_KEYS = (
    "spark.hadoop.javax.jdo.option.ConnectionURL",
    "spark.sql.catalog.spark_catalog",
    "spark.sql.catalog.spark_catalog.type",
)
# settings that point the session at a metastore or catalog service other processes reach
_SHARED_CATALOG_KEYS = (
    "hive.metastore.uris",
    "spark.hadoop.hive.metastore.uris",
    "spark.sql.catalog.spark_catalog.uri",
)


@dataclass
class SparkIvmCredentials(SparkCredentials):
    # `session` is the embedded default; thrift/http/odbc work exactly as in dbt-spark.
    method: SparkConnectionMethod = SparkConnectionMethod.SESSION  # type: ignore[assignment]
    # Directory holding the embedded warehouse and metastore (session method only).
    session_dir: Optional[str] = None
    # thrift: seconds between polls of a running statement. dbt-spark waits 5 s; a Spark Thrift
    # Server already holds each poll until the statement ends or 5 s pass (long polling), so
    # waiting on top of that only adds up to 5 s to every statement that outlives one poll.
    poll_interval: int = 0

    def __post_init__(self) -> None:
        if self.method is None:
            self.method = SparkConnectionMethod.SESSION
        placeholder_host = False
        if self.method == SparkConnectionMethod.SESSION and self.host is None:
            # dbt-spark insists on `host` even for the embedded session.
            self.host = SESSION_HOST_PLACEHOLDER
            placeholder_host = True
        super().__post_init__()
        if placeholder_host:
            self.host = SESSION_HOST_PLACEHOLDER
        if self.method == SparkConnectionMethod.SESSION:
            self.session_dir = resolve_session_dir(self.session_dir)

    @property
    def type(self) -> str:
        return "spark_ivm"

    @property
    def unique_field(self) -> str:
        if self.method == SparkConnectionMethod.SESSION:
            return self.session_dir or SESSION_HOST_PLACEHOLDER
        return self.host  # type: ignore[return-value]

    def _connection_keys(self) -> Tuple[str, ...]:
        if self.method == SparkConnectionMethod.SESSION:
            return ("method", "schema", "session_dir")
        return ("method",) + tuple(super()._connection_keys())

    def connection_info(self, *, with_aliases: bool = False) -> Iterable[Tuple[str, Any]]:
        """What ``dbt debug`` prints: the profile's keys and, for the embedded session, what it
        runs on — the Iceberg runtime jar, the catalog, the warehouse and the metastore (the
        profile's server_side_parameters laid over the defaults)."""
        yield from super().connection_info(with_aliases=with_aliases)
        if self.method != SparkConnectionMethod.SESSION:
            return
        try:
            params = self.session_parameters()
        except DbtRuntimeError as e:  # the jar is missing: say so where the jar would be
            yield "iceberg_jar", str(e)
            return
        catalog = "spark.sql.catalog.spark_catalog"
        yield "iceberg_jar", params.get("spark.jars")
        yield "catalog", f"spark_catalog = {params.get(catalog)} (type {params.get(catalog + '.type')})"
        yield "warehouse", params.get("spark.sql.warehouse.dir")
        yield "metastore", params.get(_METASTORE_URL_KEY)
        try:
            value, source = self.driver_memory()
            yield "driver_memory", f"{value} ({source})"
        except DbtRuntimeError as e:
            yield "driver_memory", str(e)

    def catalog_is_exclusive(self) -> bool:
        """True when no other process can commit to this catalog: the embedded session with
        its own Derby metastore, which admits one process at a time (STACK.md pitfall 6). The
        user pointing the session at another metastore or catalog makes it shared."""
        if self.method != SparkConnectionMethod.SESSION:
            return False
        overrides = {str(k): str(v) for k, v in self.server_side_parameters.items()}
        if any(overrides.get(k) for k in _SHARED_CATALOG_KEYS):
            return False
        changed = [k for k in _EMBEDDED_CATALOG_KEYS if k in overrides]
        if not changed:
            return True
        defaults = iceberg_session_defaults(resolve_session_dir(self.session_dir))
        return all(overrides[k] == defaults[k] for k in changed)

    def session_parameters(self) -> Dict[str, str]:
        """Our Iceberg defaults and the driver heap (``driver_memory``) merged with the user's
        server_side_parameters (user wins)."""
        params = iceberg_session_defaults(resolve_session_dir(self.session_dir))
        overrides = {str(k): str(v) for k, v in self.server_side_parameters.items()}
        params[HEAP_KEY] = driver_memory(overrides)[0]
        params.update(overrides)
        return params

    def driver_memory(self) -> Tuple[str, str]:
        """The driver heap the session launched now would run with and where it comes from
        (``driver_memory``); a value the JVM cannot read fails here, before a JVM is launched."""
        value, source = driver_memory({str(k): v for k, v in self.server_side_parameters.items()})
        if parse_memory(value) is None:
            raise DbtRuntimeError(
                f"The driver heap {value!r} ({source}) is not a JVM memory size such as 8g or 4096m."
            )
        return value, source


class SparkIvmConnectionManager(SparkConnectionManager):
    TYPE = "spark_ivm"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            logger.debug("Connection is already open, skipping open.")
            return connection
        creds = connection.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            return super().open(connection)

        from dbt.adapters.spark.session import SessionConnectionWrapper

        params = creds.session_parameters()
        session_dir = resolve_session_dir(creds.session_dir)
        try:
            os.makedirs(session_dir, exist_ok=True)
        except OSError as exc:
            raise DbtRuntimeError(
                f"Cannot create the spark_ivm session_dir {session_dir!r}: {exc}"
            ) from exc
        heap, source = creds.driver_memory()
        logger.debug(
            f"spark_ivm session: warehouse and metastore under {session_dir}; driver heap {heap} ({source})"
        )
        embedded_session(params)
        connection.handle = SessionConnectionWrapper(_session_connection(params))
        connection.state = ConnectionState.OPEN  # type: ignore[assignment]
        return connection

