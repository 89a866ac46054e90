"""``--scheduler``: the dask scheduler that runs the chunks of ``ambppl score``: a local one
(threads, processes, synchronous) or a ``dask.distributed`` cluster, whose address is checked
within :data:`SCHEDULER_TIMEOUT` seconds (a wrong one is one line, never a hang)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from ambppl.cli.common import UsageError, _one_line, _progress

#: Seconds that ``--scheduler ADDRESS`` waits for a dask scheduler to answer, connection and
#: handshake together (a wrong address is reported within about this time).
SCHEDULER_TIMEOUT = 8.0

#: The local dask schedulers that ``--scheduler`` names.
LOCAL_SCHEDULERS = ("threads", "processes", "synchronous")


@contextlib.contextmanager
def _scheduler(args: argparse.Namespace) -> Iterator[None]:
    """Run the block on the dask scheduler ``--scheduler`` names (an address of a
    ``dask.distributed`` scheduler, or threads / processes / synchronous); default dask's."""
    name = getattr(args, "scheduler", None)
    if name is None:
        yield
        return
    import dask

    if name in LOCAL_SCHEDULERS:
        with dask.config.set(scheduler=name):
            yield
        return
    try:
        from distributed import Client
    except ImportError as err:
        raise UsageError(
            "--scheduler ADDRESS needs dask.distributed: pip install 'ambppl[dask]'"
        ) from err
    _progress(args, f"connecting to the dask scheduler at {name}")
    start = time.monotonic()
    _probe_scheduler(name, SCHEDULER_TIMEOUT)
    left = max(SCHEDULER_TIMEOUT - (time.monotonic() - start), 1.0)
    try:
        client = Client(name, timeout=left)
    except (OSError, TimeoutError, ValueError) as err:
        raise UsageError(_scheduler_message(name, _one_line(str(err)))) from err
    with client, dask.config.set(scheduler=client):
        yield


def _scheduler_message(name: str, reason: str) -> str:
    return (
        f"--scheduler: cannot reach a dask scheduler at {name!r}: {reason}; give the address "
        "the scheduler prints (e.g. tcp://10.0.0.5:8786; 8787 is its dashboard), or threads, "
        "processes or synchronous for a local scheduler"
    )


def _probe_scheduler(name: str, timeout: float) -> None:
    """Check within ``timeout`` seconds that a dask scheduler answers at ``name``.

    ``distributed.Client``'s timeout bounds only the connection: a peer that accepts it and
    then never answers (an HTTP server, a silent listener) hangs the handshake, and one that
    answers in another protocol (an SSH banner) is read as a frame of exabytes. So first a
    plain TCP connection (refused or unreachable at once), then dask's own handshake and an
    ``identity`` request, in a thread with a deadline: the peer must say it is a scheduler.

    Raises
    ------
    UsageError
        One line naming ``--scheduler`` and what went wrong.
    """
    deadline = time.monotonic() + timeout
    _probe_tcp(name, timeout)
    outcome = _identity(name, timeout, deadline)
    error = outcome.get("error")
    if "identity" not in outcome and (error is None or isinstance(error, TimeoutError)):
        raise UsageError(
            _scheduler_message(
                name,
                f"the server there did not answer in dask's protocol within {timeout:g} s "
                "(is it another service, e.g. the dashboard or a web server?)",
            )
        )
    if error is not None:
        detail = (
            "its first bytes read as a message of impossible size"
            if isinstance(error, MemoryError)
            else f"{type(error).__name__}: {_one_line(str(error))[:120]}"
        )
        raise UsageError(
            _scheduler_message(name, f"the server there does not speak dask's protocol ({detail})")
        )
    identity = outcome["identity"]
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        raise UsageError(
            _scheduler_message(name, f"it is a dask {kind or 'server'}, not the scheduler")
        )


def _probe_tcp(name: str, timeout: float) -> None:
    """The address parsed, and for ``tcp://`` and ``tls://`` a plain TCP connection opened
    (nothing listening, or no route, is reported at once)."""
    from distributed.comm import parse_address, parse_host_port

    try:
        scheme, location = parse_address(name)
        if scheme not in ("tcp", "tls"):
            return
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as err:
        raise UsageError(_scheduler_message(name, f"not an address ({err})")) from err
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except ConnectionRefusedError as err:
        raise UsageError(_scheduler_message(name, "nothing listens there")) from err
    except TimeoutError as err:
        raise UsageError(_scheduler_message(name, f"no connection within {timeout:g} s")) from err
    except (OSError, OverflowError, ValueError) as err:
        raise UsageError(_scheduler_message(name, _one_line(str(err)))) from err


def _identity(name: str, timeout: float, deadline: float) -> dict[str, Any]:
    """dask's handshake and an ``identity`` request to ``name``, in a thread that gives up at
    ``deadline``: ``{"identity": ...}`` or ``{"error": ...}`` (empty when it ran out of
    time)."""
    from distributed.comm import connect
    from distributed.security import Security

    async def identify() -> Any:
        comm = await connect(name, timeout=timeout, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    outcome: dict[str, Any] = {}

    def run() -> None:
        left = max(deadline - time.monotonic(), 0.1)
        try:
            outcome["identity"] = asyncio.run(asyncio.wait_for(identify(), left))
        except BaseException as err:  # reported by the caller as one line, whatever happened
            outcome["error"] = err

    thread = threading.Thread(target=run, name="ambppl-scheduler-probe", daemon=True)
    thread.start()
    thread.join(max(deadline - time.monotonic(), 0.1) + 1.0)
    return outcome
