#!/bin/sh
# SPDX-License-Identifier: MIT
# The kernel and container matrix (matrix.sh): membarrier refused with ENOSYS.
exec "$(dirname "$0")/matrix.sh" membarrier ENOSYS
