"""Errors of symmesh.symm_mem, shaped as the library's are (python/errors.cpp): str() is
'where: message (rank r)', with .message, .where and .rank."""

from ._symmesh import ScenarioError, UnsupportedError


def _make(cls, message, where, rank):
    text = f"{where}: {message}" + (f" (rank {rank})" if rank is not None else "")
    error = cls(text)
    error.message, error.where, error.rank = message, where, rank
    return error


def scenario_error(message, where, rank=None):
    """Bad input: a ScenarioError (also a ValueError)."""
    return _make(ScenarioError, message, where, rank)


def unsupported_error(message, where, rank=None):
    """Well-formed but not modelled: an UnsupportedError (also a ValueError)."""
    return _make(UnsupportedError, message, where, rank)
