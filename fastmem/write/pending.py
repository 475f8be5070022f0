"""Writes that do not wait for the models: the background finisher of pending memories.

``remember_many(..., wait=False)`` commits a memory's row, FTS row and usage row at once (no
model runs: milliseconds, and keyword recall finds it) and marks it *pending*; its embedding,
facts, events and structural code follow. :class:`Finisher` is the one thread per
:class:`~fastmem.Memory` that derives them, in batches, each batch embedded and parsed outside
the store's lock and committed in a transaction of its own (:func:`fastmem.write.commit.commit_pending`).
A memory left pending by a process that exited is finished by the next one that asks
(:meth:`fastmem.Memory.pending.derive`); ``fastmem check`` counts them.
"""

from __future__ import annotations

import logging
import threading

__all__ = ["Finisher", "BATCH"]

logger = logging.getLogger(__name__)

#: Pending memories derived per transaction: small enough that a commit holds the store's
#: lock for a few milliseconds (a recall waits at most that long), large enough to batch the
#: model's forward passes.
BATCH = 64


class Finisher:
    """A daemon thread that runs ``derive(stop)`` whenever :meth:`poke` says there is work.

    Parameters
    ----------
    derive : callable
        ``derive(stop: threading.Event) -> int``: finish pending memories until none is left
        or ``stop`` is set; returns how many it finished.
    """

    def __init__(self, derive) -> None:
        self._derive = derive
        self._work = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def poke(self) -> None:
        """There may be pending memories: derive them (starts the thread on first use)."""
        with self._lock:
            if self._stop.is_set():
                return
            self._idle.clear()
            self._work.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fastmem-finisher", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._work.wait()
            if self._stop.is_set():
                break
            self._work.clear()
            try:
                self._derive(self._stop)
            except Exception:  # the rows stay pending: the next poke or process tries again
                logger.warning("fastmem: deriving pending memories failed", exc_info=True)
            with self._lock:  # against a poke between the check and the set
                if not self._work.is_set():
                    self._idle.set()
        self._idle.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the thread has nothing left to do; False when ``timeout`` passed first."""
        return self._idle.wait(timeout)

    def stop(self, timeout: float | None = None) -> bool:
        """Ask the thread to stop after its current batch; wait for it at most ``timeout``
        seconds (a batch caught in a model's first load can take longer: what it has not
        committed stays pending). True when it has stopped."""
        with self._lock:
            self._stop.set()
            self._work.set()
            thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
