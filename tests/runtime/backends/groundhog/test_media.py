"""Media queries evaluated on each of the screens people read on (a laptop, a wide desktop, a
tablet and a phone upright): the screens a query holds on, as a string of four flags in
SCREENS' order."""

from __future__ import annotations

import pytest

from lynxc.runtime.backends.groundhog.media import EVERY_SCREEN, SCREENS, media_screens


def holds_on(query: str) -> str:
    mask = media_screens(query)
    return "".join("1" if mask >> bit & 1 else "." for bit in range(len(SCREENS)))


def test_the_screens_span_a_phone_to_a_wide_desktop() -> None:
    assert [screen.name for screen in SCREENS] == ["laptop", "desktop", "tablet", "phone"]
    assert min(s.width for s in SCREENS) < 400 and max(s.width for s in SCREENS) >= 1920
    assert EVERY_SCREEN == 0b1111


@pytest.mark.parametrize(
    ("query", "screens"),
    [
        ("", "1111"),
        ("all", "1111"),
        ("screen", "1111"),
        ("only screen", "1111"),
        ("print", "...."),
        ("speech", "...."),
        ("tv", "...."),
        ("not print", "1111"),
        ("print, screen", "1111"),
        ("(min-width:765px)", "111."),
        ("(max-width: 764px)", "...1"),
        ("screen and (min-width: 48em)", "111."),  # em: 16px in a media query
        ("only screen and (max-width:600px), print", "...1"),
        ("(min-width: 600px) and (max-width: 1000px)", "..1."),
        ("(min-width:600px)and (max-width:1000px)", "..1."),
        ("(width >= 765px)", "111."),
        ("(765px <= width)", "111."),
        ("(400px <= width <= 900px)", "..1."),
        ("(width: 1280px)", "1..."),
        ("(min-width: 1px)", "1111"),
        ("(orientation: portrait)", "..11"),
        ("(hover: hover)", "11.."),
        ("(hover)", "11.."),
        ("(pointer: coarse)", "..11"),
        ("(-webkit-min-device-pixel-ratio: 2)", "..11"),
        ("(min--moz-device-pixel-ratio: 2)", "..11"),
        ("(min-resolution: 192dpi)", "..11"),
        ("(max-resolution: 1dppx)", "11.."),
        ("(min-aspect-ratio: 16/9)", ".1.."),
        ("(prefers-color-scheme: light)", "1111"),
        ("(prefers-color-scheme: dark)", "...."),
        ("(prefers-reduced-motion: reduce)", "...."),
        ("(scripting: none)", "...."),
        ("(color)", "1111"),
        ("(grid)", "...."),
        ("not all and (monochrome)", "1111"),
        ("not screen and (min-width: 765px)", "...1"),
        ("(unknown-feature: 1)", "...."),
        ("(min-width: calc(100px + 1em))", "...."),
        ("(((((", "...."),
    ],
)
def test_a_query_holds_on_the_screens_a_browser_would_say(query: str, screens: str) -> None:
    assert holds_on(query) == screens
