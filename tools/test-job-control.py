#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-job-control.py - `make check`: job control of `bakery run` and
`bakery flock` in an interactive shell on a pseudo-terminal.

For each: a job holding a lock is stopped with Ctrl-Z, and the prompt must
come back, the job stopped (wrapper and command) and the lock still held;
`bg` continues it in the background and `fg` brings it back; then Ctrl-C
ends it (status 130) and the lock is free.  And a script running the job
stops at Ctrl-C (the wrapper dies of SIGINT, as flock(1) would).  The shell is bash, started
interactive (job control on) on a pty; skipped (77) without bash.
"""
import os
import pty
import re
import select
import shutil
import signal
import sys
import tempfile
import time

TERMINAL_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM,
                    signal.SIGPIPE, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)
TIMEOUT = 30.0          # seconds for anything to show: the machine may be busy
PROMPT = "PROMPT> "


class Failure(Exception):
    pass


class Shell:
    """An interactive bash on a pty, read as it writes."""

    def __init__(self, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            # a terminal's session, whatever this test was started with:
            # a suite run in the background has SIGINT and SIGQUIT ignored
            # (and Python ignores SIGPIPE), and ignored signals stay so
            # for bash's jobs, whose Ctrl-C would then end nothing
            for sig in TERMINAL_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
        self.seen = ""

    def send(self, text):
        os.write(self.fd, text.encode())

    def expect(self, pattern, what):
        """Read until PATTERN (a regex) shows; what it matched."""
        deadline = time.monotonic() + TIMEOUT
        regex = re.compile(pattern)
        while True:
            match = regex.search(self.seen)
            if match:
                self.seen = self.seen[match.end():]
                return match
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("%s: not within %g s; the terminal shows: %r"
                              % (what, TIMEOUT, self.seen[-400:]))
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.fd, 4096).decode(errors="replace")
                except OSError:
                    raise Failure("%s: the shell went away; it showed: %r"
                                  % (what, self.seen[-400:]))

    def command(self, line, what):
        """Run LINE, wait for the next prompt; the output before it."""
        self.send(line + "\n")
        return self.expect(r"(?s)(.*?)" + re.escape(PROMPT), what).group(1)

    def close(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        os.close(self.fd)


def state(pid):
    """The state letter of process PID ("T" stopped), or None if gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def in_foreground(pid):
    """Is PID's process group the terminal's foreground group?"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[2] == fields[5]           # pgrp == tpgid


def children(pid):
    """The child processes of PID."""
    kids = []
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                kids += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return kids


def wait_state(pid, want, what):
    deadline = time.monotonic() + TIMEOUT
    while state(pid) not in want:
        if time.monotonic() > deadline:
            raise Failure("%s: process %d is %s, not %s" % (what, pid, state(pid), want))
        time.sleep(0.05)


def one_job(sh, job, busy, name):
    """JOB holds the lock and sleeps; BUSY tries the lock (prints busy=N)."""
    # the marker is printed in two halves, so that the echo of the command
    # line is not taken for it
    sh.send("%s -- sh -c 'printf \"in%%s\\n\" side; exec sleep 120'\n" % job)
    sh.expect(r"inside", name + ": the job did not start")
    sh.send("\x1a")                                      # Ctrl-Z
    sh.expect(r"Stopped.*\r?\n(.*\n)?" + re.escape(PROMPT),
              name + ": Ctrl-Z did not give the prompt back")
    jobs = sh.command("jobs -l", name + ": jobs -l")
    found = re.search(r"\[1\]\+\s+(\d+) Stopped", jobs)
    if not found:
        raise Failure("%s: jobs -l does not show the job stopped: %r" % (name, jobs))
    wrapper = int(found.group(1))
    wait_state(wrapper, "Tt", name + ": the wrapper after Ctrl-Z")
    command = children(wrapper)
    if len(command) != 1:
        raise Failure("%s: the wrapper has children %s" % (name, command))
    wait_state(command[0], "Tt", name + ": the command after Ctrl-Z")
    out = sh.command(busy, name + ": a try of the lock while stopped")
    if "busy=" not in out or "busy=0" in out:
        raise Failure("%s: the lock was not held while the job was stopped: %r" % (name, out))
    sh.command("bg", name + ": bg")
    wait_state(command[0], "S", name + ": the command after bg")
    wait_state(wrapper, "S", name + ": the wrapper after bg")
    sh.send("fg\n")
    sh.expect(r"sleep 120'?\r?\n", name + ": fg")
    # the job has the terminal before Ctrl-C (bash prints the command
    # before it hands the terminal over: a busy machine can be between)
    deadline = time.monotonic() + TIMEOUT
    while not in_foreground(wrapper):
        if time.monotonic() > deadline:
            raise Failure("%s: fg did not give the job the terminal" % name)
        time.sleep(0.05)
    time.sleep(0.3)
    sh.send("\x03")                                      # Ctrl-C
    sh.expect(re.escape(PROMPT), name + ": Ctrl-C did not end the job")
    out = sh.command("echo \"status=$?\"", name + ": the job's status")
    if "status=130" not in out:
        raise Failure("%s: the job ended with %r, not status=130" % (name, out))
    out = sh.command(busy, name + ": a try of the lock once it ended")
    if "busy=0" not in out:
        raise Failure("%s: the lock was not given up: %r" % (name, out))


def script_stops(sh, job, name, tmp):
    """A script running JOB stops at Ctrl-C, as it would around flock(1):
    bash goes on after a child that exited (even with 130), and stops only
    if its child died of SIGINT, so the wrapper must die of it too."""
    script = os.path.join(tmp, "script-%s.sh" % name.split()[0])
    with open(script, "w") as f:
        f.write("%s -- sh -c 'printf \"in%%s\\n\" side; exec sleep 120'\n"
                "echo went-on\n" % job)
    sh.send("bash '%s'\n" % script)
    sh.expect(r"inside", name + ": the script's job did not start")
    time.sleep(0.3)
    sh.send("\x03")                                      # Ctrl-C
    out = sh.expect(r"(?s)(.*?)" + re.escape(PROMPT),
                    name + ": Ctrl-C did not end the script").group(1)
    if "went-on" in out:
        raise Failure("%s: the script went on after Ctrl-C: %r" % (name, out))
    out = sh.command("echo \"status=$?\"", name + ": the script's status")
    if "status=130" not in out:
        raise Failure("%s: the script ended with %r, not status=130" % (name, out))


def main():
    if not shutil.which("bash"):
        print("test-job-control: no bash: skipped")
        return 77
    build = os.environ.get("top_builddir", ".")
    bakery = os.path.abspath(os.path.join(build, "tools", "bakery"))
    region = "/bakery-jobctl-%d" % os.getpid()
    paths = "/bakery-jobctl-paths-%d" % os.getpid()     # flock's path lock
    tmp = tempfile.mkdtemp(prefix="bakery-jobctl.")
    lockfile = os.path.join(tmp, "lockfile")
    env = dict(os.environ, PS1=PROMPT, PS2="", TERM="dumb", HISTFILE="/dev/null",
               PROMPT_COMMAND="", BAKERY_PATH_REGION=paths)
    sh = Shell(env)
    failures = 0
    try:
        sh.expect(re.escape(PROMPT), "the shell's first prompt")
        sh.command("stty -echoctl", "stty")
        cases = [
            ("run", "'%s' run %s jobctl" % (bakery, region),
             "'%s' run -n %s jobctl -- true 2>/dev/null; echo \"busy=$?\"" % (bakery, region)),
            ("flock", "'%s' flock '%s'" % (bakery, lockfile),
             "'%s' flock -n '%s' true; echo \"busy=$?\"" % (bakery, lockfile)),
        ]
        for name, job, busy in cases:
            try:
                one_job(sh, job, busy, name)
            except Failure as e:
                print("FAIL: %s" % e)
                failures += 1
                sh.send("\x03")
                sh.command("kill -9 %1 2>/dev/null; wait", name + ": clean-up")
            try:
                script_stops(sh, job, name + " in a script", tmp)
            except Failure as e:
                print("FAIL: %s" % e)
                failures += 1
                sh.send("\x03")
                sh.command("wait", name + " in a script: clean-up")
    except Failure as e:
        print("FAIL: %s" % e)
        failures += 1
    finally:
        sh.close()
        for name in (region, paths):
            os.spawnv(os.P_WAIT, bakery, [bakery, "unlink", name])
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("test-job-control: %d failure(s)" % failures)
        return 1
    print("test-job-control: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
