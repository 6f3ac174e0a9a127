"""`-o jsonpath=...`: the template's text, or kubectl's error with the object it was given.

Follows k8s.io/cli-runtime pkg/genericclioptions/jsonpath_flags.go (ToPrinter: an empty template
is `template format specified but no template given`, one that does not parse is `error
parsing jsonpath <template>, <why>`) and pkg/printers/jsonpath.go (JSONPathPrinter.PrintObj):
a template that fails while it runs is

    error executing jsonpath "<template>": Error executing template: <why>. Printing more
    information for debugging the template:
        template was:
            <template>
        object given to jsonpath engine was:
            <the object, as Go's %#v prints it>

kubectl get allows missing keys (`--allow-missing-template-keys` defaults to true), so a field
that is not there prints nothing; what fails at run time is listed in kubelab.api.jsonpath.
The object is printed the way Go's fmt prints a decoded JSON value with %#v: maps with their
keys sorted, `map[string]interface {}{"kind":"Pod", ...}`, `[]interface {}{...}`, strings
quoted as strconv.Quote quotes them, whole numbers as int64.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.jsonpath import JSONPathError, JSONPathRuntimeError, execute, go_float, parse
from kubelab.kubectl.common import KubectlError

__all__ = ["go_quote", "go_syntax", "print_jsonpath"]

_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t",
            "\v": r"\v", "\\": r"\\", '"': r"\""}


def go_quote(text: str) -> str:
    """strconv.Quote: a double-quoted Go string literal, printable runes kept as they are."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def go_syntax(value: Any) -> str:
    """Go's %#v of a JSON value decoded into interface{} (unstructured content)."""
    if isinstance(value, dict):
        inner = ", ".join(f"{go_quote(str(k))}:{go_syntax(v)}" for k, v in sorted(value.items()))
        return "map[string]interface {}{" + inner + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_syntax(v) for v in value) + "}"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    return "interface {}(nil)"


def print_jsonpath(template: str, data: Any) -> str:
    """What `-o jsonpath=<template>` prints for data (an object, or kubectl's List)."""
    if not template:
        raise KubectlError("template format specified but no template given")
    try:
        parse(template)  # jsonpath_flags.go ToPrinter, before anything is printed
    except JSONPathError as err:
        raise KubectlError(f"error parsing jsonpath {template}, {err}") from None
    try:
        return execute(template, data)
    except JSONPathRuntimeError as err:
        raise KubectlError(
            f"error executing jsonpath {go_quote(template)}: Error executing template: {err}. "
            "Printing more information for debugging the template:\n"
            f"\ttemplate was:\n\t\t{template}\n"
            f"\tobject given to jsonpath engine was:\n\t\t{go_syntax(data)}") from None
    except JSONPathError as err:  # what client-go's parser refuses, found here as it runs
        raise KubectlError(f"error parsing jsonpath {template}, {err}") from None
