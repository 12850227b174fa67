"""Text replies in JSON, read without trusting them: ``json.loads`` recurses once per nesting
level, so a reply of a few thousand brackets (well inside a 4,096-character Text space) would
raise ``RecursionError``; families check ``json_depth`` first and read deeper replies as malformed."""

from __future__ import annotations


def json_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` outside JSON strings (one pass, no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest
