"""The dashboard's assets: vendored from the npm registry with their licences, recorded in
VENDORED.md, shipped in the package, and under the JavaScript budget (250 KB per page)."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
UI = ROOT / "obsctl" / "web" / "ui"
STATIC = UI / "static"
JS_BUDGET = 250 * 1024


def test_vendored_files_and_their_record_agree():
    record = (STATIC / "vendor" / "VENDORED.md").read_text()
    assert "| [uPlot](https://github.com/leeoniya/uPlot) | 1.6.32 |" in record
    uplot = STATIC / "vendor" / "uplot"
    assert sorted(p.name for p in uplot.iterdir()) == ["LICENSE", "uPlot.iife.min.js", "uPlot.min.css"]
    assert (uplot / "LICENSE").read_text().startswith("The MIT License")
    assert "uPlot" in (uplot / "uPlot.iife.min.js").read_text()[:2000]


def test_every_page_ships_under_the_javascript_budget():
    base = (UI / "templates" / "base.html").read_text()
    scripts = re.findall(r"filename='([^']+\.js)'", base)
    assert scripts == ["vendor/uplot/uPlot.iife.min.js", "dashboard.js"]
    total = sum((STATIC / s).stat().st_size for s in scripts)
    assert total < JS_BUDGET, total
    # No template loads another script, nor anything from another origin.
    for template in (UI / "templates").glob("*.html"):
        text = template.read_text()
        assert "http://" not in text and "https://" not in text.replace("https://github.com", ""), template
        if template.name != "base.html":
            assert "<script src" not in text, template


def test_the_package_data_covers_every_asset():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["obsctl.web.ui"]
    files = [p.relative_to(UI).as_posix() for p in [*UI.glob("templates/**/*"), *STATIC.rglob("*")] if p.is_file()]
    missing = [f for f in files if not any(fnmatch(f, pattern) and f.count("/") == pattern.count("/")
                                           for pattern in patterns)]
    assert missing == []
