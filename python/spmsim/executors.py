"""The executors that `spmsim sweep` and `spmsim explore` run their points
on, as the command line (`--workers N`, `--dask N|ADDRESS`) or a sweep
spec (`workers = N`, `dask = ...`) chooses them:

    --workers N            a local process pool of N workers (the sweep starts and stops it)
    --dask N               a local Dask cluster of N single-threaded worker processes,
                           started here and closed after the sweep
    --dask tcp://HOST:PORT the scheduler of a Dask cluster the user runs (also tls://,
    --dask HOST:PORT       and HOST:PORT for tcp://): a Client connects to it and is
                           closed after the sweep; the cluster is left running

An address is checked before any point is submitted: nothing listening
(a wrong host or port) is refused at once, and a listener that does not
answer as a Dask scheduler within CONNECT_TIMEOUT seconds is refused
then, each naming the address.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import re
import socket
import sys
import threading
from typing import Any, Iterator

#: How long a scheduler's address may take to accept a connection and
#: answer Dask's handshake, in seconds.
CONNECT_TIMEOUT = 10.0
#: The schemes of a scheduler's address taken here (tls:// needs the
#: certificates in Dask's configuration, as for any Client).
SCHEMES = ("tcp", "tls")

_COUNT = re.compile(r"[+-]?\d+")
_ADDRESS = re.compile(r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?"
                      r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_][A-Za-z0-9_.-]*)"
                      r"(?::(?P<port>[^:/]*))?")
_FORMS = "a count of local workers (a whole number) nor a scheduler's address (tcp://HOST:PORT or HOST:PORT)"


class DaskValueError(ValueError):
    """A `--dask` value (or a spec's `dask`) that is neither a count nor an
    address; the message says what is wrong with it."""


class DaskError(RuntimeError):
    """Dask cannot run the points: distributed is not installed, or the
    scheduler cannot be reached."""


class DaskUnreachable(DaskError):
    """A scheduler's address that could not be connected to; the message
    names the address and why."""


@dataclasses.dataclass(frozen=True)
class DaskTarget:
    """Where a sweep's Dask workers are: `workers` local ones, or the
    cluster whose scheduler is at `address` (scheme://host:port)."""

    workers: int | None = None
    address: str | None = None

    @property
    def label(self) -> str:
        """The executor as a summary records it: `dask:4`, `dask:tcp://host:8786`."""
        return f"dask:{self.workers}" if self.workers is not None else f"dask:{self.address}"


def parse_dask(value: int | str | DaskTarget) -> DaskTarget:
    """A `--dask` value: a whole number at least 1 (local workers) or a
    scheduler's address, `SCHEME://HOST:PORT` with SCHEME tcp or tls, or
    `HOST:PORT` for tcp (an IPv6 host in brackets). Raises DaskValueError
    saying what is wrong."""
    if isinstance(value, DaskTarget):
        return value
    if isinstance(value, bool):
        raise DaskValueError(f"{value!r} is neither {_FORMS}")
    if isinstance(value, int):
        value = str(value)
    text = value.strip()
    if not text:
        raise DaskValueError(f"an empty value is neither {_FORMS}")
    if _COUNT.fullmatch(text):
        n = int(text)
        if n < 1:
            raise DaskValueError(f"{n} workers: a count of local workers is at least 1")
        return DaskTarget(workers=n)
    m = _ADDRESS.fullmatch(text)
    if m is None:
        raise DaskValueError(f"`{text}` is neither {_FORMS}")
    scheme = (m["scheme"] or "tcp").lower()
    if scheme not in SCHEMES:
        raise DaskValueError(f"`{text}`: a scheduler's address starts with "
                             f"{' or '.join(s + '://' for s in SCHEMES)}, not {scheme}://")
    if m["port"] is None:
        raise DaskValueError(f"`{text}` has no port (a scheduler listens on 8786 unless told otherwise: "
                             f"{scheme}://{m['host']}:8786)")
    if not m["port"].isdigit() or not 1 <= int(m["port"]) <= 65535:
        raise DaskValueError(f"`{text}`: the port `{m['port']}` is not a number from 1 to 65535")
    return DaskTarget(address=f"{scheme}://{m['host']}:{int(m['port'])}")


def dask_argument(text: str) -> DaskTarget:
    """argparse's type for `--dask`: argparse names the flag and the value
    in its message and exits with 2."""
    try:
        return parse_dask(text)
    except DaskValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _host_port(address: str) -> tuple[str, int]:
    rest = address.split("://", 1)[1]
    host, _, port = rest.rpartition(":")
    return host.strip("[]"), int(port)


def _check_listening(address: str, timeout: float) -> None:
    """Refuse, naming the address, a host that does not resolve or a port
    nothing listens on (at once), or one that takes over `timeout` seconds
    to accept."""
    host, port = _host_port(address)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except TimeoutError:
        raise DaskUnreachable(f"the Dask scheduler at {address} did not accept a connection within "
                              f"{timeout:g} s") from None
    except OSError as e:
        raise DaskUnreachable(f"cannot reach the Dask scheduler at {address}: {e.strerror or e}") from None


def _check_handshake(address: str, timeout: float) -> None:
    """Refuse, naming the address, a listener that does not answer Dask's
    handshake within `timeout` seconds (another service on that port). The
    Client's own connection bounds its wait for the TCP connection but not
    for the handshake, so this bounds it first, in a thread of its own (an
    event loop of its own, whatever loop the caller runs)."""
    from distributed.comm import connect  # noqa: PLC0415
    from distributed.security import Security  # noqa: PLC0415

    async def handshake() -> None:
        args = Security().get_connection_args("client")
        comm = await asyncio.wait_for(connect(address, timeout=timeout, **args), timeout)
        await comm.close()

    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(handshake())
        except BaseException as e:  # handed to the caller's thread
            failure.append(e)

    probe = threading.Thread(target=run, name="spmsim-dask-handshake", daemon=True)
    probe.start()
    probe.join(timeout + 5.0)
    if probe.is_alive() or (failure and isinstance(failure[0], TimeoutError)):
        raise DaskUnreachable(f"{address} accepted a connection but did not answer as a Dask scheduler within "
                              f"{timeout:g} s (is that the scheduler's port?)")
    if failure:
        e = failure[0]
        raise DaskUnreachable(f"{address} did not answer as a Dask scheduler: {type(e).__name__}: {e}")


def _import_client() -> Any:
    try:
        from distributed import Client  # noqa: PLC0415
    except ImportError as e:
        raise DaskError("Dask needs dask[distributed], which is not installed: pip install '.[dask]'") from e
    return Client


@contextlib.contextmanager
def dask_executor(target: DaskTarget, timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
    """The executor of `target`'s Dask workers, for the length of the
    `with`. A local cluster is started and closed here; a scheduler's
    address is connected to (DaskUnreachable, naming it, when that fails)
    and only the Client is closed after: the cluster is the user's."""
    Client = _import_client()
    if target.workers is not None:
        from distributed import LocalCluster  # noqa: PLC0415

        with LocalCluster(n_workers=target.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            yield client.get_executor()
        return
    assert target.address is not None
    _check_listening(target.address, timeout)
    _check_handshake(target.address, timeout)
    try:
        client = Client(target.address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise DaskUnreachable(f"cannot connect to the Dask scheduler at {target.address}: {e}") from None
    try:
        workers = len(client.scheduler_info().get("workers", {}))
        if workers == 0:
            print(f"the Dask scheduler at {target.address} has no workers yet; the points wait for some to join",
                  file=sys.stderr)
        yield client.get_executor()
    finally:
        client.close()


@contextlib.contextmanager
def chosen_executor(workers: int | None = None, dask: DaskTarget | None = None,
                    timeout: float = CONNECT_TIMEOUT) -> Iterator[tuple[Any, str]]:
    """(executor, label) for a sweep: Dask's when `dask` is given, else None
    (the sweep's own process pool of `workers`, default the cores). The
    label names it in a summary: `pool:2`, `pool:cores`, `dask:4`,
    `dask:tcp://host:8786`."""
    if dask is None:
        yield None, f"pool:{workers or 'cores'}"
        return
    with dask_executor(dask, timeout) as ex:
        yield ex, dask.label
