"""Gemini ``generateContent`` as a judge.

``POST {base_url}/models/{model}:generateContent`` (the base URL ends in the API version,
``…/v1beta``) with the key in
``x-goog-api-key``, ``generationConfig.temperature: 0``, ``responseMimeType:
application/json`` and ``responseSchema``. Gemini's schema dialect is an OpenAPI subset:
no ``additionalProperties``, and ``nullable: true`` instead of a ``null`` type, so the JSON
schema is translated first.
"""

from __future__ import annotations

from typing import Any

from voxbench.core.errors import ProviderError
from voxbench.judging.llm.base import (
    JudgeClient,
    JudgeReply,
    JudgeRequest,
    check_response,
    json_body,
)

_KEEP = ("type", "properties", "required", "items", "enum", "description", "nullable")


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Translate a JSON schema into Gemini's ``responseSchema`` dialect."""
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        out["type"] = others[0] if others else "string"
        if "null" in kind:
            out["nullable"] = True
    elif kind is not None:
        out["type"] = kind
    for key in _KEEP:
        if key in ("type", "nullable") or key not in schema:
            continue
        value = schema[key]
        if key == "properties":
            out[key] = {name: gemini_schema(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = gemini_schema(value)
        elif key == "enum":
            out[key] = [v for v in value if v is not None]
        else:
            out[key] = value
    return out


class GeminiJudge(JudgeClient):
    """A judge behind the Gemini API."""

    provider = "gemini"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        body = {
            "systemInstruction": {"parts": [{"text": request.system}]},
            "contents": [{"role": "user", "parts": [{"text": request.user}]}],
            "generationConfig": {
                "temperature": 0,
                "responseMimeType": "application/json",
                "responseSchema": gemini_schema(request.schema),
            },
        }
        headers = {"x-goog-api-key": self.api_key or "", "Content-Type": "application/json"}
        url = f"{self.base_url}/models/{self.model}:generateContent"
        response = await self.post(url, body, headers)
        check_response(response, self.name)
        return self._reply(json_body(response, self.name))

    def _reply(self, data: Any) -> JudgeReply:
        try:
            candidate = data["candidates"][0]
        except (KeyError, IndexError, TypeError) as exc:
            reason = (data.get("promptFeedback") or {}) if isinstance(data, dict) else {}
            raise ProviderError(
                f"{self.name}: no candidates in the response {reason or ''}".strip(),
                category="protocol",
                retryable=True,
            ) from exc
        parts = (candidate.get("content") or {}).get("parts") or []
        text = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
        usage = data.get("usageMetadata") or {}
        return JudgeReply(
            text=text,
            usage={
                "input_tokens": int(usage.get("promptTokenCount", 0) or 0),
                "output_tokens": int(usage.get("candidatesTokenCount", 0) or 0),
            },
        )
