"""One error family: the CLI turns `InputError` into exit 2 and `SimulatorError` into exit 3."""

from __future__ import annotations


class QmlTestError(Exception):
    """Base class of every error qmltest raises on purpose."""


class InputError(QmlTestError):
    """Bad usage or bad input (file, field, data): the user can fix it."""


class SimulatorError(QmlTestError):
    """The simulator failed or refused a job (e.g. too large for the chosen method)."""


class Notice(UserWarning):
    """A line about long work before it starts (a 300,000-line circuit to parse); the CLI shows
    it on a terminal only, so pipelines stay quiet."""


class DataWarning(UserWarning):
    """Something a user should know about their input that does not stop the run (rows left out);
    the CLI prints each as one 'warning:' line on stderr."""
