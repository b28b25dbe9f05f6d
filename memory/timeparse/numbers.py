"""Numbers as people write them in time phrases: 十二, 两, 二〇二六, 3, "a couple of"."""

from __future__ import annotations

__all__ = ["EN_COUNT", "NUM", "cn_number", "en_number", "normalise"]

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "a couple of": 2, "a couple": 2, "couple of": 2,
}  # fmt: skip

NUM = r"(?:\d{1,6}|[零〇一二两三四五六七八九十百千万]{1,8})"
"""A count in a Chinese phrase: Arabic (at most six digits) or Chinese numerals."""
EN_COUNT = (
    r"(?:\d{1,6}|a couple of|a couple|couple of|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty)"
)
"""A count in an English phrase."""

# Full-width ASCII (３月５日, １５：３０) read as ASCII; one character for one, so positions stay put.
_FULL_WIDTH = str.maketrans({chr(0xFF01 + i): chr(0x21 + i) for i in range(94)} | {"\u3000": " "})


def normalise(text: str) -> str:
    """``text`` with full-width digits, letters and punctuation as ASCII (same length)."""
    return text.translate(_FULL_WIDTH)


def cn_number(text: str) -> int | None:
    """Arabic or Chinese numerals (十二, 二十三, 两, 一百, 二〇二六) → int; None when not a number."""
    text = text.strip()
    if not text or len(text) > 12:
        return None
    if text.isdigit():
        try:
            return int(text)
        except ValueError:  # a digit character int() does not read (superscripts)
            return None
    if all(ch in _CN_DIGITS for ch in text):  # digit by digit: 二〇二六
        value = 0
        for ch in text:
            value = value * 10 + _CN_DIGITS[ch]
        return value
    total, section, current = 0, 0, 0
    for ch in text:
        if ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            section += (current or 1) * _CN_UNITS[ch]
            current = 0
        elif ch == "万":
            total += (section + current) * 10000
            section = current = 0
        else:
            return None
    return total + section + current


def en_number(text: str) -> int | None:
    """An English count (``3``, ``three``, ``a couple of``) → int."""
    raw = " ".join(text.lower().split())
    if raw.isdigit():
        return cn_number(raw)
    return _EN_NUMBERS.get(raw)
