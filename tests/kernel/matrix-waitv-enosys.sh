#!/bin/sh
# SPDX-License-Identifier: MIT
# The kernel and container matrix (matrix.sh): futex_waitv refused with ENOSYS.
exec "$(dirname "$0")/matrix.sh" futex_waitv ENOSYS
