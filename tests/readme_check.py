#!/usr/bin/env python3
"""The README's shown outputs are what the binary prints.

The quick start's recommendation (whose output "## What it says" shows) and every fenced block whose
first line is `$ ./build/mhacfg ...` are run from the README's folder, and the shown lines must equal
the output's first lines (trailing blanks ignored) up to a line starting with "..." (an elision).
Blocks of commands that measure this machine (bench, calibrate --device, validate of a fresh
calibration) are skipped: their figures are a record of a run, not a reproducible output.

usage: readme_check.py MHACFG README.md
"""
import re
import shlex
import os
import subprocess
import sys
import tempfile


def blocks(text):
    """(command, shown output lines) of every block that shows a command's output."""
    # The quick start's main command, whose output "## What it says" shows.
    quick = re.search(r"bash scripts/build\.sh && \./build/(mhacfg [^\n]*)", text)
    says = re.search(r"## What it says\s*\n```[a-z]*\n(.*?)```", text, re.S)
    if quick and says:
        yield quick.group(1), says.group(1).splitlines()
    for m in re.finditer(r"```[a-z]*\n(.*?)```", text, re.S):
        lines = m.group(1).splitlines()
        if not lines or not lines[0].startswith("$ ./build/mhacfg "):
            continue
        cmd = lines[0][len("$ ./build/"):]
        i = 1
        while cmd.endswith("\\") and i < len(lines):  # continued on the next line
            cmd = cmd[:-1] + " " + lines[i].strip()
            i += 1
        yield cmd, lines[i:]


def main():
    mhacfg, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
    text = open(readme, encoding="utf-8").read()
    checked, failures = 0, []
    for cmd, lines in blocks(text):
        args = shlex.split(cmd)[1:]
        if args[0] in ("bench", "validate") or "--device" in args or "cpu.json" in args:
            continue  # measured on this machine: a record of a run, not a reproducible output
        shown_out = written = None
        scratch = tempfile.TemporaryDirectory()  # removed when the block is done
        if "--out" in args:  # write the file elsewhere than the README's folder (and show the README's name)
            i = args.index("--out") + 1
            shown_out, written = args[i], scratch.name + "/out.json"
            args[i] = written
        shown = []
        for line in lines:
            if line.lstrip().startswith("..."):
                break
            if line.startswith("$ "):  # a second command in the block: compare up to it
                break
            shown.append(line.rstrip())
        out = subprocess.run([mhacfg] + args, capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(readme)))
        stdout = out.stdout.replace(written, shown_out) if written else out.stdout
        got = [l.rstrip() for l in stdout.splitlines()]
        checked += 1
        for i, want in enumerate(shown):
            have = got[i] if i < len(got) else "(no line)"
            if have != want:
                failures.append(f"{cmd}\n  line {i + 2} of the README block: {want!r}\n  the binary prints:        {have!r}")
                break
    for f in failures:
        print("MISMATCH:", f)
    print(f"{checked} README blocks run, {len(failures)} differ")
    if checked == 0:
        print("no README block found: the check checked nothing")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
