"""The FDB mini-corpus fixtures, shared with ``tests/fullduplex``."""

from tests.fullduplex.conftest import (  # noqa: F401 - fixtures are found by name
    _corpus_master,
    _outputs_master,
    mini_corpus,
    mini_outputs,
)
