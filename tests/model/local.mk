# SPDX-License-Identifier: MIT
# SPIN models of the four algorithms with crashes, recovery and aborts, and
# of the shared (reader) mode and k-holder locks
# (see tests/model/README.md).  run-models.sh skips (77) without spin or cc.
TESTS += tests/model/run-models.sh
EXTRA_DIST += tests/model/run-models.sh tests/model/lamport.pml \
	tests/model/boulangerie.pml tests/model/black_white.pml \
	tests/model/jayanti.pml tests/model/store_buffer.pml tests/model/unlink.pml \
	tests/model/revoke.pml tests/model/exit_wake.pml tests/model/bias.pml \
	tests/model/pass.pml tests/model/lamport_shared.pml tests/model/black_white_shared.pml \
	tests/model/lamport_k.pml tests/model/jayanti_pass.pml tests/model/lamport_k_pass.pml \
	tests/model/README.md
