"""Readers for the classic test collections (as stored under ``../shared/data/classic``).

Each reader takes the collection's folder and returns a
:class:`ClassicCollection`: document ids and texts, query texts, and
judgments ``(query_id, doc_id, grade)`` with grade >= 1 relevant. The
format traps listed in each folder's PROVENANCE.md are handled here:

- Cranfield: qrels query numbers are the ordinal position of the query in
  ``cran.qry`` (not its ``.I``); codes 1 (best) .. 4 are relevant with gain
  ``5 - code``; code -1 is kept as a judged non-relevant document (grade 0).
- CACM: text = ``.T`` + ``.W`` + ``.K`` (no ``.X`` / ``.N`` citation data);
  zero-padded query ids in qrels; only the 52 judged queries are used.
- CISI: ``.T`` + ``.W`` (no ``.X``); only the 76 judged queries.
- TIME: qrels use ordinal article positions; the 3 pairs beyond the 423
  stored articles are dropped.
- LISA: judgments from ``LISARJ.NUM`` (LISA.REL is defective); records
  deduplicated by id, the header-less fragment dropped.
- CF: documents are the ``RN`` numbers; a listed pair is relevant (every
  listed pair has some judge >= 1) with gain = the sum of the four judges'
  scores (1..8); text = TI + AB/EX + MJ + MN.
- NPL: slash-terminated records.

Every document not judged relevant for a query counts as non-relevant for it
(these collections were judged as if exhaustively; see the benchmark notes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from fasteval.io.files import read_text


@dataclass
class ClassicCollection:
    """Documents, query texts and judgments of one classic collection."""

    name: str
    doc_ids: list[str]
    texts: list[str]
    queries: dict[str, str]
    qrels: list[tuple[str, str, int]]


def _read(p: Path) -> str:
    if not p.exists() and Path(str(p) + ".gz").exists():
        p = Path(str(p) + ".gz")
    return read_text(p, "latin-1")


def _smart(text: str, keep: set[str]) -> list[tuple[str, str]]:
    """SMART ``.I`` records -> (id, text of the fields in ``keep``)."""
    out = []
    for rec in re.split(r"^\.I\s+", text, flags=re.M)[1:]:
        head, _, body = rec.partition("\n")
        parts = re.split(r"^\.([A-Z])\s*$", body, flags=re.M)
        fields = [parts[i + 1] for i in range(1, len(parts) - 1, 2) if parts[i] in keep]
        out.append((head.strip(), " ".join(fields)))
    return out


def _judged_only(c: ClassicCollection) -> ClassicCollection:
    judged = {q for q, _, g in c.qrels if g >= 1}
    c.queries = {q: t for q, t in c.queries.items() if q in judged}
    c.qrels = [r for r in c.qrels if r[0] in judged]
    return c


def _smart_collection(name: str, d: Path, docs: str, qry: str, keep: set[str]) -> ClassicCollection:
    recs = _smart(_read(d / docs), keep)
    queries = {str(int(i)): t for i, t in _smart(_read(d / qry), {"W"})}
    return ClassicCollection(
        name, [str(int(i)) for i, _ in recs], [t for _, t in recs], queries, []
    )


def _smart_binary(
    name: str, docs: str, qry: str, keep: set[str], rel: str, d: Path
) -> ClassicCollection:
    """A SMART collection whose qrels list ``query doc ...`` pairs, each relevant."""
    c = _smart_collection(name, d, docs, qry, keep)
    lines = map(str.split, _read(d / rel).splitlines())
    c.qrels = [(str(int(a)), str(int(b)), 1) for a, b, *_ in lines if a]
    return _judged_only(c)


def med(d: Path) -> ClassicCollection:
    c = _smart_collection("MED", d, "MED.ALL", "MED.QRY", {"W"})
    c.qrels = [(a, b, int(g)) for a, _, b, g in map(str.split, _read(d / "MED.REL").splitlines())]
    return _judged_only(c)


def cranfield(d: Path) -> ClassicCollection:
    c = _smart_collection("Cranfield", d, "cran.all.1400", "cran.qry", {"T", "W"})
    # qrels number queries by their ordinal position in cran.qry (whose .I are distinct)
    c.queries = {str(k + 1): t for k, t in enumerate(c.queries.values())}
    for line in _read(d / "cranqrel").splitlines():
        if line.strip():
            q, doc, code = line.split()
            g = 5 - int(code) if 1 <= int(code) <= 4 else 0
            c.qrels.append((q, str(int(doc)), g))
    return _judged_only(c)


def npl(d: Path) -> ClassicCollection:
    pat = re.compile(r"^\s*(\d+)\n(.*?)\n\s*/\s*$", re.M | re.S)
    docs = pat.findall(_read(d / "doc-text"))
    queries = dict(pat.findall(_read(d / "query-text")))
    qrels = [
        (q, str(int(x)), 1) for q, body in pat.findall(_read(d / "rlv-ass")) for x in body.split()
    ]
    return _judged_only(
        ClassicCollection("NPL", [i for i, _ in docs], [t for _, t in docs], queries, qrels)
    )


def time_(d: Path) -> ClassicCollection:
    text = _read(d / "TIME.ALL")
    arts = re.split(r"^\*TEXT .*$", text.split("*STOP")[0], flags=re.M)[1:]
    ids = [str(k + 1) for k in range(len(arts))]  # qrels use ordinal positions
    qtext = re.split(r"^\*FIND\s+(\d+)\s*$", _read(d / "TIME.QUE").split("*STOP")[0], flags=re.M)
    queries = {qtext[i]: qtext[i + 1] for i in range(1, len(qtext) - 1, 2)}
    qrels = []
    for line in _read(d / "TIME.REL").splitlines():
        parts = line.split()
        for x in parts[1:]:
            if int(x) <= len(arts):  # 3 pairs point past the stored articles: dropped
                qrels.append((parts[0], x, 1))
    return _judged_only(ClassicCollection("TIME", ids, arts, queries, qrels))


def lisa(d: Path) -> ClassicCollection:
    names = [f"LISA{k}.{part}" for k in range(6) for part in ("001", "501")]
    names += ["LISA5.627", "LISA5.850"]
    text = "".join(_read(d / n) for n in names)
    docs: dict[str, str] = {}
    for rec in text.split("*" * 44):
        m = re.match(r"\s*Document\s+(\d+)\n(.*)", rec, re.S)
        if m and m.group(1) not in docs:  # header-less fragment and repeated ids dropped
            docs[m.group(1)] = m.group(2)
    qs = re.split(r"^(\d+)\s*$", _read(d / "LISA.QUE"), flags=re.M)
    queries = {qs[i]: qs[i + 1].replace("#", " ") for i in range(1, len(qs) - 1, 2)}
    nums = [int(x) for x in _read(d / "LISARJ.NUM").split()]
    qrels, k = [], 0
    while k < len(nums):
        q, n = nums[k], nums[k + 1]
        qrels += [(str(q), str(x), 1) for x in nums[k + 2 : k + 2 + n]]
        k += 2 + n
    return _judged_only(ClassicCollection("LISA", list(docs), list(docs.values()), queries, qrels))


def cf(d: Path) -> ClassicCollection:
    docs: dict[str, str] = {}
    for y in range(74, 80):
        text = _read(d / f"cf{y}").replace("\x1a", "")
        for rec in re.split(r"^PN ", text, flags=re.M)[1:]:
            fields = re.split(r"^([A-Z]{2}) ", rec, flags=re.M)
            f = {fields[i]: fields[i + 1] for i in range(1, len(fields) - 1, 2)}
            docs[str(int(f["RN"].split()[0]))] = " ".join(
                f.get(t, "") for t in ("TI", "AB", "EX", "MJ", "MN")
            )
    queries: dict[str, str] = {}
    qrels = []
    for blk in re.split(r"^QN ", _read(d / "cfquery"), flags=re.M)[1:]:
        fields = re.split(r"^([A-Z]{2}) ", "QN " + blk, flags=re.M)
        f = {fields[i]: fields[i + 1] for i in range(1, len(fields) - 1, 2)}
        q = str(int(f["QN"].split()[0]))
        queries[q] = f["QU"]
        toks = f["RD"].split()
        for doc, code in zip(toks[::2], toks[1::2], strict=True):
            qrels.append((q, str(int(doc)), sum(int(c) for c in code)))
    return _judged_only(ClassicCollection("CF", list(docs), list(docs.values()), queries, qrels))


READERS: dict[str, Callable[[Path], ClassicCollection]] = {
    "adi": partial(_smart_binary, "ADI", "ADI.ALL", "ADI.QRY", {"T", "W"}, "ADI.REL"),
    "cacm": partial(_smart_binary, "CACM", "cacm.all", "query.text", {"T", "W", "K"}, "qrels.text"),
    "cf": cf,
    "cisi": partial(_smart_binary, "CISI", "CISI.ALL", "CISI.QRY", {"T", "W"}, "CISI.REL"),
    "cranfield": cranfield,
    "lisa": lisa,
    "med": med,
    "npl": npl,
    "time": time_,
}


def load(root: Path, name: str) -> ClassicCollection:
    """Read classic collection ``name`` (a key of :data:`READERS`) from ``root / name``."""
    return READERS[name](root / name)
