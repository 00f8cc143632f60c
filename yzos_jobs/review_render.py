"""Drawing the review reports: on a terminal with `rich` (imported only then), otherwise as
aligned plain-text columns that scripts and pipes can read; `export` as JSON lines or CSV.

Stored text (names, summaries, context, paths) came from observers and models: none of it may
act on the terminal it is printed on. Tables draw control characters as their code point, JSON
output escapes them, a CSV cell holds their code point (line breaks and tabs kept).
"""

from __future__ import annotations

import codecs
import csv
import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from yzos_jobs.review_reports import EXPORT_FIELDS

CELL_CHARS = 60


@dataclass
class Section:
    """A titled table; `headers` empty: a key/value block."""

    title: str | None
    headers: Sequence[str]
    rows: list[Sequence[Any]] = field(default_factory=list)


# C0 and C1 controls and DEL. Printed raw, ESC opens a sequence that can set the clipboard
# (OSC 52), make a link (OSC 8) or rewrite the screen, and a C1 character (CSI, OSC) opens one
# on its own: a summary or a context that holds one would command the terminal.
_DEL_AND_C1 = [chr(c) for c in (0x7F, *range(0x80, 0xA0))]
_CONTROLS = [*(chr(c) for c in range(0x20)), *_DEL_AND_C1]
# Bidirectional controls (embeddings, overrides, isolates, marks): shown raw, one in a name can
# reorder the rest of the line it is printed on.
_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _as_code_points(chars: Iterable[str], form: str) -> dict[int, str]:
    return {ord(ch): form.format(ord(ch)) for ch in chars}


# A table cell draws each of them as its code point instead (`<U+001B>`), so it is seen, inert.
_CELL_SHOWN = _as_code_points([*_CONTROLS, *_BIDI_CONTROLS], "<U+{:04X}>")


def _cell(value: Any, cap: bool = True) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    text = " ".join(str(value).split())
    if not text.isprintable():  # every control and bidi control is unprintable
        text = text.translate(_CELL_SHOWN)
    return text if not cap or len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


# JSON escapes C0 controls itself but leaves DEL, C1 and the bidi controls raw (ensure_ascii
# off): they are written as `\u` escapes too, which decode to the same text.
_JSON_ESCAPED = _as_code_points([*_DEL_AND_C1, *_BIDI_CONTROLS], "\\u{:04x}")


def json_text(data: Any, out: TextIO, indent: int | None = None) -> str:
    """`data` as JSON for `out`: the text as stored, but nothing in it acts on a terminal; on a
    stream whose encoding cannot hold every character (a Latin-1 or cp1252 locale) all non-ASCII
    is escaped, so the JSON stays whole instead of losing what the encoding cannot show."""
    return _json_dumps(data, ascii_only=not _holds_any_character(out), indent=indent)


def _json_dumps(data: Any, *, ascii_only: bool, indent: int | None = None) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=ascii_only).translate(_JSON_ESCAPED)


def _holds_any_character(out: TextIO) -> bool:
    encoding = getattr(out, "encoding", None)
    if encoding is None:  # a stream of str (StringIO): nothing is encoded
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


def _width(text: str) -> int:
    """Columns a text takes on a terminal: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _short_time(value: str | None) -> str:
    return value[:16].replace("T", " ") if value else ""


def emit(sections: Iterable[Section], out: TextIO) -> None:
    if getattr(out, "isatty", lambda: False)():
        _emit_rich(sections, out)
    else:
        _emit_plain(sections, out)


def _emit_plain(sections: Iterable[Section], out: TextIO) -> None:
    first = True
    for section in sections:
        if not first:
            out.write("\n")
        first = False
        if section.title:
            out.write(section.title + "\n")
        # Every column but the last is capped; the last (a reason, a summary) is shown whole.
        rows = [[_cell(v, i < len(row) - 1) for i, v in enumerate(row)] for row in section.rows]
        table = [list(section.headers), *rows] if section.headers else rows
        if not table:
            continue
        widths = [max(_width(r[i]) for r in table) for i in range(len(table[0]))]
        for r in table:
            cells = [c + " " * (w - _width(c)) for c, w in zip(r, widths, strict=True)]
            out.write("  ".join(cells).rstrip() + "\n")


def _emit_rich(sections: Iterable[Section], out: TextIO) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Every cell is a Text: what a name holds is printed as it is, never read as markup
    # (`[/bold]`, `[red]`, `[link=…]`) nor highlighted.
    console = Console(file=out, highlight=False)
    for section in sections:
        keyed = not section.headers  # a key/value block: no header, keys in bold
        if not keyed:
            kept = _columns_that_fit(section, console.width)
            section = Section(
                section.title,
                [section.headers[i] for i in kept],
                [[row[i] for i in kept] for row in section.rows],
            )
        table = Table(
            title=section.title,
            title_justify="left",
            show_header=not keyed,
            box=None if keyed else box.SIMPLE_HEAD,
            header_style="bold",
        )
        width = len(section.headers) or (len(section.rows[0]) if section.rows else 0)
        for i in range(width):
            name = "" if keyed else section.headers[i]
            table.add_column(
                name, style="bold" if keyed and i == 0 else None, **_fit(name, i, keyed)
            )
        for row in section.rows:
            table.add_row(*(Text(_cell(v, cap=False)) for v in row))
        console.print(table)


# Columns of free text wrap at spaces; the others hold one token (a ref, a kind, a time) and are
# never broken. No column folds inside a word: on a terminal too narrow for every column, the
# least needed columns are left out (the plain and JSON forms always carry them all), and what
# still cannot fit is cut with an ellipsis.
WRAPPED_COLUMNS = frozenset({"name", "project", "summary", "reason", "detail", "id"})
WRAPPED_MIN = 12
LEFT_OUT_FIRST = ("first seen", "model", "id", "source", "sightings", "call site", "status")
# On a terminal narrower still (a split pane, a phone), these go next: what is left names the
# thing (a ref and its name; a decision's outcome and reason).
LEFT_OUT_NEXT = ("last seen", "at", "verdict", "project", "kind")


def _fit(header: str, index: int, keyed: bool) -> dict[str, Any]:
    """How a rich column fits its terminal."""
    if keyed:  # a key/value block: the key whole, the value wrapped
        return {"no_wrap": index == 0, "overflow": "ellipsis"}
    if header in WRAPPED_COLUMNS:
        return {"overflow": "ellipsis", "min_width": min(WRAPPED_MIN, len(header))}
    return {"no_wrap": True, "overflow": "ellipsis"}


def _needed(section: Section, kept: Sequence[int]) -> int:
    """Columns a table of the `kept` columns needs: whole tokens, wrapped text at its minimum,
    one column of padding either side of each cell, and the separators."""
    total = len(kept) + 1
    for i in kept:
        header = section.headers[i]
        cells = [_width(_cell(row[i], cap=False)) for row in section.rows]
        widest = max([_width(header), *cells])
        total += 2 + (min(widest, WRAPPED_MIN) if header in WRAPPED_COLUMNS else widest)
    return total


def _columns_that_fit(section: Section, width: int) -> list[int]:
    kept = list(range(len(section.headers)))
    for name in (*LEFT_OUT_FIRST, *LEFT_OUT_NEXT):
        if _needed(section, kept) <= width:
            break
        kept = [i for i in kept if section.headers[i] != name]
    return kept


ENTITY_HEADERS = (
    "ref",
    "name",
    "kind",
    "status",
    "project",
    "sightings",
    "first seen",
    "last seen",
    "source",
)


def _entity_rows(lines: Sequence[dict[str, Any]]) -> list[Sequence[Any]]:
    return [
        (
            e["ref"],
            e["name"],
            e["kind"],
            e["status"],
            e["project"],
            e["sightings"],
            _short_time(e["first_seen"]),
            _short_time(e["last_seen"]),
            e["verdict_source"],
        )
        for e in lines
    ]


def render_entities(lines: Sequence[dict[str, Any]], out: TextIO) -> None:
    if not lines:
        out.write("no entities match\n")
        return
    emit([Section(None, ENTITY_HEADERS, _entity_rows(lines))], out)


DECISION_HEADERS = ("at", "call site", "outcome", "verdict", "source", "model", "reason")


def _verdict_word(d: dict[str, Any]) -> str:
    if d["is_real_entity"] is None and d["kind"] is None:
        return ""
    return d["kind"] or ("real" if d["is_real_entity"] else "not an entity")


def _decision_rows(decisions: Sequence[dict[str, Any]]) -> list[Sequence[Any]]:
    return [
        (
            _short_time(d["at"]),
            d["call_site"],
            d["outcome"],
            _verdict_word(d),
            d["source"],
            d["model"],
            _reason_and_detail(d["reason"], d["detail"]),
        )
        for d in decisions
    ]


def _entity_block(e: dict[str, Any]) -> Section:
    rows: list[Sequence[Any]] = [
        ("entity", f"{e['ref']} {e['name']}"),
        ("kind", e["kind"]),
        ("status", e["status"]),
    ]
    if e["project"]:
        rows.append(("project", f"{e['project']} (e:{e['project_id']})"))
    if e["project_path"]:
        rows.append(("path", e["project_path"]))
    if e["summary"]:
        rows.append(("summary", e["summary"]))
    rows.append(
        (
            "sightings",
            f"{e['sightings']} (first {_short_time(e['first_seen'])}, "
            f"last {_short_time(e['last_seen'])})",
        )
    )
    verdict = e["verdict_source"] or ""
    if e["model"]:
        verdict += f" {e['model']}"
    if e["confidence"] is not None:
        verdict += f", confidence {e['confidence']:.2f}"
    rows.append(("verdict", verdict))
    if e["override"]:
        o = e["override"]
        rows.append(
            ("override", f"{o['status']} by {o['set_by']}: {o['reason'] or ''}".rstrip(": "))
        )
    if e["aliases"]:
        rows.append(("aliases", ", ".join(f"{a['kind']} {a['name']!r}" for a in e["aliases"])))
    return Section(None, (), rows)


def _candidate_block(c: dict[str, Any]) -> Section:
    rows: list[Sequence[Any]] = [
        ("candidate", f"{c['ref']} {c['raw_text']}"),
        ("suggested", c["suggested_kind"] or ""),
        ("source", f"{c['source_kind']} {c['source_id']}"),
        ("status", c["status"]),
    ]
    if c["entity"]:
        rows.append(("entity", c["entity"]))
    if c["reject_reason"]:
        rows.append(("reason", c["reject_reason"]))
    if c["surrounding_text"]:
        rows.append(("context", c["surrounding_text"]))
    return Section(None, (), rows)


def _head(report: dict[str, Any]) -> Section:
    if "entity" in report:
        return _entity_block(report["entity"])
    return _candidate_block(report["candidate"])


def _decisions_title(report: dict[str, Any], word: str) -> str:
    shown, total = len(report["decisions"]), report["decisions_total"]
    return f"{word} ({shown} of {total})" if total > shown else f"{word} ({total})"


def render_show(report: dict[str, Any], out: TextIO) -> None:
    sections = [_head(report)]
    if report.get("sightings"):
        sections.append(
            Section(
                f"Newest sightings ({len(report['sightings'])} of {report['entity']['sightings']})",
                ("seen", "source", "id", "summary"),
                [
                    (_short_time(s["seen_at"]), s["source_kind"], s["source_id"], s["summary"])
                    for s in report["sightings"]
                ],
            )
        )
    if report.get("tasks"):
        sections.append(
            Section(
                f"Tasks ({len(report['tasks'])} of {report['tasks_total']})",
                ENTITY_HEADERS,
                _entity_rows(report["tasks"]),
            )
        )
    if report["decisions"]:
        sections.append(
            Section(
                _decisions_title(report, "Decisions"),
                DECISION_HEADERS,
                _decision_rows(report["decisions"]),
            )
        )
    emit(sections, out)


def render_explain(report: dict[str, Any], out: TextIO) -> None:
    sections = [_head(report)]
    if report["decisions"]:
        sections.append(
            Section(
                _decisions_title(report, "Why: the decisions, oldest first"),
                DECISION_HEADERS,
                _decision_rows(report["decisions"]),
            )
        )
    else:
        sections.append(Section(_no_decision(report), ()))
    emit(sections, out)


# What a candidate without a decision is waiting for, by its status.
_UNDECIDED = {
    "pending": "Not decided yet: the candidate waits for entity_promote.",
    "held": "Not decided yet: the candidate is held until its session is triaged.",
    "claimed": "Not decided yet: the candidate is being judged.",
}


def _no_decision(report: dict[str, Any]) -> str:
    state = report["candidate"]["status"] if "candidate" in report else None
    return _UNDECIDED.get(state or "", "No decision recorded (made before the decision trail).")


def render_matches(report: dict[str, Any], out: TextIO) -> None:
    emit(
        [
            Section(
                None,
                ("ref", "name", "kind", "status", "detail"),
                [
                    (
                        m["ref"],
                        m["name"],
                        m["kind"],
                        m["status"],
                        m.get("project_path") or m.get("reason"),
                    )
                    for m in report["matches"]
                ],
            )
        ],
        out,
    )


# -- export ---------------------------------------------------------------------------------


# A spreadsheet runs a cell that starts with one of these as a formula: such a text cell gets a
# leading quote (OWASP, CSV injection).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


# A control character in a cell is written as its code point: a CSV printed to a terminal must
# not command it either. Line breaks and tabs are kept (the cell is quoted; they draw nothing
# else); the bidi controls too, the export keeps names as stored.
_CSV_SHOWN = _as_code_points([ch for ch in _CONTROLS if ch not in "\t\n\r"], "<U+{:04X}>")


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_STARTS):
        value = "'" + value
    return value if value.isprintable() else value.translate(_CSV_SHOWN)


def write_export(rows: Iterable[dict[str, Any]], out: TextIO, fmt: str) -> int:
    """Write export rows as JSON lines or CSV (with a header; a text cell a spreadsheet would run
    as a formula starts with a quote, a control character is written as its code point);
    returns the count."""
    n = 0
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(EXPORT_FIELDS)
        for row in rows:
            writer.writerow([_csv_cell(row[k]) for k in EXPORT_FIELDS])
            n += 1
        return n
    ascii_only = not _holds_any_character(out)  # once for the stream, not once a row
    for row in rows:
        out.write(_json_dumps(row, ascii_only=ascii_only) + "\n")
        n += 1
    return n


def _reason_and_detail(reason: str | None, detail: str | None) -> str:
    """A decision's reason and detail as one cell: "reason; detail", or the reason's own
    sentence end where it has one ("…not an entity. e:4 …")."""
    if not reason or not detail:
        return reason or detail or ""
    ended = reason.rstrip().endswith((".", "!", "?"))
    return f"{reason} {detail}" if ended else f"{reason}; {detail}"
