"""Providers: one registry keyed by role, and the HTTP classification and backoff every client uses.

Import the submodules you need (``providers.registry``, ``providers.http``,
``providers.backoff``, ``providers.completion``); this package imports nothing at load so
``core`` and ``audio`` stay its only dependencies and ``import voxbench`` stays light.
"""
