"""One run of an incremental_ivm model. ``protocol`` reads top to bottom as its steps and
commit points; beside it: ``config`` (the model's ivm_* configs), ``context`` (the run and its
connection), ``analysis`` (compile, rebuild reasons), ``log``, ``lock``, ``capture`` (what a run
observes), ``cost`` (incremental or rebuild, under ``auto``), ``validate``, ``recover``,
``reading`` (inputs and state as relations), ``apply`` (an incremental run) and ``rebuild``.
Every SQL text comes from ``ivm_core`` (``statements``: the statements that move data;
``bookkeeping``: log, lock, capture, rollback)."""

from dbt.adapters.spark_ivm.refresh.config import IvmConfig, parse_config
from dbt.adapters.spark_ivm.refresh.context import IvmInputError, Outcome, Run, open_run
from dbt.adapters.spark_ivm.refresh.protocol import refresh

__all__ = ["IvmConfig", "IvmInputError", "Outcome", "Run", "open_run", "parse_config", "refresh"]
