"""Go's text/tabwriter and describe's PrefixWriter: how `kubectl describe` lines up its columns.

describe.go's tabbedString runs a tabwriter with minwidth 0, padding 2 and padchar ' ': text
is cut into cells at each tab, and the cells of one column are padded to the widest of them
over a *column block*, the consecutive lines that have a cell in that column. The last cell of
a line (the text after its last tab) is never padded and belongs to no column, so a line
without tabs ("Containers:") ends every block. flush() also ends them: DescribeEvents flushes
so that the event table lines up on its own.
"""

from __future__ import annotations

__all__ = ["PrefixWriter", "tabbed"]

PADDING = 2


def tabbed(lines: list[list[str]]) -> list[str]:
    """The lines (each a list of cells) padded as tabwriter.Writer.format pads them."""
    out: list[str] = []
    _format(lines, 0, len(lines), [], out)
    return out


def _format(lines: list[list[str]], line0: int, line1: int, widths: list[int], out: list[str]) -> None:
    column = len(widths)
    this = line0
    while this < line1:
        if column >= len(lines[this]) - 1:
            this += 1
            continue
        # lines[this] has a cell in this column: it starts a column block.
        _write_lines(lines, line0, this, widths, out)
        line0 = this
        width = 0
        while this < line1 and column < len(lines[this]) - 1:
            width = max(width, len(lines[this][column]) + PADDING)
            this += 1
        _format(lines, line0, this, [*widths, width], out)
        line0 = this
    _write_lines(lines, line0, line1, widths, out)


def _write_lines(lines: list[list[str]], line0: int, line1: int, widths: list[int],
                 out: list[str]) -> None:
    for cells in lines[line0:line1]:
        out.append("".join(cell.ljust(widths[j]) if j < len(widths) else cell
                           for j, cell in enumerate(cells)))


class PrefixWriter:
    """describe.go's prefixWriter over a tabwriter: write(level, text) indents by two
    spaces per level; text may hold several lines and tabs, as the Go format strings do."""

    def __init__(self) -> None:
        self._done: list[str] = []
        self._lines: list[list[str]] = []
        self._partial = ""

    def write(self, level: int, text: str) -> None:
        text = "  " * level + text
        *complete, self._partial = (self._partial + text).split("\n")
        self._lines += [line.split("\t") for line in complete]

    def write_line(self, text: str) -> None:
        self.write(0, text + "\n")

    def flush(self) -> None:
        self._done += tabbed(self._lines)
        self._lines = []

    def text(self) -> str:
        if self._partial:
            self.write(0, "\n")
        self.flush()
        return "\n".join(self._done)
