"""Value sets: which numbers a unit takes, and which numbers an array (a dataset) holds.

A :class:`ValueSet` is a finite set of points, a closed interval [lo, hi] (bounds may be ±inf),
or both (a spike outside a slab). Unit types declare theirs (``Prior.value_set``: a discrete
type's ``values``, a real prior's ``support``); :func:`observed` reads one off data arrays, so
that the domain check (rbmlab.data.domain) can ask whether a dataset's values are values of a
model's visible units before any work.

:func:`observed` is exact where it matters: an array with at most ``MAX_POINTS`` distinct values
gets exactly those points; one with more gets the interval [min, max] flagged as ``observed``
(its values lie in it, but need not fill it). Its cost is a few vectorised passes over the data,
no sort of the whole array.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_POINTS = 8  # more distinct values than this: summarised by their range
_CANDIDATES = 4096  # values looked at per pass for new distinct ones


def _number(x: float, signed: bool) -> str:
    if math.isinf(x):
        return ("+" if signed and x > 0 else "") + ("inf" if x > 0 else "-inf")
    text = f"{x:+g}" if signed and x != 0 else f"{x:g}"
    return text


@dataclass(frozen=True)
class ValueSet:
    """``points`` ∪ [``interval``]; ``observed``: the interval only bounds values read from data
    (more than MAX_POINTS distinct ones), it is not claimed to be filled."""

    points: tuple[float, ...] = ()
    interval: tuple[float, float] | None = None
    observed: bool = False

    @classmethod
    def of_points(cls, *points: float) -> ValueSet:
        return cls(points=tuple(sorted({float(p) for p in points})))

    @classmethod
    def between(cls, lo: float, hi: float) -> ValueSet:
        return cls(interval=(float(lo), float(hi)))

    def __or__(self, other: ValueSet) -> ValueSet:
        """The union; two intervals become their hull (exact when they overlap, and either way
        contained in an interval exactly when both are: all that :meth:`contains` asks)."""
        a, b = self.interval, other.interval
        interval = a if b is None else b if a is None else (min(a[0], b[0]), max(a[1], b[1]))
        points = {*self.points, *other.points}
        if interval is not None:
            points = {p for p in points if not interval[0] <= p <= interval[1]}
        return ValueSet(tuple(sorted(points)), interval, self.observed or other.observed)

    @property
    def is_empty(self) -> bool:
        return not self.points and self.interval is None

    def holds(self, x: float) -> bool:
        """Is ``x`` one of the values?"""
        inside = self.interval is not None and self.interval[0] <= x <= self.interval[1]
        return inside or x in self.points

    def contains(self, other: ValueSet) -> bool:
        """Is every value of ``other`` a value of this set? An observed interval (data with many
        distinct values) is contained only in an interval of this set that covers it."""
        if not all(self.holds(p) for p in other.points):
            return False
        if other.interval is None:
            return True
        lo, hi = other.interval
        if lo == hi:
            return self.holds(lo)
        return self.interval is not None and self.interval[0] <= lo and hi <= self.interval[1]

    def map(self, scale: float, shift: float) -> ValueSet:
        """The image under x → scale·x + shift (scale ≠ 0)."""
        points = tuple(sorted(scale * p + shift for p in self.points))
        interval = None
        if self.interval is not None:
            lo, hi = (scale * v + shift for v in self.interval)
            interval = (min(lo, hi), max(lo, hi))
        return ValueSet(points, interval, self.observed)

    def __str__(self) -> str:
        """{0,1}, {-1,+1}, [0,1], values in [0,0.996] (observed), {-1} ∪ [0,1]."""
        numbers = [*self.points, *(self.interval or ())]
        signed = any(v < 0 for v in numbers)
        parts = []
        if self.points:
            parts.append("{" + ",".join(_number(p, signed) for p in self.points) + "}")
        if self.interval is not None:
            lo, hi = self.interval
            parts.append(f"[{_number(lo, signed)},{_number(hi, signed)}]")
        if not parts:
            return "no values"
        if any(math.isnan(v) for v in numbers):
            return "NaN values"
        text = " ∪ ".join(parts)
        return f"values in {text}" if self.observed else text


def observed(*arrays) -> ValueSet:
    """The values the host ``arrays`` hold, together: their distinct values when there are at
    most MAX_POINTS of them, else the observed interval [min, max]. Non-finite values (NaN,
    ±inf) are reported as points (NaN as such: it belongs to no unit's value set)."""
    parts = [np.ravel(np.asarray(a)) for a in arrays if a is not None and np.size(a)]
    if not parts:
        return ValueSet()
    known = np.unique(np.concatenate([p[:: max(1, p.size // _CANDIDATES)] for p in parts]))
    for p in parts:
        if known.size > MAX_POINTS:  # many values already: only their range is read
            break
        rest = p[~np.isin(p, known)]  # isin against at most MAX_POINTS values: a few passes
        while rest.size and known.size <= MAX_POINTS:
            new = np.unique(rest[:_CANDIDATES])
            if np.isnan(new).any():  # NaN equals nothing, so isin never removes it
                return ValueSet(points=(math.nan,), observed=True)
            known = np.union1d(known, new)
            if known.size <= MAX_POINTS:
                rest = rest[~np.isin(rest, new)]
    if known.size <= MAX_POINTS:
        if np.isnan(known).any():
            return ValueSet(points=(math.nan,), observed=True)
        return ValueSet.of_points(*known.tolist())
    lo, hi = min(float(p.min()) for p in parts), max(float(p.max()) for p in parts)
    if math.isnan(lo) or math.isnan(hi):
        return ValueSet(points=(math.nan,), observed=True)
    return ValueSet(interval=(lo, hi), observed=True)
