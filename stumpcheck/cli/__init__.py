"""The ``stumpcheck`` command line (docs/commands.md): the click group and its small commands in
:mod:`~stumpcheck.cli.commands`, one module per larger subcommand (``verify``, ``eval``, ``train``,
``corpus``/``grad``, ``fresh``/``sweep``, ``flow --certified``, ``region``, ``certify``, ``recheck``)
and the option parsing they share (:mod:`~stumpcheck.cli.options`). The console script
``stumpcheck`` is :func:`main`. Every input error exits with status 2 and one line on stderr.
"""

from stumpcheck.cli.commands import cli, main

__all__ = ["cli", "main"]
