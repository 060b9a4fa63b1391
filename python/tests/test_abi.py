# SPDX-License-Identifier: MIT
"""The ctypes mirrors of bakery.h's public structs (bakery._native) against
the C compiler's layout of them, as tests/unit/abi-layout prints it: a
mirror that drifted would let the library write past a Python buffer."""

import ctypes
import os
import subprocess
import unittest
from typing import Dict, List, Tuple

from bakery import _native

# C struct -> its mirror; a member the mirror spells otherwise (a Python
# keyword) -> its name there
MIRRORS = {
    "bakery_config": _native.Config,
    "bakery_lock_config": _native.LockConfig,
    "bakery_region_info": _native.RegionInfo,
    "bakery_slot_info": _native.SlotInfo,
    "bakery_lock_info": _native.LockInfo,
}
SPELLED = {"pass": "pass_"}

Layout = Dict[str, Tuple[int, List[Tuple[str, int, int]]]]


def parse(text: str) -> Tuple[Layout, Dict[str, int]]:
    """abi-layout's lines: {struct: (size, [(member, offset, size)])} and
    {enum value: its number}."""
    layout: Layout = {}
    values = {}
    for line in text.splitlines():
        words = line.split()
        if words[0] == "struct":
            layout[words[1]] = (int(words[2]), [])
        elif words[0] == "member":
            struct, member = words[1].split(".")
            layout[struct][1].append((member, int(words[2]), int(words[3])))
        elif words[0] == "value":
            values[words[1]] = int(words[2])
    return layout, values


def mirror_layout(cls: type) -> Tuple[int, List[Tuple[str, int, int]]]:
    """The same for a ctypes Structure, with the C names."""
    back = {v: k for k, v in SPELLED.items()}
    members = []
    for field in cls._fields_:
        name = field[0]
        desc = getattr(cls, name)
        members.append((back.get(name, name), desc.offset, desc.size))
    return ctypes.sizeof(cls), members


def c_layout() -> Tuple[Layout, Dict[str, int]]:
    build = os.environ.get("top_builddir")
    program = os.path.join(build, "tests", "unit", "abi-layout") if build else None
    if not program or not os.access(program, os.X_OK):
        raise unittest.SkipTest("tests/unit/abi-layout not built (run from make check)")
    out = subprocess.run([program], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         check=False, universal_newlines=True)
    if out.returncode:
        raise AssertionError("abi-layout failed: " + out.stderr)
    return parse(out.stdout)


class TestMirrors(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        cls.c, cls.values = c_layout()

    def test_every_public_struct_has_a_mirror(self):
        self.assertEqual(sorted(self.c), sorted(MIRRORS))

    def test_mirrors_match_the_compilers_layout(self):
        for struct, cls in MIRRORS.items():
            with self.subTest(struct=struct):
                size, members = self.c[struct]
                msize, mmembers = mirror_layout(cls)
                self.assertEqual(mmembers, members,
                                 "_native.%s drifted from struct %s: (member, offset, size)"
                                 % (cls.__name__, struct))
                self.assertEqual(msize, size, "sizeof(struct %s)" % struct)

    def test_enum_values_are_the_headers(self):
        # BAKERY_SLOT_FREE is _native.SLOT_FREE, and so on
        self.assertTrue(self.values)
        for name, value in self.values.items():
            self.assertEqual(getattr(_native, name[len("BAKERY_"):]), value, name)

    def test_a_drifted_mirror_is_caught(self):
        # the check itself: a mirror with one member too narrow fails it
        fields = [("slots", ctypes.c_uint), ("locks", ctypes.c_uint16),
                  ("mode", _native.mode_t), ("reserved", ctypes.c_uint * 5)]
        drifted = type("Drifted", (ctypes.Structure,), {"_fields_": fields})
        self.assertNotEqual(mirror_layout(drifted), self.c["bakery_config"])


if __name__ == "__main__":
    unittest.main()
