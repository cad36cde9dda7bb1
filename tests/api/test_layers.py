"""The layer map is complete: every package and top-level module of vtcode sits in a layer of
the import-linter contract (pyproject.toml), so a new one cannot escape the check that
`bash scripts/test` runs with `lint-imports`, and the map names nothing that does not exist."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _contract_layers() -> list[str]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = data["tool"]["importlinter"]["contracts"]
    assert contract["type"] == "layers"
    layers: list[str] = contract["layers"]
    return layers


def test_every_module_is_in_exactly_one_layer() -> None:
    named = [n for layer in _contract_layers() for n in re.split(r"\s*[|:]\s*", layer)]
    assert len(named) == len(set(named)), "a module is named in two layers"
    package = REPO / "vtcode"
    present = {
        f"vtcode.{p.stem if p.is_file() else p.name}"
        for p in package.iterdir()
        if (p.is_file() and p.suffix == ".py" and p.name != "__init__.py")
        or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert sorted(present - set(named)) == [], "not in any layer of [tool.importlinter]"
    assert sorted(set(named) - present) == [], "the layer map names what does not exist"


def test_the_architecture_page_shows_the_same_order() -> None:
    """docs/architecture.md draws the layers top to bottom; its order must match the contract's
    for every package the page names."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    drawing = page.split("## Layers", 1)[1].split("```", 2)[1]
    first_line: dict[str, int] = {}
    for number, line in enumerate(drawing.splitlines()):
        for word in re.findall(r"^[a-z_, ]+?(?=\s{2,}|$)", line):
            for name in re.split(r",\s*", word.strip()):
                if name:
                    first_line.setdefault(name, number)
    order = []
    for layer in _contract_layers():
        for name in re.split(r"\s*[|:]\s*", layer):
            short = name.removeprefix("vtcode.")
            if short in first_line:
                order.append((first_line[short], short))
    rows = [row for row, _ in order]
    assert rows == sorted(rows), f"page order differs from the contract: {order}"
