"""Ultravox realtime calls (REST call creation, then a websocket)."""
