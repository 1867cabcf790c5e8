"""A real Spark Thrift Server (HiveThriftServer2) from the pip pyspark, on 127.0.0.1.

The server runs with the embedded session's own Iceberg/Hive/Derby settings
(``connections.iceberg_session_defaults``: one definition) plus what a server needs on top
(STACK.md, "Spark Thrift Server from the pip pyspark"). It runs in its own process group, so
``stop()`` ends it and every process it started, also after a failed test.

Usable on its own for experiments::

    .venv/bin/python -m tests.thrift.server /tmp/sts   # starts, prints host:port, stops on Ctrl-C
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from typing import Dict, List, Optional

THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
HOST = "127.0.0.1"


def pyspark_home() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def server_conf(session_dir: str) -> Dict[str, str]:
    """The embedded session's settings for ``session_dir`` plus the Iceberg jar on the driver's
    class path (with ``spark.jars`` alone every client session after the first fails with
    DATA_SOURCE_NOT_FOUND: iceberg)."""
    from dbt.adapters.spark_ivm import connections

    conf = dict(connections.iceberg_session_defaults(session_dir))
    conf["spark.driver.extraClassPath"] = connections.iceberg_jar_path()
    # it runs the thrift tier's every statement: with Spark's default 1 GiB heap its old
    # generation was full after ~11 min of CI and GC took 8 % of its CPU by 21 min (jstat)
    conf["spark.driver.memory"] = "3g"
    return conf


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGTERM when this process dies, however it dies (Linux
    PR_SET_PDEATHSIG; kept across the exec of spark-submit into the JVM)."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _log_tail(path: str, lines: int = 60) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"(no log: {e})"


def prepare_metastore(session_dir: str, timeout: float = 300.0) -> Optional[float]:
    """With ``lock-enabled=true`` Iceberg's commits take the metastore's table lock, which needs
    Hive's transaction tables in Derby: create them in a short-lived embedded session on the
    same metastore (``connections.embedded_session``) that exits before the server starts
    (Derby admits one process). Returns the seconds it took, None when locks are off."""
    from dbt.adapters.spark_ivm.connections import LOCK_ENABLED_KEY

    conf = server_conf(session_dir)
    if conf.get(LOCK_ENABLED_KEY, "false") != "true":
        return None
    log_path = os.path.join(session_dir, "prepare_metastore.log")
    code = (
        "import sys\n"
        "from dbt.adapters.spark_ivm import connections\n"
        "params = connections.iceberg_session_defaults(sys.argv[1])\n"
        "spark = connections.embedded_session(params)\n"
        "spark.sql('SELECT 1').collect()\n"
        "spark.stop()\n"
    )
    env = dict(os.environ, SPARK_LOCAL_IP=HOST)
    started = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.run([sys.executable, "-c", code, session_dir], stdout=log, stderr=subprocess.STDOUT,
                              env=env, timeout=timeout, start_new_session=True,
                              preexec_fn=die_with_parent if sys.platform == "linux" else None)
    if proc.returncode != 0:
        raise RuntimeError(
            f"preparing the Derby metastore in {session_dir} for locked commits failed (exit {proc.returncode}); "
            f"log {log_path}:\n{_log_tail(log_path)}"
        )
    return time.monotonic() - started


class ThriftServer:
    def __init__(self, session_dir: str, port: Optional[int] = None, conf: Optional[Dict[str, str]] = None):
        """``conf``: settings laid over ``server_conf`` (the benchmark's larger driver heap)."""
        self.session_dir = os.path.abspath(session_dir)
        self.conf = dict(conf or {})
        self.port = port or free_port()
        self.host = HOST
        self.log_path = os.path.join(self.session_dir, "thriftserver.log")
        self.proc: Optional[subprocess.Popen] = None
        self.start_seconds: Optional[float] = None
        self.prepare_seconds: Optional[float] = None

    def command(self) -> List[str]:
        conf = {**server_conf(self.session_dir), **self.conf}
        master = conf.pop("spark.master", "local[2]")
        cmd = [os.path.join(pyspark_home(), "bin", "spark-submit"), "--class", THRIFT_SERVER_CLASS,
               "--master", master, "--name", "spark-ivm-thrift-tests"]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        for key, value in (
            ("hive.server2.thrift.bind.host", self.host),
            ("hive.server2.thrift.port", str(self.port)),
            ("hive.server2.transport.mode", "binary"),
            ("hive.server2.authentication", "NONE"),
        ):
            cmd += ["--hiveconf", f"{key}={value}"]
        return cmd + ["spark-internal"]

    def start(self, timeout: float = 240.0) -> "ThriftServer":
        os.makedirs(self.session_dir, exist_ok=True)
        started = time.monotonic()
        self.prepare_seconds = prepare_metastore(self.session_dir)
        env = dict(os.environ, SPARK_HOME=pyspark_home(), SPARK_LOCAL_IP=self.host)
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env,
                                         cwd=self.session_dir, start_new_session=True,
                                         preexec_fn=die_with_parent if sys.platform == "linux" else None)
        finally:
            log.close()
        try:
            self._wait_ready(started + timeout)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - started
        return self

    def _wait_ready(self, deadline: float) -> None:
        last_error = "port not open"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the Spark Thrift Server exited with {self.proc.returncode} before it was ready; "
                    f"log {self.log_path}:\n{_log_tail(self.log_path)}"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=2):
                    pass
            except OSError as e:
                last_error = f"port not open: {e}"
                time.sleep(1)
                continue
            try:
                if self.query("SELECT 1") == [(1,)]:
                    return
                last_error = "SELECT 1 returned something else"
            except Exception as e:  # noqa: BLE001 - the server is still starting its sessions
                last_error = f"SELECT 1 failed: {e!r}"
            time.sleep(1)
        raise RuntimeError(
            f"the Spark Thrift Server on {self.host}:{self.port} was not ready in time ({last_error}); "
            f"log {self.log_path}:\n{_log_tail(self.log_path)}"
        )

    def connect(self):
        from pyhive import hive

        return hive.connect(host=self.host, port=self.port, username="spark_ivm_tests")

    def query(self, q: str):
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(q)
            return cur.fetchall() if cur.description else []
        finally:
            conn.close()

    def rss_bytes(self) -> int:
        """Resident memory of every process of the server's process group."""
        if self.proc is None:
            return 0
        total = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                if os.getpgid(int(pid)) != self.proc.pid:
                    continue
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
            except (OSError, ProcessLookupError):
                continue
        return total

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM to the whole process group, SIGKILL if it is still there after ``grace`` s."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        try:  # anything of the group still alive (the JVM may have forked helpers)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=grace)


if __name__ == "__main__":
    server = ThriftServer(sys.argv[1] if len(sys.argv) > 1 else "/tmp/spark_ivm_thrift")
    server.start()
    print(f"ready on {server.host}:{server.port} after {server.start_seconds:.1f}s "
          f"(metastore prepared in {server.prepare_seconds}), {server.rss_bytes() / 2**30:.2f} GiB resident",
          flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
