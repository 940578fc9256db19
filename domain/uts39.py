"""Seat names by Unicode Technical Standard #39 (name rule 2, domain/names.py; issue 31).

The standard's data comes from ``disarm`` (its bundled confusables.txt and script tables,
Unicode 17.0.0: ``disarm.CONFUSABLES_VERSION``): pure lookups, nothing read at call time.

- :func:`skeleton`: UTS #39's confusable skeleton (section 4), with the digits the standard maps
  to letters (``0``/``O``, ``1``/``l``/``I``), compatibility forms folded and then lower-cased;
  :func:`skeletons` adds the skeleton of the case-folded name: two names look alike when they
  share one.
- :func:`check_scripts`: the mixed-script rule of the "highly restrictive" profile (section
  5.2): one script, or Latin with Han and Japanese kana, with Han and Bopomofo, or with Han
  and Hangul. Common and Inherited characters (digits, spaces, punctuation, marks) go with any.
- :func:`ignorable`: default-ignorable code points (DerivedCoreProperties.txt) that are not
  format characters (those are refused as ``format``): they draw nothing.
"""

from __future__ import annotations

import functools
import unicodedata

import disarm

DATA_VERSION = disarm.CONFUSABLES_VERSION

# UTS #39 5.2, "highly restrictive": the sets of scripts one name may cover.
_ALLOWED = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
# Default_Ignorable_Code_Point outside category Cf: Other_Default_Ignorable_Code_Point and
# Variation_Selector (PropList.txt, Unicode 17.0.0), as (first, last) ranges.
_IGNORABLE = (
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180D),  # Mongolian free variation selectors
    (0x180F, 0x180F),
    (0x2065, 0x2065),
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),  # tags, variation selectors supplement and reserved
)
EMOJI_SELECTORS = frozenset("\ufe0e\ufe0f")  # text / emoji presentation of the symbol before


def skeleton(name: str) -> str:
    """What ``name`` looks like: equal skeletons look alike (case and width folded too)."""
    if name.isascii() and name.isprintable():  # most names: a table lookup a character
        return " ".join(name.translate(_ASCII_SKELETON).split())
    return _skeleton(name)


def _skeleton(name: str) -> str:
    """``skeleton``, for any text."""
    return " ".join(disarm.skeleton_key(name, digit_policy="tr39").split())


# Printable ASCII needs no normalisation (NFD and NFKC leave it as it is), so its skeleton is
# the skeletons of its characters put together, the space kept (tests/test_names.py compares
# the two ways). Four seats' names cost a game 4 % more instructions through disarm.
_ASCII_SKELETON = str.maketrans({chr(code): _skeleton(chr(code)) for code in range(33, 127)})


@functools.lru_cache(maxsize=4096)  # a seat's name is compared again at every later join
def skeletons(name: str) -> frozenset[str]:
    """The keys two names that look alike share one of: the skeleton of the name as written
    (``I`` is ``l``) and of the name case-folded (``RITA`` is ``Rita``): the standard's skeleton
    keeps case, but a seat's name does not own a spelling in other capitals."""
    written = skeleton(name)
    if "I" not in name and name.isascii():  # casefolding changes no ASCII skeleton but I's
        return frozenset((written,))
    return frozenset((written, skeleton(name.casefold())))


def mixed_scripts(name: str) -> list[str] | None:
    """The scripts ``name`` mixes if the highly restrictive profile refuses them, else None."""
    scripts = {script.name for script in disarm.detect_scripts(name)}
    scripts -= {"COMMON", "INHERITED"}
    if len(scripts) <= 1 or any(scripts <= allowed for allowed in _ALLOWED):
        return None
    return sorted(script.title() for script in scripts)


def ignorable(name: str, index: int) -> bool:
    """The character at ``index`` is default-ignorable (and not an emoji presentation selector
    after a symbol, which builds one emoji: ❤️)."""
    char = name[index]
    code = ord(char)
    if not any(first <= code <= last for first, last in _IGNORABLE):
        return False
    if char in EMOJI_SELECTORS and index > 0:
        before = unicodedata.category(name[index - 1])
        keycap = name[index + 1 : index + 2] == "\u20e3"  # 1️⃣: digit, selector, keycap
        return not (before == "So" or keycap)
    return True
