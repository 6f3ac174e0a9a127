"""The shell language of a simulated container: busybox ash's grammar, for a small subset.

Parses the text of `sh -c "..."` (or a line typed at an interactive `sh`) into a tree the
interpreter (programs.py) runs. The grammar is POSIX sh's (the Shell Command Language,
section 2.10), cut down to what the course's manifests use:

    list      := and_or ((';' | '&' | newline) and_or)*
    and_or    := pipeline (('&&' | '||') pipeline)*
    pipeline  := ['!'] command ('|' command)*
    command   := simple | 'while' list 'do' list 'done' | 'until' list 'do' list 'done'
               | 'if' list 'then' list ('elif' list 'then' list)* ['else' list] 'fi'
               | 'for' NAME ['in' word*] ';' 'do' list 'done'
    simple    := (NAME=word)* word* (redirection)*      redirection: > >> < 2> 2>> 2>&1 >&2

Words keep their quoting: '...' is literal, "..." expands $VAR, ${VAR}, $?, $$ and $(...)
inside, unquoted text expands them too, and an unquoted expansion is split into fields at
spaces, tabs and newlines (the default IFS; section 2.6.5: `for i in $(seq 1 3)` runs three
times). $(...) is command substitution: the script inside runs in a subshell and its output,
less trailing newlines, is the value. There is no globbing, no `...` and no arithmetic: a word
that uses them is a syntax error, in ash's words where ash has them. `&` runs nothing in the
background: it separates commands like `;`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["AndOr", "For", "If", "Loop", "Pipeline", "Redirect", "ShellSyntaxError", "Simple",
           "Word", "parse"]

RESERVED = {"while", "until", "do", "done", "if", "then", "elif", "else", "fi", "for", "in", "!"}
OPERATORS = ("&&", "||", ";;", ">>", "2>>", "2>&1", ">&2", "1>&2", "2>", ";", "&", "|", ">", "<",
             "(", ")", "\n")


class ShellSyntaxError(ValueError):
    """What ash prints for a script it cannot parse: `sh: syntax error: unexpected "done"`."""


@dataclass(frozen=True)
class Word:
    """One word: parts are ("lit", text), ("var", name) or ("cmd", script) (a $(...)); quoted
    says a part came from quotes."""

    parts: tuple[tuple[str, str, bool], ...]   # (kind, text, quoted)

    @property
    def literal(self) -> str | None:
        """The word's text when it is plain unquoted text (a reserved word can only be that)."""
        if len(self.parts) == 1 and self.parts[0][0] == "lit" and not self.parts[0][2]:
            return self.parts[0][1]
        return None


@dataclass(frozen=True)
class Redirect:
    fd: int          # 1 stdout, 2 stderr, 0 stdin
    op: str          # ">", ">>", "<", ">&" (dup: target is "1" or "2")
    target: Word | str


@dataclass
class Simple:
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Loop:
    condition: list[AndOr]
    body: list[AndOr]
    until: bool = False


@dataclass
class If:
    branches: list[tuple[list[AndOr], list[AndOr]]]
    otherwise: list[AndOr] | None = None


@dataclass
class For:
    name: str
    items: list[Word]
    body: list[AndOr]


Command = Simple | Loop | If | For


@dataclass
class Pipeline:
    commands: list[Command]
    negate: bool = False


@dataclass
class AndOr:
    first: Pipeline
    rest: list[tuple[str, Pipeline]] = field(default_factory=list)   # ("&&" | "||", pipeline)


# ---------------------------------------------------------------------- the lexer

def tokenize(text: str) -> list[Word | str]:
    """Words (Word) and operators (str), comments dropped."""
    tokens: list[Word | str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t":
            i += 1
            continue
        if ch == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        op = next((o for o in sorted(OPERATORS, key=len, reverse=True) if text.startswith(o, i)), None)
        if op is not None and not (op[0] in "12" and _in_word(tokens, text, i)):
            tokens.append(op)
            i += len(op)
            continue
        word, i = _word(text, i)
        tokens.append(word)
    return tokens


def _in_word(tokens: list[Word | str], text: str, i: int) -> bool:
    """`2>` is an operator only at the start of a word (`echo a2>f` writes `a2` to f in sh)."""
    return i > 0 and text[i - 1] not in " \t;&|\n"


def _word(text: str, i: int) -> tuple[Word, int]:
    parts: list[tuple[str, str, bool]] = []
    lit: list[str] = []
    quoted_lit = False

    def flush(quoted: bool) -> None:
        if lit:
            parts.append(("lit", "".join(lit), quoted))
            lit.clear()

    n = len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\n;&|<>()":
            break
        if ch == "'":
            flush(quoted_lit)
            end = text.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("sh: syntax error: unterminated quoted string")
            parts.append(("lit", text[i + 1:end], True))
            i = end + 1
            continue
        if ch == '"':
            flush(quoted_lit)
            i = _double_quoted(text, i + 1, parts)
            continue
        if ch == "\\" and i + 1 < n:
            flush(False)
            parts.append(("lit", text[i + 1], True))
            i += 2
            continue
        if ch == "$":
            kind, var, i = _dollar(text, i)
            if var is None:
                lit.append("$")
            else:
                flush(False)
                parts.append((kind, var, False))
            continue
        if ch == "`":
            raise ShellSyntaxError("sh: command substitution (`...`) is not simulated")
        lit.append(ch)
        i += 1
    flush(False)
    return Word(tuple(parts)), i


def _double_quoted(text: str, i: int, parts: list[tuple[str, str, bool]]) -> int:
    lit: list[str] = []
    n = len(text)
    while i < n and text[i] != '"':
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in '"\\$`':
            lit.append(text[i + 1])
            i += 2
            continue
        if ch == "$":
            kind, var, i = _dollar(text, i)
            if var is None:
                lit.append("$")
            else:
                if lit:
                    parts.append(("lit", "".join(lit), True))
                    lit.clear()
                parts.append((kind, var, True))
            continue
        lit.append(ch)
        i += 1
    if i >= n:
        raise ShellSyntaxError("sh: syntax error: unterminated quoted string")
    parts.append(("lit", "".join(lit), True))
    return i + 1


def _dollar(text: str, i: int) -> tuple[str, str | None, int]:
    """What a `$` at i starts ("var" and the name it names, or "cmd" and the script of a
    $(...)), and where the text goes on; None: a plain `$`."""
    rest = text[i + 1:i + 2]
    if rest == "{":
        end = text.find("}", i)
        if end < 0:
            raise ShellSyntaxError("sh: syntax error: bad substitution")
        name = text[i + 2:end]
        if not _is_name(name) and name not in ("?", "$", "#"):
            raise ShellSyntaxError("sh: syntax error: bad substitution")
        return "var", name, end + 1
    if rest == "(":
        if text[i + 2:i + 3] == "(":
            raise ShellSyntaxError("sh: arithmetic expansion $((...)) is not simulated")
        end = _closing_paren(text, i + 2)
        script = text[i + 2:end]
        parse(script)  # ash parses the substitution with the word: its errors are the word's
        return "cmd", script, end + 1
    if rest and rest in "?$#0123456789":
        return "var", rest, i + 2
    j = i + 1
    while j < len(text) and (text[j].isalnum() or text[j] == "_"):
        j += 1
    if j == i + 1 or text[i + 1].isdigit():
        return "var", None, i + 1
    return "var", text[i + 1:j], j


def _closing_paren(text: str, i: int) -> int:
    """Where the `)` that closes a $( opened before i is: quotes and nested $( ) skipped."""
    depth, n = 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            i = (end if end >= 0 else n) + 1
            continue
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ShellSyntaxError('sh: syntax error: unexpected end of file (expecting ")")')


def _is_name(s: str) -> bool:
    return bool(s) and (s[0].isalpha() or s[0] == "_") and all(c.isalnum() or c == "_" for c in s)


# ---------------------------------------------------------------------- the parser

def parse(text: str) -> list[AndOr]:
    """The script as a list of and-or lists; ShellSyntaxError in ash's words."""
    parser = _Parser(tokenize(text))
    script = parser.list(stop=())
    if parser.peek() is not None:
        raise parser.unexpected()
    return script


class _Parser:
    def __init__(self, tokens: list[Word | str]) -> None:
        self.tokens, self.pos = tokens, 0

    def peek(self) -> Word | str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def keyword(self) -> str | None:
        tok = self.peek()
        return tok.literal if isinstance(tok, Word) else None

    def unexpected(self) -> ShellSyntaxError:
        tok = self.peek()
        if tok is None:
            return ShellSyntaxError("sh: syntax error: unexpected end of file")
        shown = tok if isinstance(tok, str) else (tok.literal or "word")
        return ShellSyntaxError(f'sh: syntax error: unexpected "{shown.strip() or "newline"}"')

    def expect(self, word: str) -> None:
        self.skip_newlines()
        if self.keyword() != word:
            raise self.unexpected()
        self.pos += 1

    def skip_newlines(self) -> None:
        while self.peek() == "\n":
            self.pos += 1

    def list(self, stop: tuple[str, ...]) -> list[AndOr]:
        items: list[AndOr] = []
        while True:
            while self.peek() in (";", "&", "\n") and (items or self.peek() == "\n"):
                self.pos += 1
            tok = self.peek()
            if tok is None or self.keyword() in stop:
                return items
            if isinstance(tok, str) and tok not in ("!", "("):
                raise self.unexpected()
            items.append(self.and_or())
            if self.peek() not in (";", "&", "\n", None) and self.keyword() not in stop:
                raise self.unexpected()

    def and_or(self) -> AndOr:
        node = AndOr(self.pipeline())
        while self.peek() in ("&&", "||"):
            op = str(self.peek())
            self.pos += 1
            self.skip_newlines()
            node.rest.append((op, self.pipeline()))
        return node

    def pipeline(self) -> Pipeline:
        negate = self.keyword() == "!"
        if negate:
            self.pos += 1
        commands = [self.command()]
        while self.peek() == "|":
            self.pos += 1
            self.skip_newlines()
            commands.append(self.command())
        return Pipeline(commands, negate)

    def command(self) -> Command:
        word = self.keyword()
        if word in ("while", "until"):
            self.pos += 1
            condition = self.list(stop=("do",))
            self.expect("do")
            body = self.list(stop=("done",))
            self.expect("done")
            if not condition or not body:
                raise ShellSyntaxError('sh: syntax error: unexpected "done"')
            return Loop(condition, body, until=word == "until")
        if word == "if":
            self.pos += 1
            branches = []
            while True:
                condition = self.list(stop=("then",))
                self.expect("then")
                branches.append((condition, self.list(stop=("elif", "else", "fi"))))
                if self.keyword() != "elif":
                    break
                self.pos += 1
            otherwise = None
            if self.keyword() == "else":
                self.pos += 1
                otherwise = self.list(stop=("fi",))
            self.expect("fi")
            return If(branches, otherwise)
        if word == "for":
            self.pos += 1
            name = self.peek()
            if not isinstance(name, Word) or not _is_name(name.literal or ""):
                raise self.unexpected()
            self.pos += 1
            items: list[Word] = []
            if self.keyword() == "in":
                self.pos += 1
                while isinstance(self.peek(), Word):
                    items.append(self.tokens[self.pos])  # type: ignore[arg-type]
                    self.pos += 1
            if self.peek() in (";", "\n"):
                self.pos += 1
            self.expect("do")
            body = self.list(stop=("done",))
            self.expect("done")
            return For(name.literal or "", items, body)
        if word in RESERVED:
            raise self.unexpected()
        return self.simple()

    def simple(self) -> Simple:
        cmd = Simple()
        while True:
            tok = self.peek()
            if isinstance(tok, Word):
                lit = tok.parts[0][1] if tok.parts and tok.parts[0][0] == "lit" and \
                    not tok.parts[0][2] else ""
                name, eq, value = lit.partition("=")
                if not cmd.words and eq and _is_name(name):
                    cmd.assignments.append((name, Word((("lit", value, False), *tok.parts[1:]))))
                else:
                    cmd.words.append(tok)
                self.pos += 1
            elif tok in (">", ">>", "<", "2>", "2>>"):
                self.pos += 1
                target = self.peek()
                if not isinstance(target, Word):
                    raise self.unexpected()
                self.pos += 1
                op = str(tok)
                cmd.redirects.append(Redirect(2 if op.startswith("2") else 0 if op == "<" else 1,
                                              op.lstrip("2"), target))
            elif tok == "2>&1":
                self.pos += 1
                cmd.redirects.append(Redirect(2, ">&", "1"))
            elif tok in (">&2", "1>&2"):
                self.pos += 1
                cmd.redirects.append(Redirect(1, ">&", "2"))
            else:
                break
        if not cmd.words and not cmd.assignments and not cmd.redirects:
            raise self.unexpected()
        return cmd
