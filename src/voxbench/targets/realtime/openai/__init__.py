"""The OpenAI Realtime protocol family: OpenAI, Azure OpenAI and xAI Grok voice."""
