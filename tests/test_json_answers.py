"""The daemon's JSON answers (teachd/server/responses.py, orjson) are the
JSON Starlette's own encoder wrote: compact, UTF-8 as it is, integer keys as
strings — so no client sees a change but the time it took."""

from __future__ import annotations

import json
from typing import Any

import pytest

from teachd.server.responses import JSONResponse

ANSWERS: list[Any] = [
    {"slug": "taught-file-a-report", "instructions": "# Report\n\n## History\n\n- 2026-12-05 — success — run x\n",
     "versions": [{"version": 3, "note": "feedback: success (run run-1)", "success": 1, "failure": 0}],
     "outcomes": {"success": 2, "failure": 0}, "health": None, "enabled": True, "ratio": 0.25},
    [{"n": 1, "text": "naïve café ✓ ✗ 日本語 \u2028 \"quoted\" \\ back\tslash"}],
    {3: "an integer key", "nested": {"empty": [], "none": None, "big": 2**53}},
]


@pytest.mark.parametrize("answer", ANSWERS)
def test_an_answer_is_the_json_starlettes_encoder_wrote(answer: Any) -> None:
    body = JSONResponse(answer).body
    assert json.loads(body) == json.loads(json.dumps(answer))
    assert body == json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def test_what_orjson_refuses_is_written_by_pythons_encoder_and_a_stream_sorts_its_keys() -> None:
    """A skill's frontmatter may hold an integer past 64 bits: still an
    answer, not a 500. The run page's stream compares views as sorted text."""
    from teachd.server.responses import json_bytes

    big = {"metadata": {"id": 123456789012345678901234567890}, "name": "é"}
    assert JSONResponse(big).body == b'{"metadata":{"id":123456789012345678901234567890},"name":"\xc3\xa9"}'
    assert json_bytes({"b": 1, "a": {"d": 2, "c": 3}}, sort_keys=True) == b'{"a":{"c":3,"d":2},"b":1}'


def test_a_nan_is_null_whichever_encoder_writes_the_answer() -> None:
    """orjson writes a NaN (a frontmatter's ``.nan``) as null; beside an
    integer orjson refuses, Python's encoder writes it so too, not a 500."""
    from teachd.server.responses import json_bytes

    assert json_bytes({"a": float("nan")}) == b'{"a":null}'
    mixed = {"a": [float("nan"), float("-inf")], "b": 2**70}
    assert json_bytes(mixed) == b'{"a":[null,null],"b":1180591620717411303424}'
