"""SVG -> PNG for ``covr render --out x.png``, with CairoSVG.

Chosen by measurement (docs/view.md): CairoSVG is a small pure-Python package over the system's
libcairo (already on Debian desktops and pulled in by chromium) and renders our drawings faithfully
(nested ``<svg>`` viewports, dashes, text) in tens of milliseconds; rasterizing through headless
Chromium would start a browser per file, and redrawing with matplotlib would be a second renderer
to keep in step with the SVG one.
"""

from __future__ import annotations


def svg_to_png(svg: str, *, scale: float = 2.0) -> bytes:
    """PNG bytes of an SVG document, ``scale`` pixels per SVG unit."""
    import cairosvg

    png = cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale)
    assert isinstance(png, bytes)
    return png
