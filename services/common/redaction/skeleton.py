"""Letters from other scripts that look like Latin ones, folded onto them.

Unicode TR #39 defines a text's skeleton: decompose it, replace every
character by the prototype it is confusable with, decompose again. Two
texts that look alike have one skeleton, so "Meera" written with a Cyrillic
capital Em is "Meera". This module applies that algorithm with compatibility
decomposition (NFKD, so full-width and mathematical letters fold too) and
with a table of its own: the letters of the Cyrillic, Greek, Armenian and
Cherokee scripts, and the Latin small capitals and variants, that are drawn
like a Latin letter in common fonts. It is the part of TR #39's data a name
or an identifier written in Latin letters can be faked with, not all of it:
digits and Latin letters map to themselves, so "I", "l" and "1" stay apart
(TR #39 merges them; a name is compared case-folded, where merging "I" into
"l" would lose "Imran").

The table names each letter by its Unicode name, so a reader can check an
entry without a font that draws it.
"""

from __future__ import annotations

import unicodedata

_LOOK_ALIKES: tuple[tuple[str, str], ...] = (
    ("CYRILLIC CAPITAL LETTER A", "A"),
    ("CYRILLIC CAPITAL LETTER VE", "B"),
    ("CYRILLIC CAPITAL LETTER ES", "C"),
    ("CYRILLIC CAPITAL LETTER IE", "E"),
    ("CYRILLIC CAPITAL LETTER EN", "H"),
    ("CYRILLIC CAPITAL LETTER SHHA", "H"),
    ("CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "I"),
    ("CYRILLIC LETTER PALOCHKA", "I"),
    ("CYRILLIC CAPITAL LETTER JE", "J"),
    ("CYRILLIC CAPITAL LETTER KA", "K"),
    ("CYRILLIC CAPITAL LETTER EM", "M"),
    ("CYRILLIC CAPITAL LETTER O", "O"),
    ("CYRILLIC CAPITAL LETTER ER", "P"),
    ("CYRILLIC CAPITAL LETTER QA", "Q"),
    ("CYRILLIC CAPITAL LETTER DZE", "S"),
    ("CYRILLIC CAPITAL LETTER TE", "T"),
    ("CYRILLIC CAPITAL LETTER HA", "X"),
    ("CYRILLIC CAPITAL LETTER U", "Y"),
    ("CYRILLIC CAPITAL LETTER STRAIGHT U", "Y"),
    ("CYRILLIC CAPITAL LETTER WE", "W"),
    ("CYRILLIC SMALL LETTER A", "a"),
    ("CYRILLIC SMALL LETTER ES", "c"),
    ("CYRILLIC SMALL LETTER KOMI DE", "d"),
    ("CYRILLIC SMALL LETTER IE", "e"),
    ("CYRILLIC SMALL LETTER SHHA", "h"),
    ("CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", "i"),
    ("CYRILLIC SMALL LETTER JE", "j"),
    ("CYRILLIC SMALL LETTER PALOCHKA", "l"),
    ("CYRILLIC SMALL LETTER O", "o"),
    ("CYRILLIC SMALL LETTER ER", "p"),
    ("CYRILLIC SMALL LETTER QA", "q"),
    ("CYRILLIC SMALL LETTER DZE", "s"),
    ("CYRILLIC SMALL LETTER OMEGA", "w"),
    ("CYRILLIC SMALL LETTER WE", "w"),
    ("CYRILLIC SMALL LETTER HA", "x"),
    ("CYRILLIC SMALL LETTER U", "y"),
    ("CYRILLIC SMALL LETTER STRAIGHT U", "y"),
    ("GREEK CAPITAL LETTER ALPHA", "A"),
    ("GREEK CAPITAL LETTER BETA", "B"),
    ("GREEK CAPITAL LETTER EPSILON", "E"),
    ("GREEK CAPITAL LETTER ZETA", "Z"),
    ("GREEK CAPITAL LETTER ETA", "H"),
    ("GREEK CAPITAL LETTER IOTA", "I"),
    ("GREEK CAPITAL LETTER KAPPA", "K"),
    ("GREEK CAPITAL LETTER MU", "M"),
    ("GREEK CAPITAL LETTER NU", "N"),
    ("GREEK CAPITAL LETTER OMICRON", "O"),
    ("GREEK CAPITAL LETTER RHO", "P"),
    ("GREEK CAPITAL LETTER TAU", "T"),
    ("GREEK CAPITAL LETTER UPSILON", "Y"),
    ("GREEK CAPITAL LETTER CHI", "X"),
    ("GREEK CAPITAL LETTER YOT", "J"),
    ("GREEK SMALL LETTER ALPHA", "a"),
    ("GREEK SMALL LETTER GAMMA", "y"),
    ("GREEK SMALL LETTER IOTA", "i"),
    ("GREEK SMALL LETTER KAPPA", "k"),
    ("GREEK SMALL LETTER NU", "v"),
    ("GREEK SMALL LETTER OMICRON", "o"),
    ("GREEK SMALL LETTER RHO", "p"),
    ("GREEK SMALL LETTER UPSILON", "u"),
    ("GREEK SMALL LETTER CHI", "x"),
    ("GREEK LUNATE SIGMA SYMBOL", "c"),
    ("GREEK LETTER YOT", "j"),
    ("ARMENIAN CAPITAL LETTER OH", "O"),
    ("ARMENIAN CAPITAL LETTER SEH", "U"),
    ("ARMENIAN CAPITAL LETTER TIWN", "S"),
    ("ARMENIAN SMALL LETTER AYB", "w"),
    ("ARMENIAN SMALL LETTER ZA", "q"),
    ("ARMENIAN SMALL LETTER HO", "h"),
    ("ARMENIAN SMALL LETTER VO", "n"),
    ("ARMENIAN SMALL LETTER SEH", "u"),
    ("ARMENIAN SMALL LETTER CO", "g"),
    ("ARMENIAN SMALL LETTER OH", "o"),
    ("CHEROKEE LETTER GO", "A"),
    ("CHEROKEE LETTER YV", "B"),
    ("CHEROKEE LETTER TLI", "C"),
    ("CHEROKEE LETTER A", "D"),
    ("CHEROKEE LETTER GV", "E"),
    ("CHEROKEE LETTER NAH", "G"),
    ("CHEROKEE LETTER MI", "H"),
    ("CHEROKEE LETTER GU", "J"),
    ("CHEROKEE LETTER TSO", "K"),
    ("CHEROKEE LETTER TLE", "L"),
    ("CHEROKEE LETTER LU", "M"),
    ("CHEROKEE LETTER TLV", "P"),
    ("CHEROKEE LETTER DU", "S"),
    ("CHEROKEE LETTER I", "T"),
    ("CHEROKEE LETTER DO", "V"),
    ("CHEROKEE LETTER LA", "W"),
    ("CHEROKEE LETTER NO", "Z"),
    ("LATIN SMALL LETTER DOTLESS I", "i"),
    ("LATIN SMALL LETTER IOTA", "i"),
    ("LATIN LETTER SMALL CAPITAL I", "i"),
    ("LATIN SMALL LETTER ALPHA", "a"),
    ("LATIN SMALL LETTER SCRIPT G", "g"),
    ("LATIN LETTER SMALL CAPITAL C", "c"),
    ("LATIN LETTER SMALL CAPITAL O", "o"),
    ("LATIN LETTER SMALL CAPITAL S", "s"),
    ("LATIN LETTER SMALL CAPITAL U", "u"),
    ("LATIN LETTER SMALL CAPITAL V", "v"),
    ("LATIN LETTER SMALL CAPITAL W", "w"),
    ("LATIN LETTER SMALL CAPITAL Z", "z"),
    ("LATIN LETTER SMALL CAPITAL Y", "y"),
    ("LATIN LETTER DENTAL CLICK", "l"),
)

PROTOTYPES: dict[int, str] = {ord(unicodedata.lookup(name)): latin for name, latin in _LOOK_ALIKES}


def skeleton(text: str) -> str:
    """The text as the Latin letters it is drawn with, decomposed (TR #39's skeleton)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).translate(PROTOTYPES))
