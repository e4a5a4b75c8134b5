"""`errscan batch --ray`: each repository a Ray task on a cluster (pip install 'errscan[ray]').

The task (batch.scan_one) resolves the repository, clones it into its node's cache,
scans it and returns the compressed document; Ray retries a task whose worker or node
died (`retries`), and the driver keeps at most two tasks a cluster CPU in flight, so its
memory does not grow with the list.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from errscan.errors import InputError

if TYPE_CHECKING:
    from errscan.batch import Item, Report, _Driver

HOW = "--ray needs Ray: pip install 'errscan[ray]'"


def run(
    items: Sequence[Item],
    driver: _Driver,
    address: str,
    jobs: int | None,
    timeout: float | None,
    retries: int,
    cache_dir: str | None,
    progress: Callable[[Report], None] | None,
) -> None:
    try:
        import ray
    except ImportError:
        raise InputError(HOW) from None
    from errscan.batch import TASK_MEMORY, scan_one

    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
        if address:
            ray.init(address=address, **options)
        else:  # a Ray of this machine, for this batch
            ray.init(num_cpus=jobs, include_dashboard=False, _node_ip_address="127.0.0.1",
                     **options)  # fmt: skip
    try:
        task = ray.remote(num_cpus=1, memory=TASK_MEMORY, max_retries=retries)(scan_one)
        limit = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
        queue = list(items)
        pending: dict[Any, tuple[Item, float]] = {}
        while queue or pending:
            while queue and len(pending) < limit:
                item = queue.pop(0)
                ref = task.remote(item.target, item.options, cache_dir)
                pending[ref] = (item, time.monotonic())
            driver.report.running = len(pending)
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in ready:
                item, started = pending.pop(ref)
                elapsed = time.monotonic() - started
                try:
                    data = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
                    driver.failed(item, reason, elapsed, 1 + retries)
                else:
                    driver.arrived(item, data, elapsed, 1)
                if progress is not None:
                    progress(driver.report)
            if timeout is not None:
                for ref, (item, started) in list(pending.items()):
                    if time.monotonic() - started > timeout:
                        ray.cancel(ref, force=True)
                        del pending[ref]
                        driver.failed(item, f"timed out after {timeout:g} s", timeout, 1)
                        if progress is not None:
                            progress(driver.report)
    finally:
        driver.report.running = 0
        if started_here:
            ray.shutdown()
