"""Anthropic Messages API as a judge.

``POST {base_url}/v1/messages`` with ``temperature: 0``. The reply's schema is given as the
``input_schema`` of one tool that the model is forced to call (``tool_choice`` of type
``tool``), so the judgment arrives as that tool call's ``input`` object. The system block
(instructions + knowledge base, identical for every turn of a run) is marked for prompt
caching, which makes per-turn judging cheap.
"""

from __future__ import annotations

import json
from typing import Any

from voxbench.core.errors import ProviderError
from voxbench.judging.llm.base import (
    JudgeClient,
    JudgeReply,
    JudgeRequest,
    check_response,
    json_body,
)

API_VERSION = "2023-06-01"
MAX_TOKENS = 2048


class AnthropicJudge(JudgeClient):
    """A judge behind the Anthropic Messages API."""

    provider = "anthropic"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        body = {
            "model": self.model,
            "max_tokens": MAX_TOKENS,
            "temperature": 0,
            "system": [
                {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [{"role": "user", "content": request.user}],
            "tools": [
                {
                    "name": request.schema_name,
                    "description": "Record your judgment of the turn under review.",
                    "input_schema": request.schema,
                }
            ],
            "tool_choice": {"type": "tool", "name": request.schema_name},
        }
        headers = {
            "x-api-key": self.api_key or "",
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
        }
        response = await self.post(f"{self.base_url}/v1/messages", body, headers)
        check_response(response, self.name)
        return self._reply(json_body(response, self.name), request.schema_name)

    def _reply(self, data: Any, tool_name: str) -> JudgeReply:
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise ProviderError(
                f"{self.name}: response has no content blocks", category="protocol", retryable=True
            )
        usage = data.get("usage") or {}
        counts = {
            "input_tokens": int(usage.get("input_tokens", 0) or 0),
            "output_tokens": int(usage.get("output_tokens", 0) or 0),
            "cache_read_input_tokens": int(usage.get("cache_read_input_tokens", 0) or 0),
        }
        for block in blocks:
            if block.get("type") == "tool_use" and block.get("name") == tool_name:
                return JudgeReply(text=json.dumps(block.get("input")), usage=counts)
        # No tool call: whatever text came back goes to validation (and is retried there).
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        return JudgeReply(text=text, usage=counts)
