"""Seat names that cannot spoof (issue 20): one rule for people's and bots' names, decided by
the rules (so the audit re-decides it with every join).

A name is NFC-normalised and stripped of surrounding spaces, then must hold 1 to 32 visible
characters (marks on a character count with it) and nothing that hides or reorders text:

- ``control``: C0/C1 controls (Cc): tabs, newlines, escapes, NUL;
- ``format``: format characters (Cf): bidirectional overrides and isolates (U+202A..U+202E,
  U+2066..U+2069), zero-width spaces and joiners (U+200B..U+200D), the BOM, soft hyphen… A
  zero-width joiner *between two emoji* is allowed: it builds one emoji (👩‍👩‍👧);
- ``separator``: line and paragraph separators (U+2028, U+2029);
- ``invisible``: letters and symbols that draw nothing (Hangul fillers, the blank braille pattern);
- ``not_text``: lone surrogates, private-use and unassigned code points;
- ``too_many_marks``: more than 4 combining marks on one character ("zalgo" text that draws over
  the neighbouring lines);
- ``blank``: nothing visible (empty, or only spaces); ``too_long``: over 32 characters.

Two seats of one game may not have names that **look alike**: names whose :func:`skeleton` is
the same (NFKC compatibility forms folded, case folded, spaces collapsed, and a light table of
confusables: Cyrillic and Greek letters that look Latin, ``0``/``o``, ``1``/``l``). This is
"confusable-light", not Unicode's full confusables table (UTS #39): it catches the look-alikes a
player types on purpose, not every glyph any font draws alike.

Games created before this rule record no ``name_rule`` in ``game_created``: their names are not
checked (their joins replay and audit as they were decided).

**Rule 2** (``name_rule: 2``, games created since issue 31) follows Unicode Technical Standard
#39 instead of the light table (domain/uts39.py): names look alike when their UTS #39 skeletons
are equal, a name may not mix scripts beyond the "highly restrictive" profile (``mixed_scripts``),
and default-ignorable code points that are not format characters (combining grapheme joiner,
variation selectors outside an emoji, tags...) are refused as ``invisible``. Games created under
rule 1 keep rule 1: their joins replay and audit as they were decided.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from . import uts39
from .decider import DomainError, conflict, rule_broken

MAX_LENGTH = 32  # visible characters
MAX_MARKS = 4  # combining marks on one character
ZWJ = "\u200d"
JOINERS = frozenset((ZWJ, "\ufe0e", "\ufe0f"))  # parts of one emoji, not characters of their own
# Code points that are letters or symbols to Unicode but draw nothing.
INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# Cyrillic and Greek letters (after case folding) drawn like Latin ones, and digits like letters.
CONFUSABLE = str.maketrans(
    {
        **dict.fromkeys("аα", "a"),
        "в": "b",
        **dict.fromkeys("сϲ", "c"),
        "ԁ": "d",
        **dict.fromkeys("еε", "e"),
        "һ": "h",
        **dict.fromkeys("іιı", "i"),
        **dict.fromkeys("1|", "l"),
        "ј": "j",
        **dict.fromkeys("кκ", "k"),
        "м": "m",
        **dict.fromkeys("ոη", "n"),
        **dict.fromkeys("оο0", "o"),
        **dict.fromkeys("рρ", "p"),
        "ԛ": "q",
        "ѕ": "s",
        **dict.fromkeys("тτ", "t"),
        "υ": "u",
        **dict.fromkeys("ѵν", "v"),
        **dict.fromkeys("ԝω", "w"),
        **dict.fromkeys("хχ", "x"),
        **dict.fromkeys("уγ", "y"),
    }
)


def invalid(reason: str, message: str) -> DomainError:
    return rule_broken("invalid_name", message, reason=reason)


def normalise(text: str, rule: int = 1) -> str:
    """``text`` as a name is recorded (NFC, surrounding spaces stripped), or ``invalid_name``
    with ``details.reason`` saying why it cannot be one under name rule ``rule``."""
    if text.isascii() and text.isprintable():  # most names: no character to look up (issue 15)
        name = text.strip()  # printable ASCII holds no other blank, no mark, no joiner, and
        if 0 < len(name) <= MAX_LENGTH:  # one script (Latin) with Common characters
            return name  # what _checked returns for it (tests/test_names.py compares them)
    return _checked(text, rule)


def _checked(text: str, rule: int = 1) -> str:
    """``normalise``, character by character."""
    name = unicodedata.normalize("NFC", text)
    for index, char in enumerate(name):
        _check_char(name, index, char, unicodedata.category(char))
        if rule >= 2 and uts39.ignorable(name, index):
            raise invalid(
                "invisible",
                f"a name cannot hold default-ignorable characters (U+{ord(char):04X} at"
                f" position {index + 1}): they draw nothing",
            )
    if rule >= 2 and (scripts := uts39.mixed_scripts(name)):
        raise invalid(
            "mixed_scripts",
            f"a name is written in one script ({' and '.join(scripts)} are mixed here); Latin"
            " may only go with Han and Japanese kana, Han and Bopomofo, or Han and Hangul"
            " (Unicode UTS #39, highly restrictive)",
        )
    name = name.strip()  # only spaces are left to strip: every other blank is refused above
    visible, marks = 0, 0
    for char in name:
        if unicodedata.category(char).startswith("M"):
            marks += 1
            if marks > MAX_MARKS:
                raise invalid(
                    "too_many_marks", f"at most {MAX_MARKS} combining marks on one character"
                )
        elif char not in JOINERS:
            visible, marks = visible + 1, 0
    if not name:
        raise invalid("blank", "a name needs at least one visible character, not only spaces")
    if visible > MAX_LENGTH:
        raise invalid("too_long", f"a name has at most {MAX_LENGTH} characters ({visible} sent)")
    return name


def _check_char(name: str, index: int, char: str, category: str) -> None:
    where = f"U+{ord(char):04X} at position {index + 1}"
    if category == "Cc":
        raise invalid("control", f"a name cannot hold control characters ({where})")
    if category == "Cf" and not (char == ZWJ and _joins_emoji(name, index)):
        raise invalid(
            "format",
            f"a name cannot hold invisible format characters such as direction overrides or"
            f" zero-width spaces ({where}): they hide or reorder what others see",
        )
    if category in ("Zl", "Zp"):
        raise invalid("separator", f"a name is one line: no line or paragraph separators ({where})")
    if category in ("Cs", "Co", "Cn"):
        raise invalid("not_text", f"a name holds assigned, public characters only ({where})")
    if char in INVISIBLE:
        raise invalid("invisible", f"a name cannot hold characters that draw nothing ({where})")


def _joins_emoji(name: str, index: int) -> bool:
    """A zero-width joiner between two symbols (an emoji ZWJ sequence), skipping the emoji
    presentation selector and skin-tone modifiers before it."""
    before = name[:index].rstrip("\ufe0f\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff")
    after = name[index + 1 : index + 2]
    return bool(before and after) and all(
        unicodedata.category(c) == "So" for c in (before[-1], after)
    )


def skeleton(name: str, rule: int = 1) -> str:
    """What ``name`` looks like under name rule ``rule``: equal skeletons look alike."""
    if rule >= 2:
        return uts39.skeleton(name)
    if name.isascii():  # NFKC leaves ASCII as it is, and casefolds it as lower() does
        return " ".join(name.lower().translate(CONFUSABLE).split())
    return _folded(name)


def _folded(name: str) -> str:
    """``skeleton``, for any text."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return " ".join(folded.translate(CONFUSABLE).split())


def looks(name: str, rule: int = 1) -> frozenset[str]:
    """``name``'s skeletons under name rule ``rule``: names look alike when they share one."""
    if rule >= 2:
        return uts39.skeletons(name)
    return frozenset((skeleton(name),))


def check_unlike(name: str, taken: Iterable[tuple[int, str]], rule: int = 1) -> None:
    """``name_taken`` if a seat of ``taken`` (seat, name) has a name that looks like ``name``."""
    mine: frozenset[str] | None = None  # the first seat has nothing to compare
    for seat, other in taken:
        mine = mine or looks(name, rule)
        if not mine.isdisjoint(looks(other, rule)):
            raise conflict(
                "name_taken",
                f"seat {seat} is already called {other!r}, which looks the same as this name;"
                " choose another name",
                seat=seat,
            )
