"""The locale table: every language of the site, in one place.

Adding a language is one entry here plus ``data/translations/<code>/`` (and the interface texts
in it); every module and test reads the list from this table.
"""
from __future__ import annotations

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


LOCALES: tuple[Locale, ...] = (
    Locale("en", "en", "English"),
    Locale("ko", "ko", "한국어", date="{year}년 {month_number}월 {day}일"),
    # jieba segments Chinese at build time; the separator also splits on U+200B and CJK punctuation
    Locale("zh", "zh-Hans", "简体中文", search={"lang": ["en", "zh"], "separator": "[\\s\\u200b\\u3000\\-、。，．？！；]+"},
           date="{year}年{month_number}月{day}日"),
    Locale("fr", "fr", "Français", search={"lang": ["fr", "en"]}, decimal=",", group="\u202f",
           date="{day} {month} {year}", first_day="1er"),
)

BY_CODE = {loc.code: loc for loc in LOCALES}
LANGS: tuple[str, ...] = tuple(loc.code for loc in LOCALES)
DEFAULT_LANG = LANGS[0]
TRANSLATED_LANGS: tuple[str, ...] = LANGS[1:]


def locale(code: str) -> Locale:
    return BY_CODE[code]
