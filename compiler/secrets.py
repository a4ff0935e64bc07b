"""Finding secrets in what a demonstration left: field hints, provider token
shapes, payment cards (Luhn), and high-entropy strings (detect-secrets style
thresholds), while ordinary values (names, amounts, dates, order numbers,
UUIDs, free text) stay as they are.

Masking replaces the whole secret with a fixed marker: no length, prefix or
hash of it survives.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

MARK = "[masked]"

SENSITIVE_AUTOCOMPLETE = frozenset(
    {"current-password", "new-password", "one-time-code", "cc-number", "cc-csc", "cc-exp"}
)
_HINT_WORDS = (
    "password", "passwd", "passcode", "passphrase", "pwd", "pin", "otp", "one time code",
    "one-time", "verification code", "security code", "2fa", "mfa", "totp", "token", "api key",
    "apikey", "api_key", "secret", "private key", "authorization", "auth code", "card number",
    "cardnumber", "cc number", "ccnum", "cvc", "cvv", "csc", "iban", "ssn", "social security",
)
_HINT_RE = re.compile(
    r"(?<![a-z])(" + "|".join(re.escape(w).replace(r"\ ", r"[\s_-]?") for w in _HINT_WORDS) + r")(?![a-z])",
    re.I,
)
CREDENTIAL_PARAM_NAMES = frozenset(
    {
        "token", "access_token", "id_token", "refresh_token", "code", "key", "api_key", "apikey",
        "secret", "client_secret", "password", "pass", "pwd", "session", "sessionid", "session_id",
        "sid", "auth", "authorization", "sig", "signature", "otp", "jwt", "assertion", "ticket",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token",
    }
)

_TOKEN_SHAPES = re.compile(
    "|".join(
        f"(?:{p})"
        for p in (
        r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY-----|$)",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",  # AWS access key id
        r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",  # GitHub
        r"\bgithub_pat_[A-Za-z0-9_]{40,}\b",
        r"\bglpat-[A-Za-z0-9_-]{20,}\b",  # GitLab
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b",  # Slack
        r"\bhttps://hooks\.slack\.com/services/[A-Za-z0-9/]+",
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b",  # Stripe
        r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b",  # OpenAI-style
        r"\bAIza[0-9A-Za-z_-]{35}\b",  # Google API key
        r"\bnpm_[A-Za-z0-9]{36}\b",
        r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}\b",  # SendGrid
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b",  # JWT
        r"\b[Bb](?:earer|EARER)\s+[A-Za-z0-9._~+/=-]{8,}",
        r"\b[Bb](?:asic|ASIC)\s+[A-Za-z0-9+/=]{12,}",
    )
    )
)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_CARD_CANDIDATE = re.compile(r"(?<![\d])(?:\d[ -]?){12,18}\d(?![\d])")
_WORDISH = re.compile(r"[A-Za-z0-9+/=_.~-]{16,}")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_B64 = re.compile(r"^[A-Za-z0-9+/=_-]+$")
# detect-secrets' default limits: base64 4.5 bits/char, hex 3.0 bits/char.
BASE64_LIMIT = 4.5
HEX_LIMIT = 3.0
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|6(?:011|5)|35|30[0-5]|36|38)")


def field_hint(target: Mapping[str, Any] | None) -> bool:
    """True when the field itself says it holds a secret."""
    if not target:
        return False
    attrs = target.get("attrs") or {}
    if str(attrs.get("type", "")).lower() == "password":
        return True
    if str(attrs.get("autocomplete", "")).lower() in SENSITIVE_AUTOCOMPLETE:
        return True
    words = " ".join(
        str(v)
        for v in (
            target.get("label"), target.get("name"), target.get("id"), target.get("test_id"),
            attrs.get("name"), attrs.get("placeholder"), attrs.get("aria-label"),
            attrs.get("autocomplete"), attrs.get("title"),
        )
        if v
    )
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", words)
    return bool(_HINT_RE.search(spaced))


def shannon_entropy(text: str) -> float:
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _is_card(candidate: str) -> bool:
    digits = re.sub(r"[ -]", "", candidate)
    return 13 <= len(digits) <= 19 and bool(_CARD_PREFIX.match(digits)) and luhn_ok(digits)


def _high_entropy(word: str) -> bool:
    if _UUID.match(word) or len(word) < 16:
        return False
    if _HEX.match(word):
        return len(word) >= 20 and shannon_entropy(word) > HEX_LIMIT
    if not _B64.match(word):
        return False
    classes = sum(bool(re.search(p, word)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    if classes < 2:
        return False
    if len(word) >= 20 and shannon_entropy(word) > BASE64_LIMIT - (0.5 if classes == 3 else 0):
        return True
    # Shorter random strings (passwords, keys) have less room for entropy.
    return classes == 3 and shannon_entropy(word) >= math.log2(len(word)) - 0.5


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds secrets, as sorted, merged (start, end) spans."""
    if len(text) < 12:  # shorter than any token, card or high-entropy word
        return []
    spans = [m.span() for m in _TOKEN_SHAPES.finditer(text)]
    spans.extend(m.span() for m in _CARD_CANDIDATE.finditer(text) if _is_card(m.group()))
    for m in _WORDISH.finditer(text):
        word = m.group().strip(".-_~")
        if _high_entropy(word):
            spans.append(m.span())
    spans.sort()
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def looks_secret(value: str) -> bool:
    """A typed value that is a secret by its shape alone."""
    if not value or not value.strip():
        return False
    if secret_spans(value):
        return True
    stripped = value.strip()
    # A password-like token: one word, mixed classes incl. a symbol, not a date/amount/email.
    if " " not in stripped and 8 <= len(stripped) <= 64 and "@" not in stripped:
        classes = sum(
            bool(re.search(p, stripped)) for p in ("[a-z]", "[A-Z]", "[0-9]", r"[^A-Za-z0-9]")
        )
        if classes == 4 and not re.match(r"^[A-Z]{2,5}-[\d-]+$", stripped):
            return True
    return False


def _hashed_cache(fn: Callable[[str], tuple[str, int]]) -> Callable[[str], tuple[str, int]]:
    """Memoize by a digest of the input: the same strings recur across a
    recording, but a cache keyed by the strings themselves would keep raw
    secrets in memory for the life of the process. The values are masked."""
    cache: dict[bytes, tuple[str, int]] = {}

    def cached(text: str) -> tuple[str, int]:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        hit = cache.get(key)
        if hit is None:
            if len(cache) >= 4096:
                cache.clear()
            hit = cache[key] = fn(text)
        return hit

    cached.__doc__, cached.__name__ = fn.__doc__, fn.__name__
    return cached


@_hashed_cache
def mask_text(text: str) -> tuple[str, int]:
    """``text`` with every secret replaced by MARK; returns (masked, count)."""
    spans = secret_spans(text)
    if not spans:
        return text, 0
    out, last = [], 0
    for s, e in spans:
        out.append(text[last:s])
        out.append(MARK)
        last = e
    out.append(text[last:])
    return "".join(out), len(spans)


@_hashed_cache
def mask_url(url: str) -> tuple[str, int]:
    """Mask credential-named query/fragment values and secret-shaped parts."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return mask_text(url)
    count = 0

    def clean_pairs(raw: str) -> str:
        nonlocal count
        if not raw or "=" not in raw:
            masked, n = mask_text(raw)
            count += n
            return masked
        pairs, changed = [], 0
        for k, v in parse_qsl(raw, keep_blank_values=True):
            if k.lower() in CREDENTIAL_PARAM_NAMES and v:
                v, n = MARK, 1
            else:
                v, n = mask_text(v)
            changed += n
            pairs.append(f"{quote(k, safe='')}={quote(v, safe='[]')}")
        count += changed
        return "&".join(pairs) if changed else raw

    path, n = mask_text(parts.path)
    count += n
    netloc = parts.netloc
    if "@" in netloc:  # user:password@host
        netloc, count = MARK + "@" + netloc.rsplit("@", 1)[1], count + 1
    masked = urlunsplit(
        (parts.scheme, netloc, path, clean_pairs(parts.query), clean_pairs(parts.fragment))
    )
    return masked, count
