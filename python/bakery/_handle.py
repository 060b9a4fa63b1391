# SPDX-License-Identifier: MIT
"""A C handle shared by the threads of a process, closed only when no call
on it is running (the C library's rule for bakery_close/bakery_lock_close,
which would otherwise free memory another thread still uses)."""

import errno
import os
import threading
import weakref
from typing import Callable, Iterator, Optional
from contextlib import contextmanager

from .errors import make_error


class Handle:
    """A pointer with a count of the calls running on it."""

    def __init__(self, pointer: int, what: str) -> None:
        self._pointer: Optional[int] = pointer
        self._what = what
        self._mutex = threading.Lock()
        self._calls = 0
        _all_handles.add(self)

    def _after_fork(self) -> None:
        # the calls in flight were other threads', which the child does not
        # have; one of them may have held the mutex at the fork
        self._mutex = threading.Lock()
        self._calls = 0

    @property
    def closed(self) -> bool:
        return self._pointer is None

    @contextmanager
    def use(self) -> Iterator[int]:
        """The pointer, kept valid (not closed) until the block ends."""
        with self._mutex:
            if self._pointer is None:
                raise make_error(errno.EBADF, self._what, "closed")
            self._calls += 1
            pointer = self._pointer
        try:
            yield pointer
        finally:
            with self._mutex:
                self._calls -= 1

    def close(self, close_fn: Callable[[int], int]) -> None:
        """Close with CLOSE_FN, unless calls are running (Busy).  Idempotent."""
        with self._mutex:
            if self._pointer is None:
                return
            if self._calls:
                raise make_error(errno.EBUSY, self._what,
                                 "in use by another thread (a call is still running)")
            err = close_fn(self._pointer)
            if err:
                raise make_error(err, self._what)
            self._pointer = None

    def forget(self) -> Optional[int]:
        """Give up the pointer without closing it (for a finaliser)."""
        with self._mutex:
            pointer, self._pointer = self._pointer, None
            return pointer


_all_handles: "weakref.WeakSet[Handle]" = weakref.WeakSet()


def _reset_after_fork() -> None:
    for handle in list(_all_handles):
        handle._after_fork()


os.register_at_fork(after_in_child=_reset_after_fork)
