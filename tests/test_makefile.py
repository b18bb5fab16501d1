"""``make lab``, ``make lecture`` and ``make slides`` open the edition of the user's language.

Each target is run as ``make -n`` (print the recipe, run nothing, install nothing), with
``VENV`` pointing at the running interpreter's environment. Checked (issue 12):

* ``LANG=zh`` (or any ``LANG`` starting with ``zh``, e.g. ``zh_CN.UTF-8``) picks the
  Chinese edition, ``notebooks/zh/…``, and JupyterLab's zh_CN language pack through the
  ``overrides.json`` of ``notebooks/_settings/zh``; every other ``LANG`` picks English,
  with no override;
* lecture mode keeps its projector settings and CSS in both languages;
* ``make slides`` writes the English decks to ``slides/`` and the Chinese ones to
  ``slides/zh/``, both using the one offline copy of the assets in ``slides/_assets``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")
OVERRIDE = "--LabApp.app_settings_dir="
ZH_SETTINGS = ROOT / "notebooks" / "_settings" / "zh"


def make_n(
    target: str, *assignments: str, lang: str | None = None, from_scratch: bool = False
) -> str:
    """The recipe ``make -n target`` prints, with LANG set to ``lang`` in the environment.

    ``from_scratch`` adds ``-B``: every step is printed as on a fresh clone, even the ones
    that files left by an earlier run (slides/_assets, say) make up to date here."""
    if MAKE is None:  # pragma: no cover - every supported platform for `make lab` has make
        pytest.skip("GNU make is not installed")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"LAB_LANG", "LANG", "LC_ALL", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    }
    if lang is not None:
        env["LANG"] = lang
    completed = subprocess.run(
        [MAKE, "-n", *(["-B"] if from_scratch else []), target, f"VENV={sys.prefix}", *assignments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def jupyter_line(recipe: str) -> str:
    """The line of the recipe that starts JupyterLab."""
    joined = recipe.replace("\\\n", " ")  # a shell line continued with a backslash
    lines = [line for line in joined.splitlines() if "jupyter lab" in line]
    assert len(lines) == 1, recipe
    return lines[0]


def test_the_zh_settings_set_the_interface_language() -> None:
    overrides = json.loads((ZH_SETTINGS / "overrides.json").read_text(encoding="utf-8"))
    assert overrides == {"@jupyterlab/translation-extension:plugin": {"locale": "zh_CN"}}


@pytest.mark.parametrize(
    ("how", "lang"),
    [(("LANG=zh",), None), ((), "zh_CN.UTF-8"), ((), "zh_TW.UTF-8"), (("LAB_LANG=zh",), "C")],
)
def test_lab_in_chinese_opens_the_chinese_student_edition(
    how: tuple[str, ...], lang: str | None
) -> None:
    line = jupyter_line(make_n("lab", *how, lang=lang))
    assert line.rstrip().endswith(" notebooks/zh/student/"), line
    assert f"{OVERRIDE}{ZH_SETTINGS}" in line
    assert "notebooks/en/" not in line


@pytest.mark.parametrize(
    ("how", "lang"),
    [((), "en_US.UTF-8"), ((), "C.UTF-8"), ((), None), (("LANG=de_DE.UTF-8",), None)],
)
def test_lab_otherwise_opens_the_english_student_edition(
    how: tuple[str, ...], lang: str | None
) -> None:
    line = jupyter_line(make_n("lab", *how, lang=lang))
    assert line.rstrip().endswith(" notebooks/en/student/"), line
    assert OVERRIDE not in line and "notebooks/zh/" not in line


@pytest.mark.parametrize(("lang", "language"), [("zh_CN.UTF-8", "zh"), ("en_US.UTF-8", "en")])
def test_lecture_opens_the_instructor_edition_with_the_lecture_settings(
    lang: str, language: str
) -> None:
    recipe = make_n("lecture", lang=lang)
    line = jupyter_line(recipe)
    assert line.rstrip().endswith(f" notebooks/{language}/instructor/"), line
    assert f'JUPYTERLAB_SETTINGS_DIR="{ROOT}/lecture/settings"' in recipe
    assert "--LabApp.custom_css=True" in recipe
    assert f"static_custom_path={ROOT}/lecture/custom" in recipe
    assert (f"{OVERRIDE}{ZH_SETTINGS}" in line) is (language == "zh")


def test_lecture_with_lang_zh_on_the_command_line() -> None:
    line = jupyter_line(make_n("lecture", "LANG=zh", lang="en_US.UTF-8"))
    assert line.rstrip().endswith(" notebooks/zh/instructor/")
    assert f"{OVERRIDE}{ZH_SETTINGS}" in line


def _nbconvert_options(recipe: str) -> dict[str, str]:
    options = {}
    words = [word.strip("'\"") for word in recipe.replace("\\\n", " ").split()]
    for word, following in zip(words, [*words[1:], ""], strict=True):
        if word.startswith("--") and "=" in word:
            key, _, value = word.partition("=")
            options[key] = value.strip("'")
        elif word == "--output-dir":
            options[word] = following
    return options


def test_slides_of_each_language_go_to_their_own_folder_with_the_shared_assets() -> None:
    english = make_n("slides", lang="en_US.UTF-8", from_scratch=True)
    chinese = make_n("slides", "LANG=zh", lang="en_US.UTF-8", from_scratch=True)
    assert "notebooks/en/instructor/" in english and "notebooks/zh/" not in english
    assert "notebooks/zh/instructor/" in chinese and "notebooks/en/" not in chinese

    en, zh = _nbconvert_options(english), _nbconvert_options(chinese)
    assert en["--output-dir"] == "slides" and zh["--output-dir"] == "slides/zh"
    assert "grep -lE" in english and "slides/*.slides.html" in english
    assert "slides/zh/*.slides.html" in chinese
    # The assets are fetched once into slides/_assets; each deck points at them relative to
    # its own folder, so a copied slides/ folder works offline in both languages.
    assert "slides/_assets" in english and "slides/zh/_assets" not in chinese
    urls = (
        "--SlidesExporter.reveal_url_prefix",
        "--SlidesExporter.require_js_url",
        "--SlidesExporter.jquery_url",
        "--SlidesExporter.mathjax_url",
        "--SlidesExporter.widget_renderer_url",
    )
    for option in urls:
        assert en[option].startswith("_assets/"), (option, en[option])
        assert zh[option] == "../" + en[option], (option, zh[option])
        target = (ROOT / "slides" / "zh" / zh[option].split("?")[0]).resolve()
        assert target == (ROOT / "slides" / en[option].split("?")[0]).resolve()
