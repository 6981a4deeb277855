"""Gemini Live (BidiGenerateContent websocket)."""
