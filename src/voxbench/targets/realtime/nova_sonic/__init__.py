"""Amazon Nova Sonic on Bedrock (a bidirectional HTTP/2 event stream)."""
