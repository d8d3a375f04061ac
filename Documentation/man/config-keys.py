#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""config-keys.py: mdgpud's configuration keys, read from the table under
"## Configuration" in Documentation/daemon.md, the one list of keys,
defaults and meanings (Documentation/man/man.mk).

  config-keys.py --keys DAEMON_MD           one key per line (the bash
                                            completion of mdgpud -o)
  config-keys.py --man DAEMON_MD <IN >OUT   IN with its line @CONFIG_KEYS@
                                            replaced by a Markdown
                                            definition list of the keys,
                                            which go-md2man renders

Exits 1, naming the file and line, when the heading, the table header or
a row is not what this script reads: a changed table breaks the build
instead of giving a page without keys.
"""
import re
import sys

HEADING = "## Configuration"
HEADER = ["key", "default", "meaning"]
PLACEHOLDER = "@CONFIG_KEYS@"
KEY_RE = re.compile(r"^[a-z][a-z0-9_]*$")
# Characters a man page is better without; others pass through (man-db
# runs preconv).
ASCII = {"\u2192": "->", "\u00d7": "x", "\u2026": "...", "\u2212": "-",
         "\u2013": "-", "\u2014": "-", "\u00b5": "u", "\u2264": "<=",
         "\u2265": ">=", "\u00a0": " "}


def die(msg):
    sys.stderr.write("config-keys.py: %s\n" % msg)
    sys.exit(1)


def cells(line):
    """The cells of a table row; '\\|' is a '|' inside a cell."""
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|")):
        return None
    parts = re.split(r"(?<!\\)\|", s[1:-1])
    return [p.strip().replace("\\|", "|") for p in parts]


def read_table(path):
    """[(key, default, meaning)] of the table under HEADING."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        die("%s: %s" % (path, e.strerror))
    try:
        start = lines.index(HEADING)
    except ValueError:
        die("%s: no heading '%s'" % (path, HEADING))
    i = start + 1
    while i < len(lines) and not lines[i].startswith("#"):
        if cells(lines[i]) == HEADER:
            break
        i += 1
    else:
        die("%s:%d: no table '| %s |' under '%s'"
            % (path, start + 1, " | ".join(HEADER), HEADING))
    if i + 1 >= len(lines) or not re.fullmatch(
            r"\|(\s*:?-+:?\s*\|){3}", lines[i + 1].replace(" ", "")):
        die("%s:%d: the table header is not followed by its '| --- |' line"
            % (path, i + 2))
    rows, seen = [], set()
    for n in range(i + 2, len(lines)):
        if not lines[n].startswith("|"):
            break
        c = cells(lines[n])
        if c is None or len(c) != 3:
            die("%s:%d: a row of %d cells, not 3"
                % (path, n + 1, len(c) if c else 0))
        if not KEY_RE.match(c[0]):
            die("%s:%d: '%s' is not a key name" % (path, n + 1, c[0]))
        if c[0] in seen:
            die("%s:%d: key '%s' twice" % (path, n + 1, c[0]))
        seen.add(c[0])
        rows.append(tuple(c))
    if not rows:
        die("%s:%d: the table under '%s' has no rows"
            % (path, i + 1, HEADING))
    return rows


def prose(text):
    """daemon.md's Markdown as a man page's: links become their text,
    '<' and '>' outside code spans are escaped (not HTML), references to
    sections above or below name daemon.md, a few characters become
    ASCII."""
    for u, a in ASCII.items():
        text = text.replace(u, a)
    out = []
    for k, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if k % 2 == 0:
            part = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", part)
            part = re.sub(r"\b(above|below), \"", "daemon.md, \"", part)
            part = part.replace("<", "\\<").replace(">", "\\>")
        out.append(part)
    return "".join(out)


def default(value):
    """A literal default in code font; '(daemon's)' and the like, which
    describe rather than name a value, in italics."""
    if "`" in value:
        return prose(value)
    m = re.fullmatch(r"\((.*)\)", value)
    if m:
        return "*%s*" % prose(m.group(1))
    return "`%s`" % value


def man(rows):
    out = []
    for key, dflt, meaning in rows:
        text = prose(meaning).rstrip()
        if text and not text.endswith("."):
            text += "."
        # One line per definition: go-md2man 2.0.2 escapes a leading '.'
        # or "'" only at the start of a definition.
        out.append("**%s**\n:   %s Default: %s.\n" % (key, text,
                                                      default(dflt)))
    return "\n".join(out)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("--keys", "--man"):
        sys.stderr.write(__doc__)
        return 2
    rows = read_table(argv[2])
    if argv[1] == "--keys":
        sys.stdout.write("".join(r[0] + "\n" for r in rows))
        return 0
    page = sys.stdin.read().split("\n")
    if page.count(PLACEHOLDER) != 1:
        die("stdin: %d lines '%s', want 1"
            % (page.count(PLACEHOLDER), PLACEHOLDER))
    k = page.index(PLACEHOLDER)
    sys.stdout.write("\n".join(page[:k] + [man(rows)] + page[k + 1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
