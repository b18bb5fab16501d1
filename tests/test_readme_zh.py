"""The Chinese READMEs (issue 12): linked from the English ones, and their links lead somewhere.

``README.zh.md`` and ``notebooks/README.zh.md`` mirror ``README.md`` and
``notebooks/README.md``. Every relative link in the four files resolves; a link into the
Chinese edition (``notebooks/zh/…``) must name a notebook the English edition has, under
the same name (the Chinese edition is built from the same sources).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parent.parent
READMES = {
    ROOT / "README.md": ROOT / "README.zh.md",
    ROOT / "notebooks" / "README.md": ROOT / "notebooks" / "README.zh.md",
}
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
LABS = ("11.1", "11.2", "11.3", "11.4", "11.5", "11.x")


def links(path: Path) -> list[str]:
    return [target for target in LINK.findall(path.read_text(encoding="utf-8"))
            if "://" not in target]  # fmt: skip


@pytest.mark.parametrize("english", sorted(READMES), ids=lambda p: str(p.relative_to(ROOT)))
def test_english_and_chinese_readmes_link_each_other(english: Path) -> None:
    chinese = READMES[english]
    head = english.read_text(encoding="utf-8").splitlines()[:4]
    assert "中文版: [README.zh.md](README.zh.md)" in head, head
    assert "README.md" in links(chinese)
    assert len(re.findall(r"[\u4e00-\u9fff]", chinese.read_text(encoding="utf-8"))) > 1500


@pytest.mark.parametrize(
    "readme", sorted([*READMES, *READMES.values()]), ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_relative_link_resolves(readme: Path) -> None:
    for target in links(readme):
        path = (readme.parent / target).resolve()
        parts = path.relative_to(ROOT).parts
        if parts[:2] == ("notebooks", "zh") and path.suffix == ".ipynb":
            english = ROOT / "notebooks" / "en" / Path(*parts[2:])
            assert english.is_file(), f"{readme.name}: {target} has no English counterpart"
        else:
            assert path.exists(), f"{readme.relative_to(ROOT)}: broken link {target}"


def test_the_chinese_readme_lists_every_lab_in_the_chinese_student_edition() -> None:
    text = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    for lab in LABS:
        assert re.search(rf"\(notebooks/zh/student/{re.escape(lab)}-[a-z-]+\.ipynb\)", text), lab
    for command in ("make lab LANG=zh", "make lecture LANG=zh", "make slides LANG=zh"):
        assert command in text
    assert "check_implementation" in text and "--ctxlab-impl=my_lab.py" in text
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("lab", "lecture", "slides"):
        assert re.search(rf"^{target}:", makefile, re.MULTILINE)
