"""Protocol-faithful fake provider servers for offline tests and dry runs.

Each fake listens on 127.0.0.1 (port 0 picks a free one), is an async context manager,
speaks its provider's documented wire protocol, and is driven by a ``Script`` (what the
model answers) plus optional latency (``ttfb_ms``, ``chunk_ms``) and ``Fault``s::

    async with FakeOpenAIServer(GoldenScript(benchmark), faults=["429@2"]) as server:
        config = RunConfig(benchmark="smoke", target="openai/gpt-4o-mini", base_url=server.url)

``voxbench fake-server KIND`` runs the same servers from the command line. ``FakeHubServer``
serves datasets the way the Hugging Face Hub does, for ``voxbench download`` (``HF_ENDPOINT``).
"""

from voxbench.testing.anthropic_http import FakeAnthropicServer
from voxbench.testing.bedrock_http import FakeBedrockServer
from voxbench.testing.gemini_http import FakeGeminiServer
from voxbench.testing.hf_hub import FakeHubServer, FakeRepo
from voxbench.testing.http_server import HTTPServer, Request, Responder, ScriptedServer
from voxbench.testing.openai_http import FakeOpenAIServer
from voxbench.testing.scripts import (
    Fault,
    FaultPlan,
    GoldenScript,
    ListScript,
    Reply,
    Script,
    ScriptCall,
    ScriptExhausted,
    ScriptMessage,
    ToolOutcome,
    load_script_file,
)

__all__ = [
    "FakeAnthropicServer",
    "FakeBedrockServer",
    "FakeGeminiServer",
    "FakeHubServer",
    "FakeOpenAIServer",
    "FakeRepo",
    "Fault",
    "FaultPlan",
    "GoldenScript",
    "HTTPServer",
    "ListScript",
    "Reply",
    "Request",
    "Responder",
    "Script",
    "ScriptCall",
    "ScriptExhausted",
    "ScriptMessage",
    "ScriptedServer",
    "ToolOutcome",
    "load_script_file",
]
