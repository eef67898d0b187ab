"""The docs stay true: the generated references match the code, every shown `$ obsctl ...` and
`$ printq ...` example prints what the docs say, and the links between pages resolve.

When one of these fails after a change to a command, a route or an output, run `make docs`
(docs/generate.py) and review the diff."""

from __future__ import annotations

import difflib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ROOT / "docs"
AREA_PAGES = ["ingest", "otlp", "sessions", "analytics", "alerts", "webhooks", "triage", "postmortem", "sla",
              "scorecards", "maintenance", "configuration", "security", "http-api", "http", "cli", "printq",
              "development", "decisions", "performance", "team", "remote"]


def load_generator():
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = load_generator()


def stale_message(name: str, committed: str, fresh: str) -> str:
    diff = "".join(list(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True),
                                             f"{name} (committed)", f"{name} (generated)"))[:60])
    return f"{name} is stale: {generate.STALE_HINT}\n{diff}"


def test_the_cli_reference_is_current():
    fresh = generate.cli_reference()
    committed = (DOCS / "cli.md").read_text()
    assert committed == fresh, stale_message("docs/cli.md", committed, fresh)


def test_the_cli_reference_covers_every_command():
    text = (DOCS / "cli.md").read_text()
    _, commands = generate._obsctl_commands()
    for path, _command in commands:
        assert f"## `{' '.join(('obsctl', *path))}`" in text
    for name in ("printq", "printq query", "printq metrics", "printq serve"):
        assert f"## `{name}`" in text


def test_the_http_reference_is_current():
    fresh = generate.http_reference()
    committed = (DOCS / "http.md").read_text()
    assert committed == fresh, stale_message("docs/http.md", committed, fresh)


def test_the_http_reference_covers_every_route():
    text = (DOCS / "http.md").read_text()
    for path, item in generate.openapi_document()["paths"].items():
        for method in item:
            if method in {"get", "post", "put", "patch", "delete"}:
                assert f"## `{method.upper()} {path}`" in text


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory):
    return generate.build_template(tmp_path_factory.mktemp("docs"))


def pages_with_examples() -> list[Path]:
    return [page for page in generate.example_pages()
            if any(generate.parse_block(m["body"]) for m in generate.FENCE.finditer(page.read_text()))]


@pytest.mark.parametrize("page", pages_with_examples(), ids=lambda p: p.name)
def test_examples_print_what_the_docs_show(page, demo_template):
    committed = page.read_text()
    fresh, stale = generate.refresh_examples(committed, demo_template)
    assert not stale, stale_message(str(page.relative_to(ROOT)), committed, fresh)


def test_examples_exist_for_the_main_commands():
    shown = "\n".join(page.read_text() for page in generate.example_pages())
    for command in ("obsctl ingest", "obsctl sessions list", "obsctl explain", "obsctl export", "obsctl compare",
                    "obsctl analytics", "obsctl alerts evaluate", "obsctl webhooks", "obsctl triage",
                    "obsctl postmortem", "obsctl sla check", "obsctl scorecards", "obsctl db info",
                    "printq livePercent greater 50", "printq metrics"):
        assert f"$ {command}" in shown, command


def test_example_matching_allows_only_the_documented_placeholders():
    assert generate.matches(["rule_0123456789abcdef ok"], ["rule_fedcba9876543210 ok"])
    assert not generate.matches(["rule_0123456789abcdef ok"], ["rule_fedcba9876543210 failed"])
    assert generate.matches(["a", "...", "z"], ["a", "b", "c", "z"])
    assert not generate.matches(["a", "...", "z"], ["a", "b", "c", "y"])
    assert not generate.matches(["12 sessions"], ["13 sessions"])
    assert generate.refreshed(["a", "...", "z"], ["a", "b", "c", "y"]) == ["a", "...", "y"]


def test_the_readme_is_short_and_every_area_has_a_page():
    assert len((ROOT / "README.md").read_text().splitlines()) < 200
    for name in AREA_PAGES:
        assert (DOCS / f"{name}.md").is_file(), name


def slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = generate.FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, flags=re.MULTILINE)}


@pytest.mark.parametrize("page", [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted(DOCS.glob("otel/*.md"))],
                         ids=lambda p: p.name)
def test_links_between_pages_resolve(page):
    text = generate.FENCE.sub("", page.read_text())
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (page.parent / file).resolve() if file else page
        missing_anchor = bool(anchor) and linked.suffix == ".md" and anchor not in anchors(linked)
        if not linked.exists() or missing_anchor:
            broken.append(target)
    assert broken == []
