"""The kernel's own filter grammar for ``filter_expr`` written by the LLM.

The LLM writes filters such as ``timestamp >= '2026-04-06' AND timestamp <= '2026-04-13'``.
They are parsed here into a typed tree (``Filter``); the store compiles that tree into
its query language from typed values. The LLM's text is never pasted into a query.

Grammar (case-insensitive keywords)::

    expr       := or
    or         := and ("OR" and)*
    and        := unary ("AND" unary)*
    unary      := "NOT" unary | "(" expr ")" | comparison
    comparison := field op literal | field "BETWEEN" literal "AND" literal
    field      := timestamp | time | date | topic | session | session_id | turn_index | tier
    op         := = == != <> < <= > >= LIKE
    literal    := 'text' | "text" | number | 2026-04-06 | 2026-04-06T10:00[:00]

Dates and datetimes without a zone are local time. A date-only upper bound includes that
whole day (``<= '2026-04-13'`` means before 2026-04-14 00:00). Times beyond the calendar's
ends (year 1, year 9999) are clamped to them.

A parsed filter is normalised (``normalise``): runs of NOT collapse, nested AND/OR are
flattened and repeated clauses merged. The query engine's cost grows steeply with nesting
(``NOT NOT … topic = 'a'`` ×38 took 11 s), so what reaches it is at most ``MAX_DEPTH`` deep.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from huichat.memory.errors import KernelError

MAX_FILTER_CHARS = 2000
MAX_CLAUSES = 64
MAX_DEPTH = 12
"""Levels of nesting (parentheses, AND/OR alternation, NOT) left after normalising."""
EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)

FIELDS = {
    "timestamp": "timestamp",
    "time": "timestamp",
    "date": "timestamp",
    "topic": "topic",
    "session": "session_id",
    "session_id": "session_id",
    "turn_index": "turn_index",
    "tier": "tier",
}
_OPS = {
    "=": "=",
    "==": "=",
    "!=": "!=",
    "<>": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
    "like": "like",
}


class FilterError(KernelError):
    """A filter expression that cannot be used; the message says why, briefly."""


@dataclass(frozen=True)
class Compare:
    """``field op value`` with a typed value (UTC datetime, int or str)."""

    field: str
    op: str
    value: datetime | int | str


@dataclass(frozen=True)
class All:
    """Every part holds (AND)."""

    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class Any_:
    """At least one part holds (OR)."""

    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class Not:
    """The part does not hold."""

    part: Filter


@dataclass(frozen=True)
class In:
    """``field`` is one of ``values`` (built by the kernel, never parsed from the LLM's text)."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class About:
    """The turn talks about a time overlapping ``start <= t < end`` (one of its event ranges).

    Built by the kernel, never parsed from the LLM's text; the store decides how its event
    ranges are tested (``memory.index_schema``).
    """

    start: datetime
    end: datetime


Filter = Compare | All | Any_ | Not | In | About


def status_filter(include_failed: bool) -> Filter | None:
    """Only turns that were answered, unless failed ones are wanted on purpose."""
    return None if include_failed else Compare("status", "!=", "failed")


def said_only() -> Filter:
    """Turns in which something was said: a turn of tool calls and results only is a trace, not a memory."""
    return Compare("text", "!=", "")


def excluding(ids: frozenset[str]) -> Filter | None:
    """Leave out these turn ids (e.g. those already in the model's context)."""
    return Not(In("id", tuple(sorted(ids)))) if ids else None


def clamp_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a moment whose UTC form would leave the calendar (year 1 east of
    Greenwich, year 9999 west of it) is clamped to the calendar's first or last instant."""
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return EARLIEST if moment.year < 5000 else LATEST


def time_range_filter(start: datetime | None, end: datetime | None) -> Filter | None:
    """``start <= timestamp < end`` (either side optional)."""
    parts: list[Filter] = []
    if start is not None:
        parts.append(Compare("timestamp", ">=", clamp_utc(start)))
    if end is not None:
        parts.append(Compare("timestamp", "<", clamp_utc(end)))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else All(tuple(parts))


def said_or_about(start: datetime, end: datetime) -> Filter:
    """The turn was said in ``start <= t < end``, or talks about a time in it."""
    start, end = clamp_utc(start), clamp_utc(end)
    said = All((Compare("timestamp", ">=", start), Compare("timestamp", "<", end)))
    return Any_((said, About(start, end)))


def combine(*filters: Filter | None) -> Filter | None:
    """AND of the filters given (None parts are skipped)."""
    present = tuple(f for f in filters if f is not None)
    if not present:
        return None
    return present[0] if len(present) == 1 else All(present)


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*")
      | (?P<dt>\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?)
      | (?P<num>-?\d+)
      | (?P<op><=|>=|!=|<>|==|=|<|>)
      | (?P<paren>[()])
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str


def _tokenise(expr: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(expr):
        if expr[pos:].strip() == "":
            break
        match = _TOKEN.match(expr, pos)
        if match is None or match.end() == pos:
            snippet = expr[pos : pos + 12].strip()
            if snippet[:1] in "'\"":
                raise FilterError(f"unterminated quote near {snippet!r}")
            raise FilterError(f"unexpected text near {snippet!r}")
        kind = match.lastgroup or ""
        tokens.append(_Tok(kind, match.group(kind)))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[_Tok], zone: tzinfo) -> None:
        self.tokens = tokens
        self.i = 0
        self.zone = zone
        self.clauses = 0
        self.depth = 0

    def peek_word(self, *words: str) -> bool:
        tok = self.tokens[self.i] if self.i < len(self.tokens) else None
        return tok is not None and tok.kind == "word" and tok.text.lower() in words

    def take(self) -> _Tok:
        if self.i >= len(self.tokens):
            raise FilterError("the expression ends too early")
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def parse(self) -> Filter:
        result = self.or_()
        if self.i != len(self.tokens):
            raise FilterError(f"unexpected {self.tokens[self.i].text!r}")
        return result

    def or_(self) -> Filter:
        return self._joined("or", self.and_, Any_)

    def and_(self) -> Filter:
        return self._joined("and", self.unary, All)

    def _joined(self, word: str, operand: Callable[[], Filter], node: Callable[[tuple[Filter, ...]], Filter]) -> Filter:
        """Operands joined by ``word`` (one precedence level), flattened into one ``node``."""
        parts = [operand()]
        while self.peek_word(word):
            self.i += 1
            parts.append(operand())
        return parts[0] if len(parts) == 1 else node(tuple(parts))

    def unary(self) -> Filter:
        # a run of NOTs is counted, not recursed into: only its parity matters
        negated = False
        while self.peek_word("not"):
            self.i += 1
            negated = not negated
        tok = self.tokens[self.i] if self.i < len(self.tokens) else None
        if tok is not None and tok.kind == "paren" and tok.text == "(":
            self.i += 1
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise FilterError(f"nested too deeply (at most {MAX_DEPTH} levels)")
            inner = self.or_()
            if self.i >= len(self.tokens):
                raise FilterError("missing ')'")
            close = self.take()
            if close.text != ")":
                raise FilterError("missing ')'")
            self.depth -= 1
        else:
            inner = self.comparison()
        return Not(inner) if negated else inner

    def comparison(self) -> Filter:
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise FilterError(f"too many conditions (at most {MAX_CLAUSES})")
        name = self.take()
        if name.kind != "word" or name.text.lower() not in FIELDS:
            allowed = ", ".join(sorted(FIELDS))
            raise FilterError(f"unknown field {name.text!r} (allowed: {allowed})")
        field = FIELDS[name.text.lower()]
        if self.peek_word("between"):
            self.i += 1
            low = self.literal(field)
            if not self.peek_word("and"):
                raise FilterError("BETWEEN needs 'AND'")
            self.i += 1
            high = self.literal(field)
            return All((self.compare(field, ">=", low), self.compare(field, "<=", high)))
        op_tok = self.take()
        op = _OPS.get(op_tok.text.lower()) if op_tok.kind in ("op", "word") else None
        if op is None:
            raise FilterError(f"expected a comparison after {name.text!r}, got {op_tok.text!r}")
        return self.compare(field, op, self.literal(field))

    def literal(self, field: str) -> tuple[str, str]:
        tok = self.take()
        if tok.kind == "str":
            body = tok.text[1:-1]
            body = body.replace("''", "'") if tok.text[0] == "'" else body
            return "str", re.sub(r"\\(.)", r"\1", body)
        if tok.kind in ("dt", "num"):
            return tok.kind, tok.text
        raise FilterError(f"expected a value for {field}, got {tok.text!r}")

    def compare(self, field: str, op: str, literal: tuple[str, str]) -> Filter:
        kind, text = literal
        if field == "timestamp":
            return self.time_compare(op, text)
        if field == "turn_index":
            if op == "like" or not re.fullmatch(r"-?\d{1,9}", text.strip()):
                raise FilterError(f"turn_index needs a whole number, got {text!r}")
            return Compare(field, op, int(text))
        if kind != "str" and field != "session_id":
            raise FilterError(f"{field} needs a quoted text value")
        if len(text) > 200:
            raise FilterError(f"the value for {field} is too long")
        return Compare(field, op, text)

    def time_compare(self, op: str, text: str) -> Filter:
        if op == "like":
            raise FilterError("LIKE does not apply to timestamp")
        start, date_only = _parse_moment(text.strip(), self.zone)
        if not date_only:
            return Compare("timestamp", op, start)
        day_end = _next_day(start, self.zone)
        if op == "=":
            return All((Compare("timestamp", ">=", start), Compare("timestamp", "<", day_end)))
        if op == "!=":
            return Any_((Compare("timestamp", "<", start), Compare("timestamp", ">=", day_end)))
        if op == "<=":
            return Compare("timestamp", "<", day_end)
        if op == ">":
            return Compare("timestamp", ">=", day_end)
        return Compare("timestamp", op, start)


def _next_day(start: datetime, zone: tzinfo) -> datetime:
    try:
        following = start.astimezone(zone).date() + timedelta(days=1)
    except OverflowError:  # the local day lies beyond the calendar's last (or before its first)
        return LATEST if start.year > 1 else EARLIEST
    return clamp_utc(datetime.combine(following, time(), tzinfo=zone))


def _parse_moment(text: str, zone: tzinfo) -> tuple[datetime, bool]:
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = date.fromisoformat(text)
            return clamp_utc(datetime.combine(day, time(), tzinfo=zone)), True
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise FilterError(f"not a date or time: {text[:40]!r} (use 2026-04-06 or 2026-04-06T10:00)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return clamp_utc(moment), False


def normalise(node: Filter) -> Filter:
    """The same filter with runs of NOT collapsed, nested AND/OR flattened, repeats merged."""
    if isinstance(node, Not):
        inner = normalise(node.part)
        return inner.part if isinstance(inner, Not) else Not(inner)
    if isinstance(node, All | Any_):
        kind = type(node)
        parts: list[Filter] = []
        for part in node.parts:
            part = normalise(part)
            for piece in part.parts if isinstance(part, kind) else (part,):
                if piece not in parts:
                    parts.append(piece)
        return parts[0] if len(parts) == 1 else kind(tuple(parts))
    return node


def depth(node: Filter) -> int:
    """Levels of AND, OR and NOT above the deepest comparison."""
    if isinstance(node, Not):
        return 1 + depth(node.part)
    if isinstance(node, All | Any_):
        return 1 + max(depth(part) for part in node.parts)
    return 0


def parse_filter(expr: str, zone: tzinfo) -> Filter | None:
    """Parse ``expr`` into a typed filter; empty means no filter.

    Raises ``FilterError`` with a short reason for anything outside the grammar.
    """
    if expr is None or not expr.strip():
        return None
    if len(expr) > MAX_FILTER_CHARS:
        raise FilterError(f"filter too long ({len(expr)} characters, at most {MAX_FILTER_CHARS})")
    tokens = _tokenise(expr)
    if not tokens:
        return None
    parsed = normalise(_Parser(tokens, zone).parse())
    if depth(parsed) > MAX_DEPTH:
        raise FilterError(f"nested too deeply (at most {MAX_DEPTH} levels)")
    return parsed
