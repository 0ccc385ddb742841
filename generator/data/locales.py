"""The locale table: every language of the site, in one place.

Adding a language is one entry here plus ``data/translations/<code>/`` (and the interface texts
in it); every module and test reads the list from this table, and nothing else in generator/,
docs/assets/ or templates/ names a language (tests/test_locales.py checks): the build order, the
stylesheet's rules per language and the number formats all follow from these entries.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Locale:
    code: str  # folder below the site root ("" for the default language) and translations folder
    html_lang: str  # the page's lang attribute
    name: str  # the language's own name, for the language menu
    search: dict = field(default_factory=dict)  # settings of the theme's search plugin
    decimal: str = "."  # number formatting
    group: str = ","
    date: str = "{day} {month} {year}"  # long date; {month} is the translated month name
    first_day: str = "{day}"  # how the first day of a month is written ("1er" in French)
    # How long its build takes against the others: the heaviest start first (see BUILD_ORDER).
    build_weight: int = 1
    # Fonts of the language's script, named after the theme's Latin ones and before the generic
    # family; without them the browser searches the system's fonts for every character the Latin
    # fonts miss, which doubled the layout time of those pages.
    fonts: tuple[str, ...] = ()
    keep_words: bool = False  # lines break between words, never inside one (CSS word-break: keep-all)
    # French typography: the space before ? ! : ; and inside « » never breaks (see typeset)
    tight_punctuation: bool = False


LOCALES: tuple[Locale, ...] = (
    # English writes and copies the JSON API as well
    Locale("en", "en", "English", build_weight=3),
    Locale("ko", "ko", "한국어", date="{year}년 {month_number}월 {day}일", keep_words=True,
           fonts=('"Apple SD Gothic Neo"', '"Malgun Gothic"', '"Noto Sans KR"', '"Noto Sans CJK KR"', '"Source Han Sans KR"',
                  "NanumGothic")),
    # jieba segments Chinese at build time (the longest build: its dictionary alone loads in about
    # 0.6 s); the separator also splits on U+200B and CJK punctuation
    Locale("zh", "zh-Hans", "简体中文", search={"lang": ["en", "zh"], "separator": "[\\s\\u200b\\u3000\\-、。，．？！；]+"},
           date="{year}年{month_number}月{day}日", build_weight=4,
           fonts=('"PingFang SC"', '"Hiragino Sans GB"', '"Microsoft YaHei"', '"Noto Sans SC"', '"Noto Sans CJK SC"',
                  '"Source Han Sans SC"', '"WenQuanYi Micro Hei"')),
    # French pages are longer than Korean ones
    Locale("fr", "fr", "Français", search={"lang": ["fr", "en"]}, decimal=",", group="\u202f",
           date="{day} {month} {year}", first_day="1er", build_weight=2, tight_punctuation=True),
)

BY_CODE = {loc.code: loc for loc in LOCALES}
LANGS: tuple[str, ...] = tuple(loc.code for loc in LOCALES)
DEFAULT_LANG = LANGS[0]
TRANSLATED_LANGS: tuple[str, ...] = LANGS[1:]


def locale(code: str) -> Locale:
    return BY_CODE[code]


_BEFORE_MARK = re.compile(r" (?=[?!;])| (?=:(?:\s|$|[\"”»)]))")


def typeset(text: str, code: str) -> str:
    """``text`` as the language sets it: with ``tight_punctuation``, the space before ? ! ; is a
    narrow no-break space, the one before a colon and those inside guillemets a no-break space,
    so that no mark starts a line alone. Translators type ordinary spaces."""
    loc = BY_CODE.get(code)
    if not loc or not loc.tight_punctuation or not text:
        return text
    text = _BEFORE_MARK.sub(lambda m: "\u00a0" if text[m.end()] == ":" else "\u202f", text)
    return text.replace("« ", "«\u00a0").replace(" »", "\u00a0»")


def build_order(codes) -> list[str]:
    """``codes`` with the heaviest builds first (ties in the table's order), so that the last to
    start is a short one."""
    rank = {loc.code: i for i, loc in enumerate(LOCALES)}
    return sorted(codes, key=lambda code: (-BY_CODE[code].build_weight, rank[code]) if code in BY_CODE else (0, len(rank)))
