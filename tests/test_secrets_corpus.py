"""The secret detector against a corpus of our own: 100% recall required,
at least 95% of benign values kept. Recall and precision are printed."""

from __future__ import annotations

import pytest

from compiler.secrets import MARK, field_hint, looks_secret, mask_text, mask_url
from compiler.skill import compile_recording
from tests.compiler_helpers import recording, target

# (kind, value) — made up for this test; none is a real credential.
SECRETS = [
    ("aws-access-key", "AKIAIOSFODNN7EXAMPLQ"),
    ("aws-access-key", "ASIAY34FZKBOKMUTVV7A"),
    ("aws-secret", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("github", "ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8"),
    ("github", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("github", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH0123"),
    ("gitlab", "glpat-xY9_kL2mN4pQ6rS8tU0v"),
    ("slack", "xoxb-2048-4096-abcdefghijklmnopqrstuvwx"),
    ("slack", "xoxp-1234567890-0987654321-ABCDEF"),
    ("slack-webhook", "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX"),
    ("stripe", "sk_live_51HqLyjWDarjtT1zdp7dc"),
    ("stripe", "rk_test_4eC39HqLyjWDarjtT1zdp7dc"),
    ("openai", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv"),
    ("google", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("npm", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("sendgrid", "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"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("jwt", "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ0ZWFjaGQifQ.c2lnbmF0dXJlLWJ5dGVzLWhlcmU"),
    ("pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\n-----END RSA PRIVATE KEY-----"),
    ("pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"),
    ("bearer", "Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("bearer", "Authorization: Bearer abc.def-ghi_jkl"),
    ("card", "4111 1111 1111 1111"),
    ("card", "5500-0000-0000-0004"),
    ("card", "378282246310005"),
    ("card", "6011111111111117"),
    ("hex-key", "3f786850e387550fdab836ed7e6dc881de23001b"),
    ("hex-key", "9b74c9897bac770ffc029102a200c5de"),
    ("entropy", "Zx8Qp2Lw9Rt4Vn6Ym1Kc3Hs7Jd5Fg0Bh"),
    ("entropy", "q9W2e8R7t6Y5u4I3o2P1aSdFgHjKl"),
    ("password", "Tr0ub4dor&3xyz"),
    ("password", "C0rrect-Horse!9"),
    ("password", "S3cure#Pass2026"),
    ("basic-auth", "Basic dXNlcjpwYXNzd29yZDEyMw=="),
]

BENIGN = [
    "Alice Johnson", "Dr. Maria García-López", "42.50", "1,299.00", "EUR 15", "2026-11-30",
    "30/11/2026", "Nov 30, 2026", "ORD-2026-000123", "INV-00042", "PO 77812",
    "3b241101-e2bb-4255-8caf-4dceb5f0a3c2", "f47ac10b-58cc-4372-a567-0e02b2c3d479",
    "alice@example.com", "+1 (555) 123-4567", "10 Downing Street, London SW1A 2AA",
    "Team lunch with the Berlin office", "Taxi from the airport to the hotel",
    "Quarterly planning offsite", "Please reimburse by Friday.", "Room 4B", "Q4-2026",
    "monthly-report", "https://example.com/reports?page=2&sort=date", "Expense Report",
    "Conference registration fee", "12", "Yes", "Hotel Adlon Kempinski", "Project Phoenix",
    "Supercalifragilisticexpialidocious", "reimbursement", "user_profile_settings",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
]


def _detected(value: str) -> bool:
    return looks_secret(value)


def test_corpus_recall_is_total_and_benign_values_are_kept(capsys) -> None:
    assert len(SECRETS) >= 30 and len({k for k, _ in SECRETS}) >= 10 and len(BENIGN) >= 30
    missed = [v for _, v in SECRETS if not _detected(v)]
    flagged = [v for v in BENIGN if _detected(v)]
    tp = len(SECRETS) - len(missed)
    recall = tp / len(SECRETS)
    precision = tp / (tp + len(flagged))
    kept = 1 - len(flagged) / len(BENIGN)
    with capsys.disabled():
        print(f"\nsecret corpus: {len(SECRETS)} secrets, {len(BENIGN)} benign; "
              f"recall {recall:.1%}, precision {precision:.1%}, benign kept {kept:.1%}")
    assert not missed, missed
    assert kept >= 0.95, flagged


@pytest.mark.parametrize("kind, value", SECRETS)
def test_masking_leaves_no_trace_of_the_secret(kind: str, value: str) -> None:
    text = f"before {value} after"
    masked, n = mask_text(text)
    if kind == "password":
        # A free-standing password is found by the shape of the whole value: as
        # a plain field's value it becomes a secret, and no compiled file holds it.
        assert looks_secret(value)
        rec = recording([{"type": "input", "target": target("Note", tag="input", role="textbox"),
                          "value": value}])
        compiled = compile_recording(rec)
        everything = compiled.body + "".join(compiled.references.values()) + compiled.description
        assert value not in everything and "{{secret:note}}" in compiled.body
        return
    assert n >= 1, kind
    assert MARK in masked
    core = value.split()[-1]
    for i in range(0, max(1, len(core) - 8), 4):
        assert core[i : i + 8] not in masked, (kind, masked)


def test_urls_mask_credential_params_fragments_and_userinfo() -> None:
    url = ("https://u:hunter2@app.example.com/cb?code=abc123&page=2&"
           "state=xyz#access_token=tok987&token_type=bearer")
    masked, n = mask_url(url)
    for piece in ("hunter2", "abc123", "tok987"):
        assert piece not in masked
    assert "page=2" in masked and "token_type=bearer" in masked
    assert n == 3
    assert mask_url("https://example.com/a?page=2&q=a+b") == ("https://example.com/a?page=2&q=a+b", 0)


@pytest.mark.parametrize(
    "target, expected",
    [
        ({"attrs": {"type": "password"}}, True),
        ({"attrs": {"autocomplete": "one-time-code"}}, True),
        ({"label": "API key"}, True),
        ({"attrs": {"name": "apiKey"}}, True),
        ({"label": "Verification code"}, True),
        ({"attrs": {"placeholder": "Card number"}}, True),
        ({"label": "CVC"}, True),
        ({"id": "pin"}, True),
        ({"label": "Amount"}, False),
        ({"label": "Spinner speed", "attrs": {"name": "spinning"}}, False),
        ({"label": "Description"}, False),
        ({"attrs": {"name": "tokenizer_mode"}}, False),
    ],
)
def test_field_hints(target, expected) -> None:
    assert field_hint(target) is expected
