#!/usr/bin/env python3
"""Renders generated HTML reports in headless Chromium (Debian's package) and checks them.

For recommend, analyze and compare: the page names no external resource, Chromium's rendered DOM
holds at least three plots with drawn series, and the screenshot is not blank (many distinct colours,
a real share of non-white pixels). Exit 77 (CTest skip) when Chromium is not installed.
Usage: browser_test.py MHACFG WORK_DIR
"""
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

mhacfg, work = sys.argv[1], Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    print("chromium is not installed (scripts/setup.sh installs it)")
    sys.exit(77)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]


def png_pixels(path):
    """Decodes an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes) into rows of pixel tuples."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), f"unexpected PNG format {depth}/{color}"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return rows


def check(name, args):
    html = work / f"{name}.html"
    r = subprocess.run([mhacfg, *args, "--format", "html"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    html.write_text(r.stdout)
    text = r.stdout
    external = re.findall(r'(?:src|href)\s*=|url\(|https?://|@import', text)
    assert not external, f"{name}: external references {external[:3]}"
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", html.as_uri()],
                             capture_output=True, text=True, timeout=120).stdout
    with tempfile.TemporaryDirectory() as profile:
        png = work / f"{name}.png"
        subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--window-size=1280,1800",
                        f"--screenshot={png}", html.as_uri()], capture_output=True, timeout=120)
    plots = re.findall(r'<svg[^>]*class="plot"', dom)
    assert len(plots) >= 3, f"{name}: {len(plots)} plots in the rendered DOM"
    drawn = len(re.findall(r"<polyline|<circle|<rect|<polygon", dom))
    assert drawn > 20, f"{name}: only {drawn} drawn shapes"
    for axis in ("xlabel", "ylabel", "legend"):
        assert dom.count(axis) >= 3, f"{name}: plots lack {axis}"
    rows = png_pixels(png)
    pixels = [p for row in rows[::4] for p in row[::4]]
    colours = len(set(pixels))
    inked = sum(1 for p in pixels if sum(p) < 720) / len(pixels)
    assert colours > 50 and inked > 0.02, f"{name}: screenshot looks blank ({colours} colours, {inked:.1%} inked)"
    print(f"{name}: {len(plots)} plots, {drawn} shapes, {colours} colours, {inked:.1%} of the page inked")


check("recommend", ["recommend", "--d-model", "4096", "--layers", "32", "--seq", "8192", "--target", "h100-sxm"])
check("analyze", ["analyze", "--model", "deepseek-v2-lite", "--context", "32768", "--target", "h200-sxm"])
check("compare", ["compare", "llama-3-8b", "mistral-7b-v0.1", "model=llama-3-8b,kv-heads=2", "--context", "16384"])
print("3 passed, 0 failed")
