#!/bin/sh
# SPDX-License-Identifier: MIT
# run-models.sh -- exhaustive SPIN verification of the libbakery models.
#
# Builds every configuration listed below in a temporary directory
# (spin -a, cc, ./pan), runs it, and checks the outcome against the
# expectation: 0 errors for the correct models, a violation OF THE EXPECTED
# KIND for the must-fail ones.  One line per configuration, then a final
# line "P passed, F failed".  Exit status: 0 if everything matched, 1 if not,
# 77 (automake SKIP) if spin or a C compiler is missing.
#
# Usage:  run-models.sh [-k] [-j JOBS] [-l] [--full] [FILTER...]
#   FILTER   run only the configurations whose name contains one of them
#   -l       list the configurations and exit
#   --full   also the heavy configurations (a minute or more each, GBs)
#   -k       keep the work directory (trails for failures: see its path)
#   -j JOBS  parallel pan runs, 1 or 2 (default 2; env MODEL_JOBS)
# Environment: srcdir (set by automake; top source dir or this directory),
#   SPIN (default spin), CC (default cc, else gcc), PAN_CFLAGS (default -O1),
#   TMPDIR.
#
# The models never need BITSTATE or COLLAPSE: every run is exhaustive.

LC_ALL=C
export LC_ALL

# ---------------------------------------------------------------------------
# the configurations
#   name | model | spin -D flags | mode | expect | cost
# mode:   safety   = pan -DSAFETY: assertions + invalid end states (deadlock)
#         liveness = spin -DLIVENESS, pan -a -f: the LTL starvation_free
#                    property under weak fairness (assertions are checked too)
# expect: pass | fail:KIND, KIND one of mutex fifo bound monitor liveness
#         deadlock reach (the first error pan finds must be of that kind;
#         reach: a reachability witness, e.g. two readers inside)
# cost:   rough seconds of one pan run here; the longest start first
# ---------------------------------------------------------------------------
configs() {
cat <<'EOF'
lamport N=2 crash=2 abort=2 safety           |lamport    |-DN=2 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6|safety  |pass      |1
lamport N=3 crash=1 abort=1 safety           |lamport    |-DN=3 -DCRASHES=1 -DABORTS=1|safety  |pass      |45
lamport N=2 crash=2 abort=2 liveness         |lamport    |-DN=2 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6 -DFIFO=0|liveness|pass      |1
lamport-early-reuse N=2 crash=1              |lamport    |-DN=2 -DCRASHES=1 -DEARLY_REUSE=1 -DFIFO=0 -DDEAD_HOLDS=0|safety  |fail:mutex|1
boulangerie N=2 crash=2 abort=2 safety       |boulangerie|-DN=2 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6|safety  |pass      |1
boulangerie N=3 crash=1 abort=1 safety       |boulangerie|-DN=3 -DCRASHES=1 -DABORTS=1|safety  |pass      |70
boulangerie N=2 crash=2 abort=2 liveness     |boulangerie|-DN=2 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6 -DFIFO=0|liveness|pass      |1
mixed(0=Bakery) N=2 crash=2 abort=2 safety   |boulangerie|-DN=2 -DLAMPORT_MASK=1 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6|safety  |pass      |1
mixed(0=Bakery) N=3 crash=1 safety           |boulangerie|-DN=3 -DLAMPORT_MASK=1 -DCRASHES=1|safety  |pass      |2
mixed(0=Bakery) N=2 crash=2 abort=2 liveness |boulangerie|-DN=2 -DLAMPORT_MASK=1 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6 -DFIFO=0|liveness|pass      |1
mixed(0=Bakery) N=3 liveness                 |boulangerie|-DN=3 -DLAMPORT_MASK=1 -DFIFO=0|liveness|pass      |1
black-white N=2 safety (number<=N)           |black_white|-DN=2|safety  |pass      |1
black-white N=3 safety (number<=N)           |black_white|-DN=3|safety  |pass      |3
black-white N=2 crash=2 abort=2 safety       |black_white|-DN=2 -DCRASHES=2 -DABORTS=2|safety  |pass      |1
black-white N=3 crash=1 safety               |black_white|-DN=3 -DCRASHES=1|safety  |pass      |45
black-white N=3 abort=1 safety               |black_white|-DN=3 -DABORTS=1|safety  |pass      |50
black-white N=2 crash=2 abort=2 liveness     |black_white|-DN=2 -DCRASHES=2 -DABORTS=2 -DFIFO=0|liveness|pass      |2
black-white N=3 liveness                     |black_white|-DN=3 -DFIFO=0|liveness|pass      |5
black-white-bound-n N=2 crash=1              |black_white|-DN=2 -DCRASHES=1 -DBOUND=2|safety  |fail:bound|1
black-white-bound-n N=2 abort=1              |black_white|-DN=2 -DABORTS=1 -DBOUND=2|safety  |fail:bound|1
black-white-flip-color N=3 crash=1           |black_white|-DN=3 -DCRASHES=1 -DFLIP=1 -DBOUND=99 -DFIFO=0 -DDEAD_HOLDS=0|safety  |fail:mutex|1
jayanti N=2 crash=2 abort=2 safety           |jayanti    |-DN=2 -DCRASHES=2 -DABORTS=2|safety  |pass      |1
jayanti N=3 crash=1 abort=1 safety           |jayanti    |-DN=3 -DCRASHES=1 -DABORTS=1|safety  |pass      |7
jayanti N=3 crash=2 safety                   |jayanti    |-DN=3 -DCRASHES=2|safety  |pass      |4
jayanti N=2 crash=2 abort=2 liveness         |jayanti    |-DN=2 -DCRASHES=2 -DABORTS=2 -DFIFO=0 -DCLUSTER=0|liveness|pass      |1
jayanti N=3 crash=1 liveness                 |jayanti    |-DN=3 -DCRASHES=1 -DFIFO=0 -DCLUSTER=0|liveness|pass      |6
jayanti N=3 abort=1 liveness                 |jayanti    |-DN=3 -DABORTS=1 -DFIFO=0 -DCLUSTER=0|liveness|pass      |5
jayanti-driven N=3 abort=2 (slots 1,2) safety|jayanti   |-DN=3 -DABORTS=2 -DABORT_MASK=6 -DDRIVEN=1 -DCLUSTER=0 -DFIFO=0|safety  |pass      |8
jayanti-stale-drive N=3 abort=2              |jayanti    |-DN=3 -DABORTS=2 -DABORT_MASK=6 -DDRIVEN=1 -DSTALE_DRIVE=1 -DCLUSTER=0 -DFIFO=0|safety  |fail:deadlock|3
jayanti-no-proxy-id N=3 abort=2              |jayanti    |-DN=3 -DABORTS=2 -DABORT_MASK=6 -DDRIVEN=1 -DNO_PROXY_ID=1 -DCLUSTER=0 -DFIFO=0|safety  |fail:mutex|4
jayanti-misprint N=2                         |jayanti    |-DN=2 -DMISPRINT=1 -DCLUSTER=0 -DFIFO=0|safety  |fail:mutex|1
jayanti-misprint-fifo N=2                    |jayanti    |-DN=2 -DMISPRINT=1 -DCLUSTER=0|safety  |fail:fifo |1
jayanti-plain-reset N=2 crash=1              |jayanti    |-DN=2 -DCRASHES=1 -DPLAIN_RESET=1 -DCLUSTER=0 -DFIFO=0 -DDEAD_HOLDS=0|safety  |fail:mutex|1
jayanti-plain-abort N=2 abort=1              |jayanti    |-DN=2 -DABORTS=1 -DPLAIN_RESET=1 -DCLUSTER=0 -DFIFO=0 -DDEAD_HOLDS=0|safety  |fail:mutex|1
jayanti-x-then-reset N=2 crash=1             |jayanti    |-DN=2 -DCRASHES=1 -DPLAIN_RESET=2 -DCLUSTER=0 -DFIFO=0 -DDEAD_HOLDS=0|safety  |fail:mutex|1
jayanti-keep-incs N=2 crash=2                |jayanti    |-DN=2 -DCRASHES=2 -DKEEP_INCS=1 -DCLUSTER=0 -DFIFO=0 -DDEAD_HOLDS=0|safety  |fail:mutex|1
pass-no-settle N=2                           |pass       |-DN=2 -DNO_SETTLE=1|safety  |fail:mutex|1
pass-no-close N=2                            |pass       |-DN=2 -DNO_CLOSE=1|safety  |fail:mutex|1
pass(black-white)-no-settle N=2              |pass       |-DN=2 -DBW=1 -DNO_SETTLE=1|safety  |fail:mutex|1
jayanti-pass N=2 pass=2 safety               |jayanti_pass|-DN=2 -DPASSES=2|safety  |pass      |1
jayanti-pass N=2 crash=2 pass=2 safety       |jayanti_pass|-DN=2 -DCRASHES=2 -DPASSES=2|safety  |pass      |8
jayanti-pass N=2 crash=1 abort=1 pass=2 safety|jayanti_pass|-DN=2 -DCRASHES=1 -DABORTS=1 -DPASSES=2|safety|pass   |20
jayanti-pass N=3 pass=1 safety               |jayanti_pass|-DN=3 -DPASSES=1|safety  |pass      |30
jayanti-pass-plain-reset N=2                 |jayanti_pass|-DN=2 -DPLAIN=1 -DCLUSTER=0 -DFIFO=0|safety  |fail:mutex|1
jayanti-pass-no-close N=2                    |jayanti_pass|-DN=2 -DNO_CLOSE=1 -DCLUSTER=0 -DFIFO=0|safety  |fail:mutex|1
jayanti-pass-no-settle N=2                   |jayanti_pass|-DN=2 -DNO_SETTLE=1 -DCLUSTER=0 -DFIFO=0|safety  |fail:mutex|1
jayanti-pass-late-close N=2                  |jayanti_pass|-DN=2 -DLATE_CLOSE=1 -DCLUSTER=0 -DFIFO=0|safety  |fail:mutex|1
jayanti-pass-late-close-x N=2 (X goes back)  |jayanti_pass|-DN=2 -DLATE_CLOSE=1 -DFIFO=0|safety  |fail:monitor|1
store-buffer (TSO) both barriers             |store_buffer|-DPASSAGES=2|safety  |pass      |1
store-buffer-no-barrier-1 (TSO)              |store_buffer|-DFENCE_START=0|safety  |fail:mutex|1
store-buffer-no-barrier-2 (TSO)              |store_buffer|-DFENCE_END=0|safety  |fail:mutex|1
unlink (TSO) crash safety                    |unlink     |-DPASSAGES=3|safety  |pass      |1
unlink-no-recheck (TSO)                      |unlink     |-DNO_RECHECK=1|safety  |fail:monitor|1
unlink-no-membarrier (TSO)                   |unlink     |-DNO_MEMBARRIER=1|safety  |fail:monitor|1
unlink-no-settle crash                       |unlink     |-DNO_SETTLE=1|safety  |fail:deadlock|1
revoke (TSO) crash safety                    |revoke     |-DPASSAGES=3|safety  |pass      |1
revoke-no-recheck (TSO)                      |revoke     |-DNO_RECHECK=1|safety  |fail:monitor|1
revoke-no-membarrier (TSO)                   |revoke     |-DNO_MEMBARRIER=1|safety  |fail:monitor|1
revoke-marker-in-slot (TSO)                  |revoke     |-DMARKER_IN_SLOT=1|safety  |fail:monitor|1
revoke-no-settle crash                       |revoke     |-DNO_SETTLE=1|safety  |fail:deadlock|1
bias (TSO) REVOKERS=1, crash safety          |bias       |-DREVOKERS=1|safety  |pass      |1
bias (TSO) REVOKERS=1 RPASS=2, crash safety  |bias       |-DRPASS=2|safety  |pass      |1
bias (TSO) REVOKERS=2, crash safety          |bias       |-DREVOKERS=2|safety  |pass      |3
bias (TSO) GRANT, REVOKERS=1, crash safety   |bias       |-DGRANT=1|safety  |pass      |1
bias (TSO) GRANT, REVOKERS=1 RPASS=2, crash safety|bias|-DGRANT=1 -DRPASS=2|safety|pass      |1
bias (TSO) GRANT, REVOKERS=2, crash safety   |bias       |-DGRANT=1 -DREVOKERS=2|safety  |pass      |5
bias-fast-path-after-grant (TSO) (reachable) |bias       |-DGRANT=1 -DREACH=1|safety  |fail:reach|1
bias (TSO) as built: no choosing, REVOKERS=1  |bias      |-DFAST_CHOOSING=0|safety  |pass      |1
bias (TSO) as built: no choosing, REVOKERS=2  |bias      |-DFAST_CHOOSING=0 -DREVOKERS=2|safety  |pass      |3
bias (TSO) as built: no choosing, GRANT, REVOKERS=2|bias |-DFAST_CHOOSING=0 -DGRANT=1 -DREVOKERS=2|safety|pass   |5
bias-no-membarrier (TSO) as built: no choosing|bias      |-DFAST_CHOOSING=0 -DNO_MEMBARRIER=1 -DCRASH=0|safety|fail:mutex|1
bias-no-membarrier (TSO)                     |bias       |-DNO_MEMBARRIER=1 -DCRASH=0|safety  |fail:mutex|1
bias-no-abort (TSO)                          |bias       |-DNO_ABORT=1 -DCRASH=0|safety  |fail:mutex|1
bias-second-skips (TSO) REVOKERS=2           |bias       |-DREVOKERS=2 -DSECOND_SKIPS=1 -DCRASH=0|safety  |fail:mutex|1
bias-grant-no-walk (TSO)                     |bias       |-DGRANT=1 -DGRANT_NO_WALK=1 -DCRASH=0|safety  |fail:mutex|1
bias-before-choosing (TSO) GRANT             |bias       |-DGRANT=1 -DBIAS_BEFORE_CHOOSING=1 -DCRASH=0|safety  |fail:mutex|1
exit-wake (TSO) fenceless exit, 1 registered waiter, crash, setter crash|exit_wake|-DWAITERS=1|safety|pass|1
exit-wake (TSO) fenceless exit, 2 registered waiters, crash, setter crash|exit_wake|-DWAITERS=2|safety|pass|1
exit-wake (TSO) fenceless exit, 1 registered waiter + a sleeper on another line, crash|exit_wake|-DWAITERS=1 -DOTHER=1|safety|pass|1
exit-wake (TSO) fenceless exit, 2 registered waiters + a sleeper on another line, crash|exit_wake|-DWAITERS=2 -DOTHER=1|safety|pass|2
exit-wake (TSO) lock_fences SET from the start, 2 registered waiters, crash|exit_wake|-DWAITERS=2 -DLOCK_FENCES0=2|safety|pass|1
exit-wake (TSO) lock_fences SETTING for good, 2 registered waiters, crash|exit_wake|-DWAITERS=2 -DLOCK_FENCES0=1|safety|pass|1
exit-wake (TSO) unregistered exiter, registered + refused waiter, unbounded|exit_wake|-DEXITER_REG=0 -DWAITERS=2 -DREG_MASK=1 -DGRACE=0|safety|pass|1
exit-wake (TSO) refused open before the exit, unbounded, + registered waiter|exit_wake|-DWAITERS=2 -DREG_MASK=1 -DEARLY_SET=1 -DGRACE=0|safety|pass|1
exit-wake (TSO) refused open at any moment, grace, + registered waiter|exit_wake|-DWAITERS=2 -DREG_MASK=1|safety|pass|1
exit-wake (TSO) two refused opens at any moment, grace|exit_wake|-DWAITERS=2 -DREG_MASK=0|safety|pass|1
exit-wake (TSO) aging, 1 registered waiter, crash, setter crash|exit_wake|-DAGE=1 -DWAITERS=1|safety|pass|1
exit-wake (TSO) aging, 2 registered waiters, crash, setter crash|exit_wake|-DAGE=1 -DWAITERS=2|safety|pass|1
exit-wake (TSO) aging, 1 registered waiter + a sleeper on another line, crash|exit_wake|-DAGE=1 -DWAITERS=1 -DOTHER=1|safety|pass|1
exit-wake (TSO) aging, 2 registered waiters + a sleeper on another line, crash|exit_wake|-DAGE=1 -DWAITERS=2 -DOTHER=1|safety|pass|3
exit-wake (TSO) aging, lock_fences SET from the start, 2 registered waiters, crash|exit_wake|-DAGE=1 -DWAITERS=2 -DLOCK_FENCES0=2|safety|pass|1
exit-wake (TSO) aging, lock_fences STALE from the start, 2 registered waiters, crash|exit_wake|-DAGE=1 -DWAITERS=2 -DLOCK_FENCES0=3|safety|pass|1
exit-wake (TSO) aging, refused open at any moment, grace, + registered waiter|exit_wake|-DAGE=1 -DWAITERS=2 -DREG_MASK=1|safety|pass|1
exit-wake-no-membarrier (TSO)                |exit_wake  |-DNO_MEMBARRIER=1|safety  |fail:deadlock|1
exit-wake-skip-on-setting (TSO)              |exit_wake  |-DWAITERS=2 -DSKIP_ON_SETTING=1 -DWCRASH=0|safety|fail:deadlock|1
exit-wake-set-before-membarrier (TSO)        |exit_wake  |-DWAITERS=2 -DSET_EARLY=1|safety|fail:deadlock|1
exit-wake-load-before-store (TSO)            |exit_wake  |-DWAITERS=1 -DOTHER=1 -DLOAD_FIRST=1|safety|fail:deadlock|1
exit-wake-fenceless-unregistered (TSO)       |exit_wake  |-DEXITER_REG=0 -DFENCELESS_UNREG=1|safety  |fail:deadlock|1
exit-wake-refused-unbounded (TSO)            |exit_wake  |-DREG_MASK=0 -DGRACE=0|safety  |fail:deadlock|1
exit-wake-grace-after-reread (TSO)           |exit_wake  |-DREG_MASK=0 -DLATE_GRACE=1|safety  |fail:deadlock|1
exit-wake-aging-membarrier-early (TSO)       |exit_wake  |-DAGE=1 -DMEMBARRIER_EARLY=1|safety|fail:deadlock|1
exit-wake-aging-stale-unfenced (TSO)         |exit_wake  |-DAGE=1 -DOTHER=1 -DSTALE_UNFENCED=1|safety|fail:deadlock|1
exit-wake-aging-setting (TSO)                |exit_wake  |-DAGE=1 -DOTHER=1 -DAGE_SETTING=1|safety|fail:deadlock|1
lamport-shared N=3 modes=any safety          |lamport_shared|-DN=3 -DSEQ=1|safety  |pass      |15
lamport-shared N=2 modes=any crash=2 abort=2 |lamport_shared|-DN=2 -DSEQ=1 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6|safety  |pass      |2
lamport-shared N=3 RRW crash=1 safety        |lamport_shared|-DN=3 -DSEQ=1 -DCRASHES=1 -DRMASK=3 -DWMASK=4|safety  |pass      |35
lamport-shared N=2 modes=any crash=2 abort=2 liveness|lamport_shared|-DN=2 -DSEQ=1 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6 -DFIFO=0|liveness|pass|6
lamport-shared N=3 RRW liveness              |lamport_shared|-DN=3 -DSEQ=1 -DRMASK=3 -DWMASK=4 -DFIFO=0|liveness|pass      |3
lamport-shared-overlap N=3 (reachable)       |lamport_shared|-DN=3 -DREACH=1|safety  |fail:reach|1
lamport-shared-skip-choosing N=3             |lamport_shared|-DN=3 -DSKIP_CHOOSING=1 -DFIFO=0|safety  |fail:mutex|1
lamport-shared-mode-after-doorway N=2        |lamport_shared|-DN=2 -DMODE_LATE=2 -DFIFO=0|safety  |fail:mutex|1
lamport-shared-choosing-bit N=3 RRW liveness |lamport_shared|-DN=3 -DRMASK=3 -DWMASK=4 -DFIFO=0|liveness|fail:liveness|1
black-white-shared-same-colour-overlap N=3 (reachable)|black_white_shared|-DN=3 -DSAME_COLOR=1 -DREACH=1|safety|fail:reach|1
black-white-shared-any-colour N=3            |black_white_shared|-DN=3 -DBOUND=99 -DFIFO=0|safety  |fail:mutex|1
black-white-shared-any-colour-bound N=2      |black_white_shared|-DN=2|safety  |fail:bound|1
k-holders K=2 N=3 safety                     |lamport_k  |-DN=3 -DK=2 -DSEQ=1|safety  |pass      |2
k-holders K=2 N=3 crash=1 safety (numbers<=4)|lamport_k  |-DN=3 -DK=2 -DSEQ=1 -DCRASHES=1 -DFIFO=0 -DMAXNUM=4|safety  |pass      |8
k-holders K=1 N=2 crash=2 abort=2 safety     |lamport_k  |-DN=2 -DK=1 -DSEQ=1 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6|safety  |pass      |1
k-holders K=2 N=3 liveness                   |lamport_k  |-DN=3 -DK=2 -DSEQ=1 -DFIFO=0|liveness|pass      |6
k-holders-k-inside K=2 N=3 (reachable)       |lamport_k  |-DN=3 -DK=2 -DREACH=1|safety  |fail:reach|1
k-holders-no-phase1 K=2 N=3                  |lamport_k  |-DN=3 -DK=2 -DNO_PHASE1=1 -DFIFO=0|safety  |fail:mutex|1
k-holders-le K=2 N=3                         |lamport_k  |-DN=3 -DK=2 -DLE=1 -DFIFO=0|safety  |fail:mutex|1
k-holders-choosing-bit K=2 N=3 liveness      |lamport_k  |-DN=3 -DK=2 -DFIFO=0|liveness|fail:liveness|1
k-pass K=2 N=3 passes=1 slot 0 passed (numbers<=4)|lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=4 -DPASSES=1 -DPASSED_MASK=1|safety|pass|15
k-pass K=2 N=3 slot 2 passes slot 0 crash=1 of the passer in a pass (numbers<=3)|lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=3 -DPASSES=1 -DPASSED_MASK=1 -DPASSER_MASK=4 -DCRASHES=1 -DCRASH_IN_PASS=1 -DCRASH_MASK=4|safety|pass|40
k-pass K=2 N=3 slot 2 passes slot 0 crash=1 of the passed in a pass (numbers<=3)|lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=3 -DPASSES=1 -DPASSED_MASK=1 -DPASSER_MASK=4 -DCRASHES=1 -DCRASH_IN_PASS=1 -DCRASH_MASK=1|safety|pass|40
k-pass-k-inside K=2 N=3 (reachable)          |lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=4 -DPASSES=1 -DPASSED_MASK=1 -DREACH=1|safety|fail:reach|1
k-pass-no-close K=2 N=3                      |lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=4 -DPASSES=1 -DPASSED_MASK=1 -DNO_CLOSE=1|safety|fail:mutex|2
k-pass-no-settle K=2 N=3                     |lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=4 -DPASSES=1 -DPASSED_MASK=1 -DNO_SETTLE=1|safety|fail:mutex|2
pass(lamport) N=2 crash=2 pass=2 abort=2 safety|pass   |-DN=2 -DCRASHES=2 -DPASSES=2 -DABORTS=2|safety|pass|3
pass(lamport) N=3 pass=1 abort=1 safety      |pass       |-DN=3 -DPASSES=1 -DABORTS=1 -DMAXNUM=4|safety|pass|60
pass(black-white) N=2 crash=2 pass=2 safety  |pass       |-DN=2 -DBW=1 -DCRASHES=2 -DPASSES=2|safety  |pass      |6
pass(black-white) N=2 crash=2 pass=1 abort=1 safety|pass |-DN=2 -DBW=1 -DCRASHES=2 -DPASSES=1 -DABORTS=1|safety|pass|15
pass(boulangerie) N=2 crash=2 pass=2 safety  |pass       |-DN=2 -DBOUL=1 -DCRASHES=2 -DPASSES=2|safety  |pass      |8
pass(boulangerie) N=2 crash=2 pass=1 abort=1 safety|pass |-DN=2 -DBOUL=1 -DCRASHES=2 -DPASSES=1 -DABORTS=1|safety|pass|12
pass(boulangerie) N=3 pass=1 safety          |pass       |-DN=3 -DBOUL=1 -DPASSES=1 -DMAXNUM=4|safety|pass|40
pass(boulangerie)-no-settle N=2              |pass       |-DN=2 -DBOUL=1 -DNO_SETTLE=1|safety  |fail:mutex|1
pass(boulangerie)-no-close N=2               |pass       |-DN=2 -DBOUL=1 -DNO_CLOSE=1|safety  |fail:mutex|1
pass-abort-no-settle N=2 abort=1             |pass       |-DN=2 -DPASSES=1 -DABORTS=1 -DABORT_NO_SETTLE=1|safety|fail:mutex|1
pass(black-white)-abort-no-settle N=2 abort=1|pass       |-DN=2 -DBW=1 -DPASSES=1 -DABORTS=1 -DABORT_NO_SETTLE=1|safety|fail:mutex|1
pass(boulangerie)-abort-no-settle N=2 abort=1|pass       |-DN=2 -DBOUL=1 -DPASSES=1 -DABORTS=1 -DABORT_NO_SETTLE=1|safety|fail:mutex|1
black-white-shared N=3 RRW readers keep colour safety|black_white_shared|-DN=3 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DRMASK=3 -DWMASK=4|safety|pass|8
black-white-shared N=2 readers keep colour crash=2 abort=2 safety|black_white_shared|-DN=2 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DCRASHES=2 -DABORTS=2|safety|pass|10
black-white-shared N=2 readers keep colour crash=1 abort=1 liveness|black_white_shared|-DN=2 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DCRASHES=1 -DABORTS=1 -DFIFO=0|liveness|pass|10
black-white-shared-readers-keep-colour-overlap N=3 (reachable)|black_white_shared|-DN=3 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DREACH=1|safety|fail:reach|1
black-white-shared-readers-keep-colour-choosing-bit N=3 RRW liveness|black_white_shared|-DN=3 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DRMASK=3 -DWMASK=4 -DFIFO=0|liveness|fail:liveness|2
look: lamport N=2 crash=2 abort=2 safety     |lamport    |-DLOOK=1 -DN=2 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6|safety|pass |2
look-no-doorway: lamport N=2               |lamport    |-DLOOK=1 -DLOOK_NO_DOORWAY=1 -DN=2 -DFIFO=0|safety|fail:mutex|1
look: lamport N=2 crash=2 abort=2 liveness   |lamport    |-DLOOK=1 -DN=2 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6 -DFIFO=0|liveness|pass|2
look: boulangerie N=2 crash=2 abort=2 safety |boulangerie|-DLOOK=1 -DN=2 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6|safety|pass |2
look: boulangerie N=2 crash=2 abort=2 liveness|boulangerie|-DLOOK=1 -DN=2 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6 -DFIFO=0|liveness|pass|2
look: black-white N=2 crash=2 abort=2 safety |black_white|-DLOOK=1 -DN=2 -DCRASHES=2 -DABORTS=2|safety|pass |2
look: black-white N=2 crash=2 abort=2 liveness|black_white|-DLOOK=1 -DN=2 -DCRASHES=2 -DABORTS=2 -DFIFO=0|liveness|pass|3
look: jayanti N=2 crash=2 abort=2 safety     |jayanti    |-DLOOK=1 -DN=2 -DCRASHES=2 -DABORTS=2|safety|pass |2
look: jayanti N=2 crash=2 abort=2 liveness   |jayanti    |-DLOOK=1 -DN=2 -DCRASHES=2 -DABORTS=2 -DFIFO=0 -DCLUSTER=0|liveness|pass|2
look: lamport-shared N=2 modes=any crash=2 abort=2|lamport_shared|-DLOOK=1 -DN=2 -DSEQ=1 -DCRASHES=2 -DABORTS=2 -DMAXNUM=6|safety|pass|4
look: black-white-shared N=2 readers keep colour crash=2 abort=2|black_white_shared|-DLOOK=1 -DN=2 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DCRASHES=2 -DABORTS=2|safety|pass|20
look: pass(lamport) N=2 crash=2 pass=2 abort=2 safety|pass|-DLOOK=1 -DN=2 -DCRASHES=2 -DPASSES=2 -DABORTS=2|safety|pass|6
look: pass(black-white) N=2 crash=2 pass=2 safety|pass  |-DLOOK=1 -DN=2 -DBW=1 -DCRASHES=2 -DPASSES=2|safety|pass|12
look: pass(boulangerie) N=2 crash=2 pass=2 safety|pass  |-DLOOK=1 -DN=2 -DBOUL=1 -DCRASHES=2 -DPASSES=2|safety|pass|16
look: jayanti-pass N=2 crash=2 pass=2 safety |jayanti_pass|-DLOOK=1 -DN=2 -DCRASHES=2 -DPASSES=2|safety|pass|16
EOF
}

# heavy configurations: run-models.sh --full
full_configs() {
cat <<'EOF'
look: lamport N=3 crash=1 abort=1 safety     |lamport    |-DLOOK=1 -DN=3 -DCRASHES=1 -DABORTS=1|safety|pass |50
look: black-white N=3 crash=1 safety         |black_white|-DLOOK=1 -DN=3 -DCRASHES=1|safety|pass |50
look: jayanti N=3 crash=1 abort=1 safety     |jayanti    |-DLOOK=1 -DN=3 -DCRASHES=1 -DABORTS=1|safety|pass |55
boulangerie N=3 crash=1 liveness             |boulangerie|-DN=3 -DCRASHES=1 -DFIFO=0|liveness|pass      |50
lamport N=3 crash=1 liveness                 |lamport    |-DN=3 -DCRASHES=1 -DFIFO=0|liveness|pass      |40
black-white-shared N=3 RRW readers keep colour liveness|black_white_shared|-DN=3 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DRMASK=3 -DWMASK=4 -DFIFO=0|liveness|pass|50
mixed(1=Bakery) N=3 crash=1 abort=1 safety   |boulangerie|-DN=3 -DLAMPORT_MASK=2 -DCRASHES=1 -DABORTS=1|safety  |pass      |120
jayanti-pass N=2 crash=2 abort=2 pass=2 safety|jayanti_pass|-DN=2 -DCRASHES=2 -DABORTS=2 -DPASSES=2|safety|pass   |60
bias (TSO) REVOKERS=2 RPASS=2, crash safety  |bias       |-DREVOKERS=2 -DRPASS=2|safety  |pass      |20
bias (TSO) GRANT, REVOKERS=2 RPASS=2, crash safety|bias|-DGRANT=1 -DREVOKERS=2 -DRPASS=2|safety|pass    |45
black-white-shared N=3 same-colour safety    |black_white_shared|-DN=3 -DSAME_COLOR=1|safety  |pass      |5
black-white-shared N=2 same-colour crash=2 abort=2|black_white_shared|-DN=2 -DSAME_COLOR=1 -DCRASHES=2 -DABORTS=2|safety|pass|3
black-white-shared N=2 same-colour crash=1 abort=1 liveness|black_white_shared|-DN=2 -DSAME_COLOR=1 -DCRASHES=1 -DABORTS=1 -DFIFO=0|liveness|pass|3
black-white-shared N=3 RRW same-colour liveness|black_white_shared|-DN=3 -DSAME_COLOR=1 -DRMASK=3 -DWMASK=4 -DFIFO=0|liveness|pass|3
lamport-shared N=3 modes=any bit safety      |lamport_shared|-DN=3|safety  |pass      |3
lamport-shared N=3 modes=any crash=1 safety  |lamport_shared|-DN=3 -DSEQ=1 -DCRASHES=1|safety  |pass      |60
lamport-shared N=3 RWW crash=1 abort=1 safety|lamport_shared|-DN=3 -DSEQ=1 -DCRASHES=1 -DABORTS=1 -DRMASK=1 -DWMASK=6|safety  |pass      |40
lamport-shared N=3 RRW crash=1 mode-first    |lamport_shared|-DN=3 -DSEQ=1 -DCRASHES=1 -DRMASK=3 -DWMASK=4 -DMODE_FIRST=1|safety  |pass      |10
lamport-shared N=3 RRW crash=1 mode-late     |lamport_shared|-DN=3 -DSEQ=1 -DCRASHES=1 -DRMASK=3 -DWMASK=4 -DMODE_LATE=1|safety  |pass      |10
lamport-shared N=3 modes=any liveness        |lamport_shared|-DN=3 -DSEQ=1 -DFIFO=0|liveness|pass      |30
lamport-shared N=3 RRW crash=1 liveness      |lamport_shared|-DN=3 -DSEQ=1 -DCRASHES=1 -DRMASK=3 -DWMASK=4 -DFIFO=0|liveness|pass      |50
lamport-shared-choosing-bit N=3 RRW crash=1 writer liveness|lamport_shared|-DN=3 -DCRASHES=1 -DRMASK=3 -DWMASK=4 -DFIFO=0 -DLIVE_MASK=4|liveness|pass|10
black-white-shared N=3 RRW same-colour crash=1|black_white_shared|-DN=3 -DSAME_COLOR=1 -DCRASHES=1 -DRMASK=3 -DWMASK=4|safety  |pass      |12
black-white-shared N=2 same-colour crash=2 abort=2 liveness|black_white_shared|-DN=2 -DSAME_COLOR=1 -DCRASHES=2 -DABORTS=2 -DFIFO=0|liveness|pass|20
black-white-shared N=3 RRW same-colour crash=1 liveness|black_white_shared|-DN=3 -DSAME_COLOR=1 -DCRASHES=1 -DRMASK=3 -DWMASK=4 -DFIFO=0|liveness|pass|60
k-holders K=2 N=3 crash=1 safety             |lamport_k  |-DN=3 -DK=2 -DSEQ=1 -DCRASHES=1|safety  |pass      |40
k-holders K=2 N=3 abort=1 safety             |lamport_k  |-DN=3 -DK=2 -DSEQ=1 -DABORTS=1 -DFIFO=0|safety  |pass      |30
k-holders K=2 N=3 crash=1 liveness (numbers<=4)|lamport_k|-DN=3 -DK=2 -DSEQ=1 -DCRASHES=1 -DFIFO=0 -DMAXNUM=4|liveness|pass      |60
k-pass K=2 N=3 passes=1 any passed (numbers<=4)|lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=4 -DPASSES=1|safety|pass|60
k-pass K=2 N=3 passes=1 slot 0 passed crash=1 slot 2 (numbers<=3)|lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=3 -DPASSES=1 -DPASSED_MASK=1 -DCRASHES=1 -DCRASH_MASK=4|safety|pass|125
k-pass K=2 N=3 slot 2 passes slot 0 crash=1 of anyone in a pass (numbers<=3)|lamport_k_pass|-DN=3 -DK=2 -DMAXNUM=3 -DPASSES=1 -DPASSED_MASK=1 -DPASSER_MASK=4 -DCRASHES=1 -DCRASH_IN_PASS=1|safety|pass|90
pass(black-white) N=2 crash=2 pass=2 abort=1 safety|pass |-DN=2 -DBW=1 -DCRASHES=2 -DPASSES=2 -DABORTS=1|safety|pass|16
pass(boulangerie) N=2 crash=2 pass=2 abort=1 safety|pass |-DN=2 -DBOUL=1 -DCRASHES=2 -DPASSES=2 -DABORTS=1|safety|pass|16
pass(black-white) N=2 crash=2 pass=2 abort=2 safety|pass |-DN=2 -DBW=1 -DCRASHES=2 -DPASSES=2 -DABORTS=2|safety|pass|30
pass(boulangerie) N=2 crash=2 pass=2 abort=2 safety|pass |-DN=2 -DBOUL=1 -DCRASHES=2 -DPASSES=2 -DABORTS=2|safety|pass|30
pass(boulangerie) N=3 pass=1 abort=1 safety  |pass       |-DN=3 -DBOUL=1 -DPASSES=1 -DABORTS=1 -DMAXNUM=4|safety|pass|60
pass(black-white) N=3 pass=1 safety          |pass       |-DN=3 -DBW=1 -DPASSES=1|safety  |pass      |30
pass(black-white) N=3 pass=1 abort=1 safety  |pass       |-DN=3 -DBW=1 -DPASSES=1 -DABORTS=1|safety|pass|120
black-white-shared N=2 readers keep colour crash=2 abort=2 liveness|black_white_shared|-DN=2 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DCRASHES=2 -DABORTS=2 -DFIFO=0|liveness|pass|40
black-white-shared N=3 RRW readers keep colour crash=1 abort=1 safety|black_white_shared|-DN=3 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DRMASK=3 -DWMASK=4 -DCRASHES=1 -DABORTS=1|safety|pass|400
black-white-shared N=3 RRW readers keep colour crash=1 liveness|black_white_shared|-DN=3 -DNOFLIP=1 -DBOUND=99 -DNORM=1 -DSEQ=1 -DRMASK=3 -DWMASK=4 -DCRASHES=1 -DFIFO=0|liveness|pass|200
EOF
}

all_configs() {
	configs
	if [ "$full" = 1 ]; then full_configs; fi
}

# ---------------------------------------------------------------------------
usage() { sed -n '2,21s/^# \{0,1\}//p' "$0"; }

keep=0 list=0 full=0 jobs=${MODEL_JOBS:-2}
while [ $# -gt 0 ]; do
	case $1 in
	-k) keep=1 ;;
	--full) full=1 ;;
	-l) list=1 ;;
	-j) shift; jobs=$1 ;;
	-j*) jobs=${1#-j} ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) echo "run-models.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
case $jobs in 1|2) ;; *) jobs=2 ;; esac

# squeeze blanks (the table is aligned with spaces); the fields hold no glob
# characters
# shellcheck disable=SC2048,SC2086
trim() { echo $*; }

selected() {   # $1 = configuration name; the remaining args are filters
	_n=$1; shift
	[ $# -eq 0 ] && return 0
	for _f in "$@"; do
		case $_n in *"$_f"*) return 0 ;; esac
	done
	return 1
}

if [ $list = 1 ]; then
	all_configs | while IFS='|' read -r name model defs mode expect cost; do
		selected "$name" "$@" || continue
		printf '%s  [%s.pml %s; %s; %s]\n' "$(trim "$name")" "$(trim "$model")" \
			"$(trim "$defs")" "$(trim "$mode")" "$(trim "$expect")"
	done
	exit 0
fi

# where are the models?  automake's srcdir is the top source dir (this file
# is tests/model/run-models.sh there); by hand it may be this directory.
here=$(cd "$(dirname "$0")" && pwd)
srcdir=${srcdir:-$here}
modeldir=
for d in "$srcdir/tests/model" "$srcdir" "$here"; do
	if [ -f "$d/lamport.pml" ]; then modeldir=$(cd "$d" && pwd); break; fi
done
if [ -z "$modeldir" ]; then
	echo "run-models.sh: cannot find the .pml files (srcdir=$srcdir)" >&2
	exit 99
fi

# tools: skip (77) when missing
SPIN=${SPIN:-spin}
# -O1: pan runs as fast as with -O2 here and compiles in half the time
# (configurations of cost 1 are compiled with -O0)
PAN_CFLAGS=${PAN_CFLAGS:--O1}
if ! command -v "$SPIN" >/dev/null 2>&1; then
	echo "SKIP: spin not found (set SPIN=...)"
	exit 77
fi
if [ -z "${CC:-}" ]; then
	for c in cc gcc clang; do
		if command -v $c >/dev/null 2>&1; then CC=$c; break; fi
	done
fi
first_word() { echo "$1"; }
# shellcheck disable=SC2086
if [ -z "${CC:-}" ] || ! command -v "$(first_word $CC)" >/dev/null 2>&1; then
	echo "SKIP: no C compiler found (set CC=...)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bakery-model.XXXXXX") || exit 99
cleanup() { if [ $keep = 1 ]; then echo "work directory kept: $tmp"; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------
# run one configuration in $tmp/cNN, leave its result line in $tmp/cNN.res
# ---------------------------------------------------------------------------
run_one() {   # idx name model defs mode expect cost
	idx=$1 name=$2 model=$3 defs=$4 mode=$5 expect=$6 cost=$7
	w=$tmp/c$idx
	mkdir -p "$w" || return
	cp "$modeldir/$model.pml" "$w/" || return
	(
	cd "$w" || exit 1
	if [ "$mode" = liveness ]; then
		sdefs="$defs -DLIVENESS" ccflags='' panflags="-a -f"
	else
		sdefs=$defs ccflags=-DSAFETY panflags=''
	fi
	echo "$SPIN $sdefs -a $model.pml" > how.txt
	# shellcheck disable=SC2086
	if ! $SPIN $sdefs -a $model.pml > spin.out 2>&1; then
		echo "FAIL $name: spin -a failed: $(tail -n 1 spin.out)" > "../c$idx.res"
		exit 0
	fi
	# shellcheck disable=SC2086
	# small runs: compiling costs more than the run, do not optimise
	if [ "$cost" -le 1 ]; then opt=-O0; else opt=$PAN_CFLAGS; fi
	# shellcheck disable=SC2086
	if ! $CC $opt -w $ccflags -o pan pan.c > cc.out 2>&1; then
		echo "FAIL $name: cc failed: $(tail -n 1 cc.out)" > "../c$idx.res"
		exit 0
	fi
	# shellcheck disable=SC2086
	./pan -m1000000 $panflags > pan.out 2>&1
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | tail -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | tail -n 1)
	secs=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' pan.out | tail -n 1)
	[ -n "$secs" ] || secs=0
	kind=
	if grep -q 'acceptance cycle' pan.out; then kind=liveness
	elif grep -q 'assertion violated (ncs==0)' pan.out; then kind=mutex
	elif grep -q 'assertion violated ((nw==0)' pan.out; then kind=mutex
	elif grep -q 'assertion violated (ncs<' pan.out; then kind=mutex
	elif grep -q 'assertion violated (ahead\[i\]==0)' pan.out; then kind=fifo
	elif grep -q 'assertion violated (overtaken==0)' pan.out; then kind=fifo
	elif grep -q 'assertion violated *!(reach)' pan.out; then kind=reach
	elif grep -q 'assertion violated (num<=' pan.out; then kind=bound
	elif grep -q 'assertion violated' pan.out; then kind=monitor
	elif grep -q 'invalid end state' pan.out; then kind=deadlock
	fi
	trunc=
	grep -q 'max search depth too small' pan.out && trunc=" (search depth too small: incomplete)"
	what="$errors errors, $states states, ${secs}s"
	if [ -z "$errors" ]; then
		echo "FAIL $name: pan did not finish: $(tail -n 1 pan.out)" > "../c$idx.res"
	elif [ "$expect" = pass ]; then
		if [ "$errors" = 0 ] && [ -z "$trunc" ]; then
			echo "PASS $name: $what" > "../c$idx.res"
		else
			echo "FAIL $name: $what${kind:+ ($kind)}$trunc [rerun with -k; trail: cd $w && $SPIN -t -p $sdefs $model.pml]" > "../c$idx.res"
		fi
	else
		want=${expect#fail:}
		if [ "$errors" != 0 ] && [ "$kind" = "$want" ]; then
			echo "PASS (expected failure) $name: $errors error ($kind violated), $states states, ${secs}s" > "../c$idx.res"
		else
			echo "FAIL $name: expected a $want violation, got $what${kind:+ ($kind)}$trunc" > "../c$idx.res"
		fi
	fi
	rm -f pan pan.c pan.h pan.m pan.b pan.t pan.p   # keep outputs and trails
	)
}

# ---------------------------------------------------------------------------
# read the selected configurations; $jobs lanes share them out
# ---------------------------------------------------------------------------
i=0
all_configs | while IFS='|' read -r name model defs mode expect cost; do
	name=$(trim "$name") model=$(trim "$model") mode=$(trim "$mode") expect=$(trim "$expect")
	selected "$name" "$@" || continue
	i=$((i + 1))
	idx=$(printf '%02d' $i)
	printf '%s|%s|%s|%s|%s|%s|%s\n' "$idx" "$name" "$model" "$(trim "$defs")" "$mode" "$expect" "$(trim "$cost")"
done > "$tmp/list"
sort -t '|' -k 7,7nr -k 1,1 "$tmp/list" > "$tmp/order"

if [ ! -s "$tmp/list" ]; then
	echo "run-models.sh: no configuration matches" >&2
	echo "0 passed, 0 failed"
	exit 1
fi

start=$(date +%s)
lane() {   # takes the next unclaimed configuration (mkdir is atomic)
	while IFS='|' read -r idx name model defs mode expect cost; do
		mkdir "$tmp/claim$idx" 2>/dev/null || continue
		run_one "$idx" "$name" "$model" "$defs" "$mode" "$expect" "$cost"
	done < "$tmp/order"
}
l=0
while [ $l -lt "$jobs" ]; do
	lane $l &
	l=$((l + 1))
done
wait
end=$(date +%s)

passed=0 failed=0
while IFS='|' read -r idx name model defs mode expect cost; do
	if [ -f "$tmp/c$idx.res" ]; then
		line=$(cat "$tmp/c$idx.res")
	else
		line="FAIL $name: no result"
	fi
	echo "$line"
	case $line in
	PASS*) passed=$((passed + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
done < "$tmp/list"
echo "total wall time: $((end - start))s (pan runs at a time: $jobs)"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
