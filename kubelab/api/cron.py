"""Cron schedules as Kubernetes reads them: robfig/cron v3's standard parser and its Next
(github.com/robfig/cron/v3 parser.go, spec.go, constantdelay.go), which kube-apiserver's
CronJob validation (pkg/apis/batch/validation) and the CronJob controller
(pkg/controller/cronjob) both call.

- parse_standard: five fields (minute, hour, day of month, month, day of week), names for
  months and weekdays, `*` and `?`, ranges, lists and steps; the descriptors `@yearly`,
  `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly` and `@every <duration>`;
  an optional `TZ=<zone>` or `CRON_TZ=<zone>` prefix. Errors are robfig's words.
- SpecSchedule.next: the first time after t that matches, found as robfig does, field by field
  from the month down, in the schedule's time zone (Python's zoneinfo and the system's tzdata
  stand in for Go's time.LoadLocation). Day of month and day of week match together when either
  is `*`, otherwise either one suffices, as in Vixie cron.

Python's aware datetimes add wall-clock time; Go's Time.Add adds absolute time. `_add` goes
through UTC so an hour added across a DST change is an hour, as in Go.

kube-controller-manager's local time zone is kind's, UTC: a schedule without a zone (Go's
time.Local) runs in UTC here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["ZERO", "CronError", "Schedule", "load_location", "parse_duration", "parse_standard"]


class CronError(ValueError):
    """What robfig/cron's Parse returns as its error; str() is the message."""


class Schedule(Protocol):
    def next(self, t: datetime) -> datetime: ...


@dataclass(frozen=True)
class _Bounds:
    min: int
    max: int
    names: dict[str, int] | None = None


_SECONDS = _Bounds(0, 59)
_MINUTES = _Bounds(0, 59)
_HOURS = _Bounds(0, 23)
_DOM = _Bounds(1, 31)
_MONTHS = _Bounds(1, 12, {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))})
_DOW = _Bounds(0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))})

STAR_BIT = 1 << 63  # set when the field was "*" or "?"
ZERO = datetime.min.replace(tzinfo=UTC)  # Go's time.Time{}: what Next returns when nothing matches


def load_location(name: str) -> tzinfo:
    """time.LoadLocation: "" and "UTC" are UTC, "Local" is the process's zone (UTC here)."""
    if name in ("", "UTC", "Local"):
        return UTC
    try:
        if name.startswith("/") or ".." in name.split("/"):
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise CronError(f"unknown time zone {name}") from None


def _go_list(fields: list[str]) -> str:
    return "[" + " ".join(fields) + "]"  # fmt's %s of a []string


def parse_standard(spec: str) -> Schedule:
    """cron.ParseStandard: Minute | Hour | Dom | Month | Dow | Descriptor."""
    if not spec:
        raise CronError("empty spec string")
    loc: tzinfo = UTC
    if spec.startswith(("TZ=", "CRON_TZ=")):
        i = spec.find(" ")
        if i == -1:
            raise CronError(f"invalid timezone specification: {spec}")
        eq = spec.index("=")
        try:
            loc = load_location(spec[eq + 1:i])
        except CronError as err:
            raise CronError(f"provided bad location {spec[eq + 1:i]}: {err}") from None
        spec = spec[i:].strip()
    if spec.startswith("@"):
        return _parse_descriptor(spec, loc)
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: {_go_list(fields)}")
    return SpecSchedule(second=1 << _SECONDS.min,  # the standard parser's default second: 0
                        minute=_get_field(fields[0], _MINUTES), hour=_get_field(fields[1], _HOURS),
                        dom=_get_field(fields[2], _DOM), month=_get_field(fields[3], _MONTHS),
                        dow=_get_field(fields[4], _DOW), location=loc)


def _get_field(field: str, r: _Bounds) -> int:
    """getField: a comma-separated list of ranges."""
    bits = 0
    for expr in (e for e in field.split(",") if e):
        bits |= _get_range(expr, r)
    return bits


def _get_range(expr: str, r: _Bounds) -> int:
    """getRange: number | number "-" number [ "/" number ], or * and ?."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single_digit = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = r.min, r.max, STAR_BIT
    else:
        start = _parse_int_or_name(low_and_high[0], r.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _parse_int_or_name(low_and_high[1], r.names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single_digit:  # "N/step" means "N-max/step"
            end = r.max
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < r.min:
        raise CronError(f"beginning of range ({start}) below minimum ({r.min}): {expr}")
    if end > r.max:
        raise CronError(f"end of range ({end}) above maximum ({r.max}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _get_bits(start, end, step) | extra


def _parse_int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _must_parse_int(expr)


def _must_parse_int(expr: str) -> int:
    """mustParseInt: strconv.Atoi's error text, then no negatives."""
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": '
                        "invalid syntax")
    num = int(expr)
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _get_bits(lo: int, hi: int, step: int) -> int:
    return sum(1 << i for i in range(lo, hi + 1, step))


def _all(r: _Bounds) -> int:
    return _get_bits(r.min, r.max, 1) | STAR_BIT


def _parse_descriptor(descriptor: str, loc: tzinfo) -> Schedule:
    """parseDescriptor: the @-names, and @every <duration>."""
    zero = {"second": 1 << _SECONDS.min, "minute": 1 << _MINUTES.min, "location": loc}
    if descriptor in ("@yearly", "@annually"):
        return SpecSchedule(hour=1 << _HOURS.min, dom=1 << _DOM.min, month=1 << _MONTHS.min,
                            dow=_all(_DOW), **zero)  # type: ignore[arg-type]
    if descriptor == "@monthly":
        return SpecSchedule(hour=1 << _HOURS.min, dom=1 << _DOM.min, month=_all(_MONTHS),
                            dow=_all(_DOW), **zero)  # type: ignore[arg-type]
    if descriptor == "@weekly":
        return SpecSchedule(hour=1 << _HOURS.min, dom=_all(_DOM), month=_all(_MONTHS),
                            dow=1 << _DOW.min, **zero)  # type: ignore[arg-type]
    if descriptor in ("@daily", "@midnight"):
        return SpecSchedule(hour=1 << _HOURS.min, dom=_all(_DOM), month=_all(_MONTHS),
                            dow=_all(_DOW), **zero)  # type: ignore[arg-type]
    if descriptor == "@hourly":
        return SpecSchedule(hour=_all(_HOURS), dom=_all(_DOM), month=_all(_MONTHS),
                            dow=_all(_DOW), **zero)  # type: ignore[arg-type]
    every = "@every "
    if descriptor.startswith(every):
        try:
            duration = parse_duration(descriptor[len(every):])
        except CronError as err:
            raise CronError(f"failed to parse duration {descriptor}: {err}") from None
        return ConstantDelaySchedule.every(duration)
    raise CronError(f"unrecognized descriptor: {descriptor}")


_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
          "h": 3600.0}


_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


def parse_duration(text: str) -> float:
    """time.ParseDuration, in seconds: "1h30m", "90s", "1.5h"."""
    quoted = f'"{text}"'
    s, sign = text, 1.0
    if s[:1] in ("+", "-"):
        sign, s = (-1.0 if s[0] == "-" else 1.0), s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise CronError(f"time: invalid duration {quoted}")
    total, pos = 0.0, 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None or m.group(1) in ("", "."):
            raise CronError(f"time: invalid duration {quoted}")
        number, unit = m.group(1), m.group(2)
        if not unit:
            raise CronError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS:
            raise CronError(f'time: unknown unit "{unit}" in duration {quoted}')
        total += float(number) * _UNITS[unit]
        pos = m.end()
    return sign * total


def _add(t: datetime, seconds: float) -> datetime:
    """Go's Time.Add: absolute time, whatever the zone's offsets do meanwhile."""
    return (t.astimezone(UTC) + timedelta(seconds=seconds)).astimezone(t.tzinfo)


def _date(loc: tzinfo, year: int, month: int, day: int, hour: int = 0) -> datetime:
    """time.Date: out-of-range months and days roll over; a wall time that does not exist
    (a DST gap) is read with the offset before the gap and normalised through UTC."""
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    base = datetime(year, month, 1, tzinfo=loc) + timedelta(days=day - 1, hours=hour)
    return base.astimezone(UTC).astimezone(loc)


@dataclass(frozen=True)
class SpecSchedule:
    """SpecSchedule: one bit per allowed value of each field, and the zone to read them in."""
    second: int
    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    location: tzinfo = UTC

    def next(self, t: datetime) -> datetime:
        """Next: the first matching time strictly after t, or ZERO when nothing matches
        within five years (February 30th)."""
        if t == ZERO:
            return ZERO
        orig = t.tzinfo or UTC
        loc = self.location
        t = t.astimezone(loc)
        # Start at the earliest possible time: the upcoming second.
        t = _add(t.replace(microsecond=0), 1)
        added = False
        year_limit = t.year + 5
        while True:  # WRAP:
            if t.year > year_limit:
                return ZERO
            wrapped = False
            while not (1 << t.month) & self.month:
                if not added:
                    added, t = True, _date(loc, t.year, t.month, 1)
                t = _date(loc, t.year, t.month + 1, 1)  # AddDate(0, 1, 0) from the 1st
                if t.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self._day_matches(t):
                if not added:
                    added, t = True, _date(loc, t.year, t.month, t.day)
                t = _date(loc, t.year, t.month, t.day + 1)
                if t.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.hour) & self.hour:
                if not added:
                    added, t = True, t.replace(minute=0, second=0)
                t = _add(t, 3600)
                if t.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.minute) & self.minute:
                if not added:
                    added, t = True, t.replace(second=0)
                t = _add(t, 60)
                if t.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.second) & self.second:
                if not added:
                    added = True
                t = _add(t, 1)
                if t.second == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            return t.astimezone(orig)

    def _day_matches(self, t: datetime) -> bool:
        """dayMatches: with a * in either day field both must match, otherwise either."""
        dom_match = bool((1 << t.day) & self.dom)
        dow_match = bool((1 << (t.isoweekday() % 7)) & self.dow)
        if self.dom & STAR_BIT or self.dow & STAR_BIT:
            return dom_match and dow_match
        return dom_match or dow_match


@dataclass(frozen=True)
class ConstantDelaySchedule:
    """ConstantDelaySchedule (@every): whole seconds, at least one."""
    delay: int

    @classmethod
    def every(cls, duration: float) -> ConstantDelaySchedule:
        return cls(max(1, int(duration)))

    def next(self, t: datetime) -> datetime:
        return _add(t.replace(microsecond=0), self.delay)
