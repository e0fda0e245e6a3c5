"""tpbal_text: the tools' text output within a terminal's width, folded as tpbal folds its own
(src/record/wrap.c): a '#' line or a "tool: " line longer than the width is cut at its last
space before it, each continuation indented under the line's text ('#' and the spaces after
it, plus 4; a tool line's by 4 spaces); any other line (a table row, CSV, JSON) stays whole,
and so does a word longer than the width. The width: the terminal's where stdout is one,
else 120 columns, or no folding at all with --wide (the whole lines, for grep)."""
import os
import re
import sys

DEFAULT_WIDTH = 120
_TOOL_LINE = re.compile(r"^tpbal(-[a-z]+)?: ")


def width(stream, wide):
    """The width stream's lines are folded at: its terminal's columns (at least 40), else
    DEFAULT_WIDTH, or 0 (whole lines) with wide."""
    try:
        if stream.isatty():
            return max(40, os.get_terminal_size(stream.fileno()).columns)
    except (OSError, ValueError, AttributeError):
        pass
    return 0 if wide else DEFAULT_WIDTH


def fold_line(line, w):
    """line (no newline) as the lines it folds into at width w (0: whole)."""
    tool = bool(_TOOL_LINE.match(line))
    if w <= 0 or len(line) <= w or not (line.startswith("#") or tool):
        return [line]
    if tool:
        ind, lead_char = 3, " "
    else:
        ind, lead_char = len(line) - 1 - len(line[1:].lstrip(" ")) + 4, "#"
    if ind + 20 > w:
        ind = 4
    out, at, lead = [], 0, 0
    while len(line) - at + lead > w:
        room = w - lead
        cut = at + room
        floor = at if lead else at + ind - 3
        while cut > floor and line[cut] != " ":
            cut -= 1
        if cut <= floor:  # one word longer than the room: whole, up to its end
            cut = at + room
            while cut < len(line) and line[cut] != " ":
                cut += 1
            if cut == len(line):
                break
        piece = line[at:cut].rstrip(" ")
        out.append((lead_char + " " * ind if lead else "") + piece)
        lead = ind + 1
        at = cut
        while at < len(line) and line[at] == " ":
            at += 1
    out.append((lead_char + " " * ind if lead else "") + line[at:])
    return out


def fold(text, w):
    """Every line of text folded at width w."""
    return "\n".join(p for line in text.split("\n") for p in fold_line(line, w))


def say(text, wide=False, stream=None):
    """print(text) on stream (stdout by default), folded at its width."""
    stream = stream or sys.stdout
    print(fold(text, width(stream, wide)), file=stream)
