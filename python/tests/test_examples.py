# SPDX-License-Identifier: MIT
"""The examples run: examples/python/workers.py, every ```python block of
docs/python.md (in order, each in a fresh interpreter) and the README's."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

import bakery

from support import CHILD_TIMEOUT, region_name

SRCDIR = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", ".."))


def run_python(path, *args, env=None):
    return subprocess.run([sys.executable, path] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=CHILD_TIMEOUT,
                          universal_newlines=True, env=env)


class TestExamples(unittest.TestCase):

    def test_workers_survive_a_killed_worker(self):
        run = run_python(os.path.join(SRCDIR, "examples", "python", "workers.py"), "3", "50")
        self.assertEqual(run.returncode, 0, run.stdout)
        self.assertIn("nothing lost", run.stdout)
        self.assertIn("exit -9", run.stdout)
        self.assertNotIn("FAILED", run.stdout)

    def test_docs_python_md_examples_run(self):
        with open(os.path.join(SRCDIR, "docs", "python.md")) as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertGreaterEqual(len(blocks), 6)
        name = region_name()
        self.addCleanup(self._unlink, name)
        # the path locks' region and file: the run's own
        paths = name + "-paths"
        self.addCleanup(self._unlink, paths)
        outputs = []
        with tempfile.TemporaryDirectory() as tmp:
            for i, block in enumerate(blocks):
                path = os.path.join(tmp, "example%d.py" % i)
                with open(path, "w") as f:
                    f.write(block.replace('"/jobs"', repr(name)).replace(
                        '"/tmp/report.lock"', repr(os.path.join(tmp, "report.lock"))))
                run = run_python(path, env=dict(os.environ, BAKERY_PATH_REGION=paths))
                self.assertEqual(run.returncode, 0, "block %d:\n%s\n%s" % (i, block, run.stdout))
                outputs.append(run.stdout)
        text = "".join(outputs)
        self.assertIn("my turn", text)
        self.assertIn("repairing what the dead holder left half-done", text)
        self.assertNotIn("not reached", text)
        self.assertIn("4000", text)
        self.assertEqual(sorted(re.findall(r"worker (\d) holds nightly", text)), ["0", "1", "2"])
        self.assertIn('"acquisitions"', text)
        self.assertIn("readable here: True", text)
        self.assertIn("readers inside: 1", text)
        self.assertIn("capacity 2 holding 1", text)
        self.assertIn("the report is ours\nours again\nreading the report\n", text)
        self.assertIn("gave up; still in line: False", text)
        self.assertEqual(text.count("has the lock"), 3)
        self.assertIn("cancelled; waiters left: 0", text)
        self.assertIn("repairing before removing nightly", text)
        with self.assertRaises(bakery.NotFound):     # the last block removed it
            bakery.Region(name)

    def test_readme_python_example_runs(self):
        with open(os.path.join(SRCDIR, "README.md")) as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertEqual(len(blocks), 1)
        name = region_name()
        self.addCleanup(self._unlink, name)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "readme.py")
            with open(path, "w") as f:
                f.write(blocks[0].replace('"/hello-bakery"', repr(name)))
            run = run_python(path)
        self.assertEqual(run.returncode, 0, run.stdout)
        self.assertEqual(run.stdout, "my turn\n")
        bakery.Region(name).close()     # the example used this region

    @staticmethod
    def _unlink(name):
        try:
            bakery.unlink(name)
        except bakery.NotFound:
            pass


if __name__ == "__main__":
    unittest.main()
