"""Masking secrets in what leaves arbor (a hand-off, an export, a push): API keys, tokens,
private keys and passwords, in text, tool arguments and tool outputs.

The patterns come from detect-secrets (Yelp's scanner, the `redact` extra): its detectors
for named credentials (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, npm, PyPI, JWTs, basic
auth in URLs, …) and its keyword detector for `password = …`, `api_key: …` and the like.
Its own scan of a line is slow (1.5 ms) and runs its entropy detectors, which flag ordinary
words outside of code; so its detectors' regular expressions are gathered once and run in
one pass per text, and its keyword detector only on lines that name a secret. A few
patterns it lacks are added here: Anthropic and newer OpenAI keys, Google API keys, GitHub
fine-grained tokens, `Bearer` tokens, and whole PEM private key blocks (detect-secrets
flags only their first line).

Masking never changes the store: it works on the copies being written out. Each secret is
replaced by `[REDACTED:<kind>]`, and `Redactor.count` says how many were masked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from core.model.errors import ArborError

MASK = "[REDACTED:{}]"
_OWN = [
    ("Private Key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
                               r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)", re.S)),
    ("Anthropic Key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI Key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}")),
    ("Google API Key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("GitHub Token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}")),
    ("GitHub Token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}")),
    ("Bearer Token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/-]{16,}=*")),
]
# Not secrets, or found better by the patterns above.
_SKIPPED = {"Public IP (ipv4)", "Private Key", "Base64 High Entropy String",
            "Hex High Entropy String", "Secret Keyword", "GitHub Token"}
_KEYWORD_LINE = re.compile(r"(?i)pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey|"
                           r"credential|private[_-]?key|auth")


class RedactUnavailable(ArborError):
    """--redact asked for, and detect-secrets not installed."""


@lru_cache(maxsize=1)
def _detectors() -> tuple[list[tuple[str, re.Pattern]], Any]:
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.keyword import KeywordDetector
    except ImportError as error:
        raise RedactUnavailable(
            "masking secrets needs detect-secrets: pip install 'arbor[redact]'") from error
    patterns = list(_OWN)
    for kind, cls in get_mapping_from_secret_type_to_class().items():
        if kind in _SKIPPED or not issubclass(cls, RegexBasedDetector):
            continue
        patterns.extend((kind, pattern) for pattern in cls().denylist)
    return patterns, KeywordDetector()


def available() -> bool:
    try:
        _detectors()
    except RedactUnavailable:
        return False
    return True


@dataclass
class Redactor:
    """Masks secrets in strings and in JSON-like values; counts what it masked."""

    count: int = 0
    kinds: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._patterns, self._keyword = _detectors()

    def _mask(self, kind: str) -> str:
        self.count += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        return MASK.format(kind)

    def text(self, text: str) -> str:
        if not text or len(text) < 8:
            return text
        for kind, pattern in self._patterns:
            if pattern.search(text):
                text = pattern.sub(lambda match, kind=kind: self._whole_or_group(match, kind), text)
        if _KEYWORD_LINE.search(text):
            text = self._keywords(text)
        return text

    def _whole_or_group(self, match: re.Match, kind: str) -> str:
        """The secret in a match: its longest group when that is most of it (basic auth's
        password inside a URL), else the whole match."""
        groups = [(match.end(i) - match.start(i), i) for i in range(1, (match.re.groups or 0) + 1)
                  if match.start(i) >= 0]
        if groups:
            size, index = max(groups)
            if size >= 8 and size < len(match.group(0)) and not match.group(index).isalpha():
                start, end = match.start(index) - match.start(0), match.end(index) - match.start(0)
                whole = match.group(0)
                return whole[:start] + self._mask(kind) + whole[end:]
        return self._mask(kind)

    def _keywords(self, text: str) -> str:
        from detect_secrets.settings import default_settings

        lines = text.split("\n")
        changed = False
        with default_settings():
            for number, line in enumerate(lines):
                if not _KEYWORD_LINE.search(line) or len(line) > 4000:
                    continue
                found = set()
                for name in ("x.yaml", "x.py"):
                    found |= {s.secret_value for s in self._keyword.analyze_line(
                        filename=name, line=line, line_number=number)
                        if s.secret_value and not s.secret_value.startswith("[REDACTED")}
                for value in sorted(found, key=len, reverse=True):
                    if len(value) >= 4 and value in line:
                        line = line.replace(value, self._mask("Password"))
                        changed = True
                lines[number] = line
        return "\n".join(lines) if changed else text

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string in it masked (a new value; the given one is
        not changed)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            keep = _KEEP_KEYS if ("type" in value or "role" in value) else ()
            return {key: item if key in keep else self.value(item) for key, item in value.items()}
        return value

    def summary(self) -> str:
        if not self.count:
            return "no secrets found to mask"
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.kinds.items()))
        return f"{self.count} secret{'' if self.count == 1 else 's'} masked ({kinds})"


# Keys whose values are ids, types and images, never text to mask (an image's base64 data
# would otherwise look like a key to the patterns).
_KEEP_KEYS = frozenset({"type", "id", "toolCallId", "role", "mimeType", "data", "thinkingSignature",
                        "api", "provider", "model", "stopReason", "timestamp", "parentId"})
