"""The one way titjudge shows a fraction as a percentage: the terminal tables (`Metric.shown`,
`report.render`), the audit, `breakdown` and `compare`, the ablation's tables and a
fallback's share (`VariantOrigin.percent`) all call `percent`, so "88.72%" is one computation
wherever it is printed. In `records`, the lowest package every view may import."""

from __future__ import annotations

#: what a view shows for an undefined value unless it says otherwise (the audit, `compare`)
MISSING = "—"


def percent_of(fraction: float | None) -> float | None:
    """The fraction in percent (x 100); None stays None."""
    return None if fraction is None else 100.0 * fraction


def percent(
    fraction: float | None, digits: int = 1, *, missing: str = MISSING, sign: str = "%"
) -> str:
    """`0.8872` -> `88.7%` (`digits` decimals, then `sign`: "" for a bracketed interval or a
    table whose heading says %); `missing` where the value is undefined."""
    value = percent_of(fraction)
    return missing if value is None else f"{value:.{digits}f}{sign}"


__all__ = ["MISSING", "percent", "percent_of"]
