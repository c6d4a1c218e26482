"""A search run in a fresh interpreter, talking through two pipes: what the engine runs share.

:class:`spartition.exact.maxsat.MaxSATRun` and
:class:`spartition.exact.step_run.StepSearchRun` start their search as
``python -m <module> FD_IN FD_OUT``: a fresh interpreter, so no thread of the
parent (CP-SAT's) is forked and no user script is re-imported; in a session
of its own, so a Ctrl-C at the terminal reaches the parent only, which ends
the child. The parent kills it, never interrupts it: an interrupted SAT
call can answer as if it had finished.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection

__all__ = ["ChildSearch", "child_connections"]


class ChildSearch:
    """``python -m module FD_IN FD_OUT`` started with ``job`` sent on its input pipe.

    Parameters
    ----------
    module : str
        A module whose ``__main__`` calls :func:`child_connections`.
    job : tuple
        Pickled to the child.

    Attributes
    ----------
    conn : multiprocessing.connection.Connection
        The child's messages.
    started : float
        ``time.perf_counter()`` at the start.
    """

    def __init__(self, module: str, job: tuple):
        job_r, job_w = os.pipe()
        out_r, out_w = os.pipe()
        self.started = time.perf_counter()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", module, str(job_r), str(out_w)],
            pass_fds=(job_r, out_w), start_new_session=True, stdin=subprocess.DEVNULL)
        os.close(job_r)
        os.close(out_w)
        self._job = Connection(job_w, readable=False)
        self.conn = Connection(out_r, writable=False)
        self._job.send(job)

    @property
    def alive(self) -> bool:
        """The child has not exited."""
        return self._proc.poll() is None

    def end(self, stats: dict, failed: bool = False) -> None:
        """Kill the child if it still runs, reap it and close the pipes.

        Records in ``stats`` the wall seconds since the start (``wall_s``) and,
        for a run that ``failed``, the child's exit code (``exitcode``).
        """
        stats["wall_s"] = round(time.perf_counter() - self.started, 3)
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self.conn.close()
        self._job.close()
        if failed:
            stats["exitcode"] = self._proc.returncode

    def __del__(self):  # pragma: no cover - a run left behind by an exception
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


def child_connections(fd_in: int, fd_out: int) -> tuple:
    """In the child: ignore Ctrl-C, read the job, and exit once the parent closes its end or dies.

    Returns
    -------
    (tuple, Connection)
        The job and the connection to send messages on.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends this process
    inbox, conn = Connection(fd_in, writable=False), Connection(fd_out, readable=False)
    job = inbox.recv()

    def watch():
        try:
            inbox.recv()
        except (EOFError, OSError):
            pass
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    return job, conn
