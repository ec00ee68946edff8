"""Measures as values: the family registry and the name parser; :func:`names_of`, the
one reading of a list of measure names."""

from __future__ import annotations

import re
from collections.abc import Sequence

# a comma starts a new name only when a letter follows: "P.5,10" and "ndcg.1=3,2=9" are
# one trec_eval name each, "map,RIC" and "map,α_nDCG@20" two names
_NEW_NAME = re.compile(r",(?=\s*[^\W\d])")


def names_of(measures: str | Sequence[str] | None) -> list[str]:
    """The measure names in ``measures`` (a name, a list, comma-separated names), in order.

    Commas inside parentheses belong to a name (``Compat(p=0.9,normalize=False)``).
    """
    if measures is None:
        return []
    out: list[str] = []
    for item in [measures] if isinstance(measures, str) else list(measures):
        text, depth, start = str(item), 0, 0
        for i, ch in enumerate(text):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            elif ch == "," and depth == 0 and _NEW_NAME.match(text, i):
                out.append(text[start:i])
                start = i + 1
        out.append(text[start:])
    return [p.strip() for p in out if p.strip()]
