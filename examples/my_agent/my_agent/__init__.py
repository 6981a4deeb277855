"""An example voxbench agent, outside voxbench: run it with ``--target my_agent.agent:Agent``."""
