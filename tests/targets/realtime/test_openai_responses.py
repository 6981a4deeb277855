"""The OpenAI Realtime response state machine, fed exchanges the SDK's models accept."""

from __future__ import annotations

from typing import Any

from tests.conformance.sdk_models import check_openai_realtime_server
from tests.targets.realtime.conftest import replay
from voxbench.core.events import ToolCallRequested, TurnComplete
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession


def _call_events(response_id: str, status: str, arguments: str) -> list[dict[str, Any]]:
    call = {"id": "item_2", "type": "function_call", "status": "in_progress"}
    call |= {"call_id": "call_1", "name": "register", "arguments": ""}
    where = {"response_id": response_id, "output_index": 0}
    done_call = {**call, "status": "incomplete" if status != "completed" else "completed"}
    done_call["arguments"] = arguments
    response = {"id": response_id, "object": "realtime.response", "status": "in_progress"}
    return [
        {"type": "response.created", "event_id": "e1", "response": {**response, "output": []}},
        {"type": "response.output_item.added", "event_id": "e2", **where, "item": call},
        {"type": "response.function_call_arguments.done", "event_id": "e3", **where}
        | {"item_id": "item_2", "call_id": "call_1", "name": "register", "arguments": arguments},
        {"type": "response.done", "event_id": "e4"}
        | {"response": {**response, "status": status, "output": [done_call]}},
    ]


async def test_calls_of_a_cancelled_response_are_not_executed() -> None:
    session = OpenAIRealtimeSession("gpt-realtime")
    events = await replay(
        session,
        check_openai_realtime_server,
        _call_events("resp_1", "cancelled", '{"name": "Pri'),
    )
    assert not [e for e in events if isinstance(e, ToolCallRequested)]
    assert [e.status for e in events if isinstance(e, TurnComplete)] == ["cancelled"]


async def test_calls_of_an_incomplete_response_are_not_executed() -> None:
    session = OpenAIRealtimeSession("gpt-realtime")
    events = await replay(
        session, check_openai_realtime_server, _call_events("resp_1", "incomplete", '{"na')
    )
    assert not [e for e in events if isinstance(e, ToolCallRequested)]
    assert [e.status for e in events if isinstance(e, TurnComplete)] == ["incomplete"]


async def test_calls_of_a_completed_response_are_executed_once() -> None:
    session = OpenAIRealtimeSession("gpt-realtime")
    events = await replay(
        session, check_openai_realtime_server, _call_events("resp_1", "completed", '{"a": 1}')
    )
    calls = [e for e in events if isinstance(e, ToolCallRequested)]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [("call_1", "register", {"a": 1})]
    assert not [e for e in events if isinstance(e, TurnComplete)]  # it waits for the result
