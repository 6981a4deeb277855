"""AWS Bedrock: the botocore client, failure classification, and ``Converse`` text completion.

An optional extra (``pip install 'voxbench[bedrock]'``): botocore signs requests (SigV4), so
it is imported only when a Bedrock client is made. The chat target
(``targets.bedrock``) and the text-completion client here share ``make_bedrock_client`` and
``classify_bedrock_error``. Text completion calls ``Converse`` (Amazon Bedrock API
Reference) on a worker thread with ``temperature: 0`` where the model takes it (not the
Claude models that refuse sampling parameters: ``providers.claude_models``); a reply schema
becomes one tool (``toolSpec.inputSchema.json``) the model is made to use (``toolChoice.tool``).
The system block is followed by a ``cachePoint`` for the families Bedrock caches prompts of
(Anthropic Claude, Amazon Nova: "Prompt caching" in the Bedrock user guide,
https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html); usage then reports
``cacheReadInputTokens`` and ``cacheWriteInputTokens`` beside ``inputTokens``, which counts
neither (``TokenUsage`` in the API reference and botocore's service model).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from voxbench.core.errors import ErrorCategory, PrerequisiteError, ProviderError
from voxbench.core.secrets import get_secret
from voxbench.providers.claude_models import accepts_sampling, claude_model, thinks_always
from voxbench.providers.completion import (
    Completion,
    CompletionRequest,
    TextCompletionClient,
    protocol_error,
)
from voxbench.providers.http import classify_status
from voxbench.providers.registry import Capability, EnvVars, Provider, Role, register

INSTALL_HINT = "Bedrock needs botocore: pip install 'voxbench[bedrock]'"
KEY_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
BASE_URL_VARS = ("BEDROCK_BASE_URL",)
THROTTLED = {"ThrottlingException", "throttlingException", "TooManyRequestsException"}
TRANSIENT = {
    "InternalServerException",
    "internalServerException",
    "ServiceUnavailableException",
    "serviceUnavailableException",
    "ModelStreamErrorException",
    "modelStreamErrorException",
    "ModelNotReadyException",
}
MAX_TOKENS = 2048
CACHE_POINT = {"cachePoint": {"type": "default"}}


def takes_cache_point(model_id: str) -> bool:
    """Whether Bedrock caches prompts for ``model_id`` (Claude 3.5 and later, Amazon Nova)."""
    claude = claude_model(model_id)
    if claude is not None:
        return claude.version is None or claude.version >= (3, 5)
    return "amazon.nova" in model_id.lower()


def usage_counts(usage: dict[str, Any]) -> dict[str, int]:
    """A Converse ``usage`` as the judges' token counts (cache reads and writes apart)."""
    return {
        "input_tokens": int(usage.get("inputTokens", 0) or 0),
        "output_tokens": int(usage.get("outputTokens", 0) or 0),
        "cache_read_input_tokens": int(usage.get("cacheReadInputTokens", 0) or 0),
        "cache_creation_input_tokens": int(usage.get("cacheWriteInputTokens", 0) or 0),
    }


def make_bedrock_client(
    *, purpose: str, base_url: str | None = None, options: dict[str, Any] | None = None
) -> Any:
    """A botocore ``bedrock-runtime`` client (one attempt per call: callers own retries)."""
    try:
        import botocore.config
        import botocore.session
    except ImportError:
        raise PrerequisiteError(INSTALL_HINT) from None
    options = options or {}
    session = botocore.session.get_session()
    access = get_secret("AWS_ACCESS_KEY_ID", required=False)
    secret = get_secret("AWS_SECRET_ACCESS_KEY", required=False)
    token = get_secret("AWS_SESSION_TOKEN", required=False)
    if not (access and secret) and session.get_credentials() is None:
        raise PrerequisiteError(
            f"no AWS credentials for {purpose}: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
        )
    region = (
        options.get("region")
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or "us-east-1"
    )
    config = botocore.config.Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        read_timeout=float(options.get("timeout", 60)),
        connect_timeout=10,
    )
    endpoint = base_url or next((os.environ[v] for v in BASE_URL_VARS if os.environ.get(v)), None)
    return session.create_client(
        "bedrock-runtime",
        region_name=region,
        endpoint_url=endpoint or None,
        aws_access_key_id=access or None,
        aws_secret_access_key=secret or None,
        aws_session_token=token or None,
        config=config,
    )


def classify_bedrock_error(exc: Exception) -> ProviderError:
    """A botocore failure in the one taxonomy (through ``classify_status`` where AWS answered)."""
    from botocore import exceptions as aws

    if isinstance(exc, aws.ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        message = error.get("Message", str(exc))
        meta = exc.response.get("ResponseMetadata", {})
        status = int(meta.get("HTTPStatusCode") or 0)
        if code in THROTTLED:
            status = 429
        elif code in TRANSIENT:
            status = 500 if status < 500 else status
        elif code in ("UnrecognizedClientException", "InvalidSignatureException"):
            status = 401
        headers = {k.lower(): v for k, v in (meta.get("HTTPHeaders") or {}).items()}
        return classify_status(
            status or 400,
            headers,
            f"{code}: {message}",
            provider="bedrock",
            key_vars=(*KEY_VARS, "AWS_PROFILE"),
        )
    from urllib3 import exceptions as transport  # botocore's HTTP layer

    if isinstance(exc, aws.ReadTimeoutError | aws.ConnectTimeoutError | transport.TimeoutError):
        return ProviderError(
            f"bedrock: timed out ({exc})", category=ErrorCategory.TIMEOUT, retryable=True
        )
    # A stream cut mid-response surfaces from urllib3 while the event stream is read.
    if isinstance(exc, aws.BotoCoreError | OSError | transport.HTTPError):
        return ProviderError(
            f"bedrock: connection failed ({exc})",
            category=ErrorCategory.CONNECTIVITY,
            retryable=True,
        )
    return ProviderError(
        f"bedrock: {type(exc).__name__}: {exc}", category=ErrorCategory.PROTOCOL, retryable=False
    )


class BedrockTextCompletion(TextCompletionClient):
    """Text completion behind Bedrock ``Converse``."""

    provider = "bedrock"

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        self.model = model
        self.base_url = base_url or ""
        self.name = f"bedrock/{model}"
        self._client = make_bedrock_client(purpose=self.name, base_url=base_url, options=options)

    async def complete(self, request: CompletionRequest) -> Completion:
        arguments: dict[str, Any] = {
            "modelId": self.model,
            "system": [{"text": request.system}],
            "messages": [{"role": "user", "content": [{"text": request.user}]}],
            "inferenceConfig": {"maxTokens": MAX_TOKENS},
        }
        if takes_cache_point(self.model):
            arguments["system"].append(CACHE_POINT)
        if request.temperature is not None and accepts_sampling(self.model):
            arguments["inferenceConfig"]["temperature"] = request.temperature
        if request.schema is not None:
            arguments["toolConfig"] = {
                "tools": [
                    {
                        "toolSpec": {
                            "name": request.schema_name,
                            "description": "Record your answer.",
                            "inputSchema": {"json": request.schema},
                        }
                    }
                ],
                "toolChoice": (
                    {"auto": {}}
                    if thinks_always(self.model)
                    else {"tool": {"name": request.schema_name}}
                ),
            }
        try:
            data = await asyncio.to_thread(self._client.converse, **arguments)
        except Exception as exc:
            raise classify_bedrock_error(exc) from exc
        return self._reply(data, request.schema_name if request.schema is not None else None)

    def _reply(self, data: Any, tool_name: str | None) -> Completion:
        try:
            blocks = data["output"]["message"]["content"]
        except (KeyError, TypeError) as exc:
            raise protocol_error(self.name, "response has no output.message.content") from exc
        counts = usage_counts(data.get("usage") or {})
        for block in blocks:
            use = block.get("toolUse") if isinstance(block, dict) else None
            if tool_name and use and use.get("name") == tool_name:
                return Completion(text=json.dumps(use.get("input")), usage=counts)
        text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
        return Completion(text=text, usage=counts)

    async def aclose(self) -> None:
        """Close botocore's connection pool."""
        await asyncio.to_thread(self._client.close)


def _text_completion(
    model: str, *, base_url: str | None = None, **options: Any
) -> BedrockTextCompletion:
    options.pop("transport", None)  # an httpx transport means nothing to botocore
    options.pop("api_key", None)
    options.pop("base_url_field", None)
    return BedrockTextCompletion(model, base_url=base_url, **options)


register(
    Provider(
        name="bedrock",
        description="AWS Bedrock Converse; needs the bedrock extra (boto3)",
        env=EnvVars(all_of=(*KEY_VARS, "AWS_REGION")),
        base_url_vars=BASE_URL_VARS,
        roles={Role.TEXT_COMPLETION: Capability(_text_completion)},
    )
)
