"""OpenAI and OpenAI-compatible chat completions as a judge.

``POST {base_url}/chat/completions`` with ``temperature: 0`` and
``response_format: {type: json_schema, json_schema: {name, schema, strict: true}}``.
Servers that reject structured output (many self-hosted ones) are retried once with
``{type: json_object}``; models that reject ``temperature`` (reasoning models) once
without it. Each adaptation is remembered for the rest of the run, so it costs one
failed call at most.
"""

from __future__ import annotations

import copy
from typing import Any

from voxbench.core.errors import ProviderError
from voxbench.judging.llm.base import (
    JudgeClient,
    JudgeReply,
    JudgeRequest,
    check_response,
    json_body,
)


class OpenAIChatJudge(JudgeClient):
    """A judge behind an OpenAI-style ``/chat/completions`` endpoint."""

    def __init__(self, model: str, *, provider: str = "openai", **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.provider = provider
        self.json_mode = "json_schema"
        self.send_temperature = True

    def _body(self, request: JudgeRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
        }
        if self.send_temperature:
            body["temperature"] = 0
        if self.json_mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "schema": copy.deepcopy(request.schema),
                    "strict": True,
                },
            }
        else:
            body["response_format"] = {"type": "json_object"}
        return body

    def _adapt(self, error: ProviderError) -> bool:
        """Drop what a server rejected; True when there is something left to try."""
        if error.category != "bad_request":
            return False
        text = str(error).lower()
        if self.json_mode == "json_schema" and ("response_format" in text or "schema" in text):
            self.json_mode = "json_object"
            return True
        if self.send_temperature and "temperature" in text:
            self.send_temperature = False
            return True
        return False

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        for _ in range(3):
            response = await self.post(
                f"{self.base_url}/chat/completions", self._body(request), headers
            )
            try:
                check_response(response, self.name)
            except ProviderError as exc:
                if self._adapt(exc):
                    continue
                raise
            return self._reply(json_body(response, self.name))
        raise ProviderError(
            f"{self.name}: the server rejected every request shape",
            category="bad_request",
            retryable=False,
        )

    def _reply(self, data: Any) -> JudgeReply:
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ProviderError(
                f"{self.name}: response has no choices[0].message",
                category="protocol",
                retryable=True,
            ) from exc
        if message.get("refusal"):
            raise ProviderError(
                f"{self.name}: the judge refused: {message['refusal']}",
                category="refused",
                retryable=True,
            )
        content = message.get("content")
        if isinstance(content, list):  # some servers return content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        usage = data.get("usage") or {}
        return JudgeReply(
            text=content or "",
            usage={
                "input_tokens": int(usage.get("prompt_tokens", 0) or 0),
                "output_tokens": int(usage.get("completion_tokens", 0) or 0),
            },
        )
