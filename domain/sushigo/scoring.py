"""Scoring (S10–S16): pure functions from what lies on the table to points, with their reasons.

Every function returns the counts that produced the points, so that a score sheet — and anyone
disputing it — can see why a seat scored what it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .cards import (
    DUMPLING,
    EGG,
    MAKI_1,
    MAKI_2,
    MAKI_3,
    NIGIRI_POINTS,
    PUDDING,
    SALMON,
    SASHIMI,
    SQUID,
    TEMPURA,
    WASABI,
)
from .state import Tableau

DUMPLING_POINTS = (0, 1, 3, 6, 10, 15)  # S10: 1, 2, 3, 4, 5-or-more dumplings
CATEGORIES = ("maki", "tempura", "sashimi", "dumpling", "nigiri", "pudding")


def dumpling_points(count: int) -> int:
    return DUMPLING_POINTS[min(count, 5)]


def _share(points: int, tied: int, split: bool) -> int:
    """S11/S14 split ``points`` among ``tied`` seats dropping the remainder; S12/S15 don't split."""
    return points // tied if split else points


def maki_points(icons: Sequence[int], split: bool) -> list[int]:
    """S11 (split=True, gamewright) and S12 (split=False, zoch)."""
    points = [0] * len(icons)
    ranked = sorted({n for n in icons if n > 0}, reverse=True)  # only seats with an icon take part
    if not ranked:
        return points
    first = [i for i, n in enumerate(icons) if n == ranked[0]]
    for i in first:
        points[i] = _share(6, len(first), split)
    if (split and len(first) > 1) or len(ranked) < 2:
        return points  # S11: a tie for most means no second place
    second = [i for i, n in enumerate(icons) if n == ranked[1]]
    for i in second:
        points[i] = _share(3, len(second), split)
    return points


def pudding_points(counts: Sequence[int], split: bool, penalty: bool) -> list[int]:
    """S14 (split=True) and S15 (split=False); ``penalty`` is False in a 2-player game without
    the dummy, where nobody loses points for puddings."""
    points = [0] * len(counts)
    most, fewest = max(counts), min(counts)
    if most == fewest:
        return points  # everybody has the same number: nobody scores puddings
    top = [i for i, n in enumerate(counts) if n == most]
    for i in top:
        points[i] += _share(6, len(top), split)
    if penalty:
        bottom = [i for i, n in enumerate(counts) if n == fewest]
        for i in bottom:
            points[i] -= _share(6, len(bottom), split)  # each loses 6 // k: not floor of -6 / k
    return points


def nigiri_breakdown(tableau: Tableau) -> dict[str, Any]:
    """S8/S10: nigiri points, tripled on a wasabi."""
    dipped = {kind: tableau.dipped.count(kind) for kind in NIGIRI_POINTS}
    plain = {kind: tableau.cards.count(kind) - dipped[kind] for kind in NIGIRI_POINTS}
    points = sum(NIGIRI_POINTS[k] * (plain[k] + 3 * dipped[k]) for k in NIGIRI_POINTS)
    return {"plain": plain, "on_wasabi": dipped, "points": points}


def round_breakdowns(tableaux: Sequence[Tableau], split: bool) -> list[dict[str, Any]]:
    """Each scored seat's round score per category (S10–S12), with the counts behind it.

    Written out card kind by card kind (``nigiri_breakdown`` inline): a game scores ~12 sheets
    and this is a tenth of deciding a random game otherwise (issue 15)."""
    icons = [
        (cards := t[0]).count(MAKI_1) + 2 * cards.count(MAKI_2) + 3 * cards.count(MAKI_3)
        for t in tableaux
    ]
    maki = maki_points(icons, split)
    sheets = []
    for seat, (cards, dipped) in enumerate(tableaux):
        tempura, sashimi, dumpling = (
            cards.count(TEMPURA),
            cards.count(SASHIMI),
            cards.count(DUMPLING),
        )
        egg, salmon, squid = cards.count(EGG), cards.count(SALMON), cards.count(SQUID)
        if dipped:
            on_egg, on_salmon, on_squid = (
                dipped.count(EGG),
                dipped.count(SALMON),
                dipped.count(SQUID),
            )
        else:
            on_egg = on_salmon = on_squid = 0
        egg, salmon, squid = egg - on_egg, salmon - on_salmon, squid - on_squid
        nigiri = (egg + 3 * on_egg) + 2 * (salmon + 3 * on_salmon) + 3 * (squid + 3 * on_squid)
        # each once, and no min() (a builtin call that parses keywords): 8% of a 4-seat call
        tempura_points, sashimi_points = 5 * (tempura // 2), 10 * (sashimi // 3)
        dumpling_points = DUMPLING_POINTS[dumpling if dumpling < 5 else 5]
        wasabi = cards.count(WASABI)
        sheets.append(
            {
                "maki": {"icons": icons[seat], "points": maki[seat]},
                "tempura": {"count": tempura, "points": tempura_points},
                "sashimi": {"count": sashimi, "points": sashimi_points},
                "dumpling": {"count": dumpling, "points": dumpling_points},
                "nigiri": {
                    "plain": {EGG: egg, SALMON: salmon, SQUID: squid},
                    "on_wasabi": {EGG: on_egg, SALMON: on_salmon, SQUID: on_squid},
                    "points": nigiri,
                },
                "wasabi": {"count": wasabi, "unused": wasabi - len(dipped), "points": 0},
                "pudding": {"count": cards.count(PUDDING), "points": 0},  # scored at the end (S13)
                "total": maki[seat] + tempura_points + sashimi_points + dumpling_points + nigiri,
            }
        )
    return sheets


def winners(totals: Sequence[int], puddings: Sequence[int], players: int) -> list[int]:
    """S16: highest total; ties go to the most puddings; still tied, the win is shared.
    Only the first ``players`` seats can win (the dummy cannot, S17)."""
    seats = range(players)
    best = max(totals[i] for i in seats)
    tied = [i for i in seats if totals[i] == best]
    most = max(puddings[i] for i in tied)
    return [i for i in tied if puddings[i] == most]
