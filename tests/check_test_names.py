#!/usr/bin/env python3
"""Every Catch2 test case runs under CTest: no test name holds a character catch_discover_tests mangles.

Catch2 2.13's catch_discover_tests splits a name at ';' (a CMake list separator): CTest then runs each
half as a filter that matches no test case, and Catch exits 0, so the test case never runs yet passes.
A leading space or a ',' is harmless; ';' is not. usage: check_test_names.py TESTS_DIR
"""
import re
import sys
from pathlib import Path

names = []
for path in sorted(Path(sys.argv[1]).rglob("*.cpp")):
    for m in re.finditer(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"', path.read_text(errors="replace")):
        names.append((path, m.group(1)))
bad = [(p, n) for p, n in names if ";" in n]
for p, n in bad:
    print(f"{p}: test case name holds ';', which CTest splits into filters that run nothing: {n}")
if not names:
    raise SystemExit("no TEST_CASE found: wrong folder?")
print(f"{len(names)} test case names, {len(bad)} with ';'")
sys.exit(1 if bad else 0)
