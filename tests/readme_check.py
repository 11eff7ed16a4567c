#!/usr/bin/env python3
"""The README's and the docs' shown outputs are what the binary prints.

In README.md and in every docs/*.md page, the quick start's recommendation (whose output "## What it
says" shows) and every fenced block whose first line is `$ ./build/mhacfg ...` are run from the
repository's root, and the shown lines must equal the output's first lines (trailing blanks ignored) up
to a line starting with "..." (an elision). Blocks of commands that measure this machine (bench,
calibrate --device, validate of a fresh calibration) are skipped: their figures are a record of a run,
not a reproducible output. A page without such blocks is not checked; README.md must have some.

usage: readme_check.py MHACFG REPOSITORY_ROOT [--fix]

--fix rewrites each differing block's shown lines (as many as it shows, up to its "..." line) with what
the binary prints now: review the diff before committing it.
"""
import glob
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


def check(mhacfg, root, page, fix=False):
    """(blocks run, mismatches) of one page; with fix, the page is rewritten with the binary's lines."""
    text = open(os.path.join(root, page), encoding="utf-8").read()
    fixed = text
    checked, failures = 0, []
    for cmd, lines in blocks(text):
        args = shlex.split(cmd)[1:]
        if args[0] in ("bench", "validate") or "--device" in args or "cpu.json" in args:
            continue  # measured on this machine: a record of a run, not a reproducible output
        shown_out = written = None
        scratch = tempfile.TemporaryDirectory()  # removed when the block is done
        if "--out" in args:  # write the file elsewhere than the repository (and show the page's name)
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
        out = subprocess.run([mhacfg] + args, capture_output=True, text=True, cwd=root)
        stdout = out.stdout.replace(written, shown_out) if written else out.stdout
        got = [l.rstrip() for l in stdout.splitlines()]
        checked += 1
        for i, want in enumerate(shown):
            have = got[i] if i < len(got) else "(no line)"
            if have != want:
                failures.append(f"{page}: {cmd}\n  line {i + 2} of the block: {want!r}\n  the binary prints:  {have!r}")
                if fix and shown:
                    old = "\n".join(lines[: len(shown)])
                    # The shown lines as they stand in the page (trailing blanks kept), replaced once.
                    start = fixed.find(old)
                    if start >= 0:
                        fixed = fixed[:start] + "\n".join(got[: len(shown)]) + fixed[start + len(old):]
                break
    if fix and fixed != text:
        with open(os.path.join(root, page), "w", encoding="utf-8") as f:
            f.write(fixed)
    return checked, failures


def main():
    mhacfg, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    fix = "--fix" in sys.argv[3:]
    pages = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    status = 0
    for page in pages:
        checked, failures = check(mhacfg, root, page, fix)
        for f in failures:
            print("MISMATCH:", f)
        if checked or page == "README.md":
            print(f"{page}: {checked} blocks run, {len(failures)} differ")
        if failures:
            status = 1
        if checked == 0 and page == "README.md":
            print("no README block found: the check checked nothing")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
