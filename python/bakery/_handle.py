# SPDX-License-Identifier: MIT
"""A C handle shared by the threads of a process, closed only when no call
on it is running (the C library's rule for bakery_close/bakery_lock_close,
which would otherwise free memory another thread still uses)."""

import errno
import os
import threading
import weakref
from contextlib import ExitStack, contextmanager
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

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

    def _closed_error(self) -> Exception:
        return make_error(errno.EBADF, self._what, "closed")

    @contextmanager
    def use(self) -> Iterator[int]:
        """The pointer, kept valid (not closed) until the block ends."""
        with self._mutex:
            if self._pointer is None:
                raise self._closed_error()
            self._calls += 1
            pointer = self._pointer
        try:
            yield pointer
        finally:
            with self._mutex:
                self._calls -= 1

    def call(self, answer: List[int], fn: Callable[..., int], *args: Any) -> None:
        """Append FN(pointer, *ARGS) to ANSWER, the pointer kept valid
        meanwhile.

        The answer is appended by C code (list.extend over map), not by a
        bytecode of ours: a signal handler that raises the moment FN
        returns (CPython runs handlers between bytecodes, and a C call's
        return is one of their points) leaves it in ANSWER for the caller's
        ``except`` to see -- a lock taken must not be forgotten.
        """
        counted = False
        try:
            with self._mutex:
                pointer = self._pointer
                if pointer is None:
                    raise self._closed_error()
                self._calls += 1
                counted = True          # (no bytecode between: no handler runs)
            if not args:
                answer.extend(map(fn, (pointer,)))
            elif len(args) == 1:
                answer.extend(map(fn, (pointer,), args))
            else:
                answer.extend(map(fn, (pointer,), *[(a,) for a in args]))
        finally:
            if counted:
                with self._mutex:
                    self._calls -= 1

    def close(self, close_fn: Callable[[int], int]) -> None:
        """Close with CLOSE_FN, unless calls are running (Busy).  Idempotent."""
        with self._mutex:
            self._close_locked(close_fn)

    def _close_locked(self, close_fn: Callable[[int], int]) -> None:
        if self._pointer is None:
            return
        if self._calls:
            raise self._busy_error()
        err = close_fn(self._pointer)
        if err:
            raise make_error(err, self._what)
        self._pointer = None

    def _busy_error(self) -> Exception:
        return make_error(errno.EBUSY, self._what,
                          "in use by another thread (a call is still running)")

    def forget(self) -> Optional[int]:
        """Give up the pointer without closing it (for a finaliser)."""
        with self._mutex:
            pointer, self._pointer = self._pointer, None
            return pointer


def close_all(handles: Sequence[Tuple[Handle, Callable[[int], int]]],
              check: Callable[[], None]) -> None:
    """Close every handle with its function, last one last -- or none of
    them: Busy if a call is running on any, and whatever CHECK raises (it
    runs once no new call can start).  Nothing is closed if the last (the
    owner of the others) is closed already."""
    with ExitStack() as stack:
        for handle, _ in handles:
            stack.enter_context(handle._mutex)
        if handles[-1][0]._pointer is None:
            return
        for handle, _ in handles:
            if handle._calls:
                raise handle._busy_error()
        check()
        for handle, close_fn in handles:
            handle._close_locked(close_fn)


_all_handles: "weakref.WeakSet[Handle]" = weakref.WeakSet()


def _reset_after_fork() -> None:
    for handle in list(_all_handles):
        handle._after_fork()


os.register_at_fork(after_in_child=_reset_after_fork)
