"""The code blocks of a Markdown page and what each says about how it runs (issue 38, item 6).

A fenced block's info string is its language, then how it runs:

- ``python``: a fragment. The page's fragments run in document order in one namespace, in one
  process of their own (a later fragment may use what an earlier one defined: ``client``, say).
- ``python tested-by=TEST``: a program that ``TEST`` in tests/test_client_guide.py runs (it
  needs arguments, a game or a token made for it); the block is marked
  ``<!-- NAME:start -->`` / ``<!-- NAME:end -->`` and the test reads it by ``NAME``.
- ``sh``: run by bash, ``curl`` against the live service, with ``BASE`` (its URL), ``GAME``
  (a game the account sits in), ``TOKEN`` (the account's token), ``ACCOUNT`` (its id) and
  ``HOOK`` (a webhook receiver on loopback) set; it must exit 0.
- ``LANG no-run: REASON``: not run, for the reason given (installing packages, say).
- ``json`` and ``yaml``: data, parsed. ``text``: output, not run.

``http://127.0.0.1:8000``, the address ``cardroom serve`` listens on by default, stands for the
live service wherever it appears in a block. An indented code block is refused: fence it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
MARKER = re.compile(r"<!-- ([\w-]+):start -->")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # the line of the opening fence (1-based)
    lang: str
    mode: str  # "" (run as the language says), "tested-by", "no-run"
    argument: str  # tested-by's test, no-run's reason
    text: str
    marker: str | None  # the NAME of a <!-- NAME:start --> line just before the fence

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


def parse_info(info: str) -> tuple[str, str, str]:
    """``(lang, mode, argument)`` of a fence's info string."""
    lang, _, rest = info.strip().partition(" ")
    rest = rest.strip()
    if rest.startswith("tested-by="):
        return lang, "tested-by", rest.removeprefix("tested-by=").strip()
    if rest.startswith("no-run"):
        return lang, "no-run", rest.removeprefix("no-run").lstrip(":").strip()
    return lang, rest, ""  # anything else is an unknown mode: refused by the tests


def closes(fence: str, line: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence`` (as long or longer, no info)."""
    return re.fullmatch(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*", line) is not None


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in document order."""
    lines = path.read_text().splitlines()
    found: list[Block] = []
    at = 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if not opening:
            at += 1
            continue
        fence, info = opening.group(1), opening.group(2)
        end = at + 1
        while end < len(lines) and not closes(fence, lines[end]):
            end += 1
        lang, mode, argument = parse_info(info)
        before = MARKER.fullmatch(lines[at - 1].strip()) if at else None
        text = "\n".join(lines[at + 1 : end]) + "\n"
        found.append(
            Block(path, at + 1, lang, mode, argument, text, before.group(1) if before else None)
        )
        at = end + 1
    return found


def indented_code(path: Path) -> list[int]:
    """The lines (1-based) that open an indented code block: four spaces or more after a blank
    line, outside a fence (a list's continuation lines follow their item with no blank line)."""
    lines = path.read_text().splitlines()
    opened, inside = [], None
    for number, line in enumerate(lines, 1):
        fence = FENCE.match(line)
        if fence and inside is None:
            inside = fence.group(1)
            continue
        if inside is not None:
            if closes(inside, line):
                inside = None
            continue
        after_blank = number == 1 or not lines[number - 2].strip()
        if after_blank and line.startswith("    ") and line.strip():
            opened.append(number)
    return opened
