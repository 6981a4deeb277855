"""The benchmark's tools served to an agent that owns its tools (over HTTP or MCP).

An agent that keeps its own tool loop (a Pipecat bot with MCP tools, a production bot calling
HTTP endpoints) calls the benchmark's stateful backend through a server here instead of
asking voxbench over its session. Every call is bridged into the run as the session's own
``ToolCallRequested``: the runner executes it against the run's backend, records it on the
turn and answers it, so it is judged exactly like an in-process call and the end state is
that backend's.
"""
