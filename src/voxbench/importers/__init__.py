"""Importers of upstream benchmark formats (ConversationBench, AIEWF) into voxbench packages.

Upstream data lives in Python modules; it is read with ``ast`` and never executed.
"""

from voxbench.benchmarks.importers.aiewf import DEFAULT_VARIANT, aiewf_variants, import_aiewf
from voxbench.benchmarks.importers.conversation_bench import import_conversation_bench
from voxbench.benchmarks.importers.package import ImportedBenchmark
from voxbench.benchmarks.importers.pyliteral import UpstreamFormatError

__all__ = [
    "DEFAULT_VARIANT",
    "ImportedBenchmark",
    "UpstreamFormatError",
    "aiewf_variants",
    "import_aiewf",
    "import_conversation_bench",
]
