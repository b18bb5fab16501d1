"""Chinese text in figures, on Linux, macOS and Windows.

matplotlib's default font has no Chinese glyphs: :func:`cjk_font` picks the first installed
font of :data:`CJK_FONTS` and :func:`use_figure_language` puts it first in matplotlib's
fallback list. Without a CJK font, figure text stays English (with a one-line notice), never
empty boxes.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TextIO

from ctxlab.lab.language import Language

__all__ = ["CJK_FONTS", "SC_FAMILY", "cjk_font", "simplified_chinese_faces", "use_figure_language"]

#: Tried in order. Noto/Source Han: Linux (for Debian's fonts-noto-cjk see
#: :func:`simplified_chinese_faces`); Microsoft YaHei / SimHei: Windows; PingFang SC /
#: Hiragino Sans GB: macOS.
CJK_FONTS: tuple[str, ...] = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Noto Sans CJK JP",
    "Microsoft YaHei",
    "PingFang SC",
    "Hiragino Sans GB",
    "SimHei",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
)


@functools.lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The first installed font of :data:`CJK_FONTS`, or ``None``."""
    from matplotlib import font_manager

    def first_installed() -> str | None:
        installed = {entry.name for entry in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in installed), None)

    found = first_installed()
    # The Noto CJK collection's first face is Japanese: matplotlib (3.10 reads only face 0
    # of a .ttc) then draws 直, 骨, 角 … in Japanese forms. Add the SC face instead.
    if found in (None, "Noto Sans CJK JP") and simplified_chinese_faces():
        found = first_installed()
    if found is None:
        # matplotlib caches its font list: a font installed after the cache was written is
        # not in it. Add the system's CJK font files by name, then look again.
        for path in font_manager.findSystemFonts():
            if any(hint in path.lower() for hint in _CJK_FILE_HINTS):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):  # an unreadable font file
                    continue
        found = first_installed()
    return found


#: The face a Chinese reader expects, inside Debian's Noto CJK collections (fonts-noto-cjk).
SC_FAMILY = "Noto Sans CJK SC"


def simplified_chinese_faces() -> list[str]:
    """Make the Simplified Chinese face of the system's Noto Sans CJK collections known to
    matplotlib; returns the files added (empty when there is no such collection). The face
    is copied once, with fontTools (a matplotlib dependency), into matplotlib's cache folder
    as a plain .otf (≈16 MB per weight, ≈2 s), and added from there on every later run."""
    import matplotlib
    from matplotlib import font_manager

    added: list[str] = []
    cache = Path(matplotlib.get_cachedir()) / "ctxlab-fonts"
    for source in sorted(font_manager.findSystemFonts(fontext="ttc")):
        name = Path(source).name
        if not name.lower().startswith("notosanscjk") or not name.lower().endswith(".ttc"):
            continue
        target = cache / f"{Path(source).stem}-SC.otf"
        try:
            if not target.is_file():
                from fontTools.ttLib import TTCollection  # type: ignore[import-untyped]

                faces = TTCollection(source, lazy=True).fonts
                face = next((f for f in faces if f["name"].getDebugName(1) == SC_FAMILY), None)
                if face is None:
                    continue
                cache.mkdir(parents=True, exist_ok=True)
                partial = target.with_suffix(".part")
                face.save(str(partial))
                partial.replace(target)
            font_manager.fontManager.addfont(str(target))
        except (OSError, RuntimeError, ValueError, KeyError, ImportError):
            continue  # an unreadable collection or cache: keep the fonts matplotlib has
        added.append(str(target))
    return added


#: File-name fragments of the fonts in CJK_FONTS (Noto, Source Han, YaHei, PingFang, …).
_CJK_FILE_HINTS = ("cjk", "notosanssc", "sourcehansans", "msyh", "pingfang", "hiragino",
                   "simhei", "wqy")  # fmt: skip


def use_figure_language(language: str, *, notice: TextIO | None = None) -> Language:
    """Prepare matplotlib for figure text in ``language``; returns the language to draw in:
    ``"zh"`` with a CJK font installed (first in the fallback list, DejaVu Sans after it for
    the Latin text and symbols it lacks); without one ``"en"``, with a one-line notice to
    ``notice`` (stdout by default)."""
    import matplotlib as mpl

    fallback = ["DejaVu Sans"]
    if language != "zh":
        mpl.rcParams["font.family"] = ["sans-serif"]
        mpl.rcParams["font.sans-serif"] = fallback
        return "en"
    font = cjk_font()
    if font is None:
        print(
            "No Chinese font found (tried: " + ", ".join(CJK_FONTS[:3]) + ", …): figure text "
            "stays in English. Install one, e.g. `apt-get install fonts-noto-cjk`.",
            file=notice or sys.stdout,
        )
        mpl.rcParams["font.sans-serif"] = fallback
        return "en"
    # Name the fonts themselves in font.family: matplotlib falls back glyph by glyph only
    # across that list (a generic "sans-serif" resolves to one font), so ✔, ✘ and other
    # symbols the CJK font lacks come from DejaVu Sans instead of showing as boxes.
    mpl.rcParams["font.family"] = [font, *fallback]
    mpl.rcParams["font.sans-serif"] = [font, *fallback]
    mpl.rcParams["axes.unicode_minus"] = False  # CJK fonts often lack U+2212
    return "zh"
